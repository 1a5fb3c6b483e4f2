package ingest

// countryNames maps folded country names, and the names of cities that
// often stand in for them in physics affiliations ("ITEP, Moscow"), to ISO
// 3166-1 alpha-2 codes; the affiliation matcher keeps only institutions in
// the country an affiliation names.
var countryNames = map[string]string{
	"usa": "US", "u s a": "US", "united states": "US", "united states of america": "US", "us": "US",
	"uk": "GB", "u k": "GB", "united kingdom": "GB", "england": "GB", "scotland": "GB", "wales": "GB", "great britain": "GB",
	"germany": "DE", "france": "FR", "italy": "IT", "spain": "ES", "portugal": "PT", "switzerland": "CH",
	"netherlands": "NL", "the netherlands": "NL", "holland": "NL", "belgium": "BE", "austria": "AT",
	"denmark": "DK", "sweden": "SE", "norway": "NO", "finland": "FI", "iceland": "IS", "ireland": "IE",
	"poland": "PL", "czech republic": "CZ", "czechia": "CZ", "slovakia": "SK", "hungary": "HU", "romania": "RO",
	"bulgaria": "BG", "greece": "GR", "turkey": "TR", "russia": "RU", "russian federation": "RU", "ukraine": "UA",
	"belarus": "BY", "georgia": "GE", "armenia": "AM", "israel": "IL", "iran": "IR", "egypt": "EG",
	"india": "IN", "pakistan": "PK", "china": "CN", "p r china": "CN", "pr china": "CN", "japan": "JP",
	"korea": "KR", "south korea": "KR", "republic of korea": "KR", "taiwan": "TW", "hong kong": "HK",
	"singapore": "SG", "australia": "AU", "new zealand": "NZ", "canada": "CA", "mexico": "MX", "brazil": "BR",
	"argentina": "AR", "chile": "CL", "colombia": "CO", "south africa": "ZA", "slovenia": "SI", "croatia": "HR",
	"serbia": "RS", "estonia": "EE", "latvia": "LV", "lithuania": "LT", "luxembourg": "LU", "cyprus": "CY",
	"saudi arabia": "SA", "united arab emirates": "AE", "vietnam": "VN", "thailand": "TH", "malaysia": "MY",
	"indonesia": "ID", "bangladesh": "BD", "nigeria": "NG", "kenya": "KE",
	"moscow": "RU", "dubna": "RU", "protvino": "RU", "novosibirsk": "RU", "st petersburg": "RU", "chernogolovka": "RU",
	"kiev": "UA", "kyiv": "UA", "kharkov": "UA", "minsk": "BY", "tbilisi": "GE", "yerevan": "AM",
	"beijing": "CN", "shanghai": "CN", "hefei": "CN", "tokyo": "JP", "kyoto": "JP", "osaka": "JP", "tsukuba": "JP",
	"seoul": "KR", "taipei": "TW", "paris": "FR", "saclay": "FR", "orsay": "FR", "marseille": "FR", "lyon": "FR",
	"london": "GB", "oxford": "GB", "durham": "GB", "berlin": "DE", "hamburg": "DE", "munich": "DE", "muenchen": "DE",
	"heidelberg": "DE", "bonn": "DE", "rome": "IT", "roma": "IT", "milano": "IT", "milan": "IT", "trieste": "IT",
	"torino": "IT", "padova": "IT", "napoli": "IT", "madrid": "ES", "barcelona": "ES", "valencia": "ES",
	"zurich": "CH", "geneva": "CH", "bern": "CH", "amsterdam": "NL", "utrecht": "NL", "leiden": "NL",
	"vienna": "AT", "wien": "AT", "stockholm": "SE", "uppsala": "SE", "copenhagen": "DK", "helsinki": "FI",
	"warsaw": "PL", "krakow": "PL", "prague": "CZ", "budapest": "HU", "bucharest": "RO", "sofia": "BG",
	"athens": "GR", "jerusalem": "IL", "tel aviv": "IL", "rehovot": "IL", "haifa": "IL", "tehran": "IR",
	"bombay": "IN", "mumbai": "IN", "calcutta": "IN", "kolkata": "IN", "madras": "IN", "chennai": "IN",
	"bangalore": "IN", "sao paulo": "BR", "rio de janeiro": "BR", "buenos aires": "AR", "mexico city": "MX",
	"montreal": "CA", "toronto": "CA", "vancouver": "CA", "sydney": "AU", "melbourne": "AU",
}

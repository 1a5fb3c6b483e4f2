package ingest

// countryNames maps folded country names, as affiliation strings spell
// them, to ISO 3166-1 alpha-2 codes; the affiliation matcher uses a named
// country to choose among institutions of the same name.
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
}

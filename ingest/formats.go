package ingest

// Formats lists every format the import command reads.
func Formats() []Format {
	return []Format{Kaggle, Abs, Listing, Paperscape, OpenAlex, ROR, S2AG}
}

// FormatByName returns the format called name.
func FormatByName(name string) (Format, bool) {
	for _, f := range Formats() {
		if f.Name == name {
			return f, true
		}
	}
	return Format{}, false
}

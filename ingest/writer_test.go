package ingest

import "testing"

func TestClean(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"Quantum gravity", "Quantum gravity"},
		{"  Calculation of prompt\n  diphoton production ", "Calculation of prompt diphoton production"},
		{"tab\tseparated", "tab separated"},
		{"two  spaces", "two spaces"},
		{" ", ""},
		{"x\u00a0y", "x y"},
	}
	for _, tt := range tests {
		if got := clean(tt.in); got != tt.want {
			t.Errorf("clean(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

package ingest

import "testing"

func TestOAIDay(t *testing.T) {
	tests := []struct{ in, want string }{
		{"2026-12-01", "2026-12-01"},
		{"2026-12-01T10:58:49Z", "2026-12-01"},
		{" 2026-12-01\n", "2026-12-01"},
		{"2026-13-01", ""},
		{"01/12/2026", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := oaiDay(tt.in); got != tt.want {
			t.Errorf("oaiDay(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

package ingest

import (
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"120", 2 * time.Minute, true},
		{" 0 ", 0, true},
		{"Tue, 01 Dec 2026 11:00:30 GMT", 30 * time.Second, true},
		{"Tue, 01 Dec 2026 10:59:00 GMT", 0, true}, // already past
		{"", 0, false},
		{"-5", 0, false},
		{"soon", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseRetryAfter(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

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

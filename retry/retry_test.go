package retry

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestAfter(t *testing.T) {
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
		got, ok := After(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("After(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestSleepEndsWithItsContext: a wait longer than any test returns the
// context's error as soon as the context is cancelled.
func TestSleepEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep with a cancelled context = %v, want context.Canceled", err)
	}
	if err := Sleep(context.Background(), 0); err != nil {
		t.Errorf("Sleep(0) = %v, want nil", err)
	}
}

func TestSnippet(t *testing.T) {
	long := "a" + strings.Repeat("é", 150) // byte 200 is inside an é
	tests := []struct{ in, want string }{
		{"  {\"error\":\n  \"busy\"}\n", `{"error": "busy"}`},
		{long, "a" + strings.Repeat("é", 99) + "…"},
	}
	for _, tt := range tests {
		if got := Snippet([]byte(tt.in)); got != tt.want {
			t.Errorf("Snippet(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

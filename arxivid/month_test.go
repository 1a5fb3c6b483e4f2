package arxivid

import (
	"testing"
	"time"
)

func TestMonth(t *testing.T) {
	tests := []struct {
		id   string
		want time.Time
	}{
		{"hep-th/9112068", time.Date(1991, 12, 1, 0, 0, 0, 0, time.UTC)},
		{"math/0611800", time.Date(2006, 11, 1, 0, 0, 0, 0, time.UTC)},
		{"0704.0001", time.Date(2007, 4, 1, 0, 0, 0, 0, time.UTC)},
		{"2111.04949", time.Date(2021, 11, 1, 0, 0, 0, 0, time.UTC)},
		{"x", time.Time{}},
		{"hep-th/9113001", time.Time{}},
	}
	for _, tt := range tests {
		if got := Month(tt.id); !got.Equal(tt.want) {
			t.Errorf("Month(%q) = %v, want %v", tt.id, got, tt.want)
		}
	}
}

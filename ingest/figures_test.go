package ingest

import (
	"testing"
	"time"
)

func TestFiguresOf(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2020, 1, d, 0, 0, 0, 0, time.UTC) }
	tests := []struct {
		name   string
		papers []authoredPaper
		want   figures
		top    int64 // 0: none
	}{
		{name: "no papers", want: figures{}},
		{
			name: "positions counted only where the list is complete",
			papers: []authoredPaper{
				{id: 1, position: 1, authors: 1, complete: true},  // sole
				{id: 2, position: 1, authors: 3, complete: true},  // first
				{id: 3, position: 2, authors: 3, complete: true},  // middle
				{id: 4, position: 3, authors: 3, complete: true},  // last
				{id: 5, position: 1, authors: 3, complete: false}, // unknown
			},
			want: figures{papers: 5, known: 4, sole: 1, first: 1, middle: 1, last: 1},
		},
		{
			name: "h-index from citations; the most cited paper, newest among equals, undated last",
			papers: []authoredPaper{
				{id: 10, citations: 5, published: day(1)},
				{id: 11, citations: 5},
				{id: 12, citations: 5, published: day(2)},
				{id: 13, citations: 1, published: day(3)},
				{id: 14, citations: 0, published: day(4)},
			},
			want: figures{papers: 5, h: 3},
			top:  12,
		},
		{
			name: "among equals of one date, the lowest id",
			papers: []authoredPaper{
				{id: 21, citations: 2, published: day(1)},
				{id: 20, citations: 2, published: day(1)},
			},
			want: figures{papers: 2, h: 2},
			top:  20,
		},
		{
			name:   "uncited papers name no most cited paper",
			papers: []authoredPaper{{id: 30}, {id: 31}},
			want:   figures{papers: 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := figuresOf(tt.papers)
			top := int64(0)
			if got.top != nil {
				top = *got.top
			}
			got.top = nil
			if got != tt.want || top != tt.top {
				t.Errorf("figuresOf = %+v top %d, want %+v top %d", got, top, tt.want, tt.top)
			}
		})
	}
}

package ingest

import (
	"testing"
	"time"
)

// paperByID indexes the papers among recs by arXiv id.
func paperByID(t *testing.T, recs []Record) map[string]*Paper {
	t.Helper()
	m := make(map[string]*Paper, len(recs))
	for _, r := range recs {
		p, ok := r.(*Paper)
		if !ok {
			t.Fatalf("got a %T, want only *Paper", r)
		}
		m[p.ArxivID] = p
	}
	return m
}

// authorNames returns the names of as.
func authorNames(as []Author) []string {
	var ns []string
	for _, a := range as {
		ns = append(ns, a.Name)
	}
	return ns
}

func TestParseSubmitDate(t *testing.T) {
	// Every input is a Date line from the KDD Cup or arxiv-browse .abs
	// files or the Kaggle snapshot.
	tests := []struct {
		in   string
		want string // RFC 3339 in UTC, empty when unparseable
	}{
		{"Mon, 2 Apr 2007 19:18:42 GMT", "2007-04-02T19:18:42Z"},
		{"Sun, 1 Apr 2007 19:52:31 GMT   (17kb)", "2007-04-01T19:52:31Z"},
		{"Tue, 18 Apr 2023 17:52:23 GMT   (8808kb,D)", "2023-04-18T17:52:23Z"},
		{"Tue Dec 31 23:54:17 MET 1991 +0100   (37kb)", "1991-12-31T22:54:17Z"},
		{"Tue, 1 Dec 92 14:57:22 +0100   (9kb)", "1992-12-01T13:57:22Z"},
		{"Mon, 22 Feb 93 11:26:22 -0500   (25kb)", "1993-02-22T16:26:22Z"},
		{"Mon, 16 Sep 1996 11:41:37 CST   (16kb)", "1996-09-16T17:41:37Z"},
		{"Thu, 9 JAN 92 17:50 N   (11kb)", "1992-01-09T17:50:00Z"},
		{"Wed, 13 Sep 0 21:31:44 \"KST   (9kb)", "2000-09-13T12:31:44Z"},
		{"Fri, 24 Mar 1995 10:12:13 +0100 (MET)", "1995-03-24T09:12:13Z"},
		{"Thu, 2 Feb 1995 09:15:01 GMT+0100", "1995-02-02T08:15:01Z"},
		{"12-MAR-1993 10:11:12.34", "1993-03-12T10:11:12Z"},
		{"01/01/93 13:35:33 GMT+0100   (7kb)", ""},
		{"31 Feb 1995 10:00:00 GMT", ""},
		{"", ""},
	}
	for _, tt := range tests {
		got, ok := parseSubmitDate(tt.in)
		var s string
		if ok {
			s = got.UTC().Format(time.RFC3339)
		}
		if s != tt.want {
			t.Errorf("parseSubmitDate(%q) = %q, want %q", tt.in, s, tt.want)
		}
	}
}

func TestNewArxivPaper(t *testing.T) {
	tests := []struct {
		id, title  string
		want       Paper
		wantReason string
	}{
		{"0704.0001v2", "  Calculation of\n  prompt diphoton  ", Paper{ArxivID: "0704.0001", Version: 2, Title: "Calculation of prompt diphoton"}, ""},
		{"arXiv:hep-th/9201001", "Combinatorics", Paper{ArxivID: "hep-th/9201001", Title: "Combinatorics"}, ""},
		{"", "A title", Paper{}, "missing arXiv id"},
		{"xyz", "A title", Paper{}, `invalid arXiv id "xyz"`},
		{"hep-th/9201001", " \n", Paper{}, "missing title for hep-th/9201001"},
	}
	for _, tt := range tests {
		p, reason := newArxivPaper(tt.id, tt.title)
		if reason != tt.wantReason {
			t.Errorf("newArxivPaper(%q, %q) reason = %q, want %q", tt.id, tt.title, reason, tt.wantReason)
			continue
		}
		if p == nil {
			continue
		}
		if p.ArxivID != tt.want.ArxivID || p.Version != tt.want.Version || p.Title != tt.want.Title {
			t.Errorf("newArxivPaper(%q, %q) = %q v%d %q, want %q v%d %q", tt.id, tt.title,
				p.ArxivID, p.Version, p.Title, tt.want.ArxivID, tt.want.Version, tt.want.Title)
		}
	}
}

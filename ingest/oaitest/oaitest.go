// Package oaitest is a small OAI-PMH repository for tests: it serves
// ListRecords pages in arXiv's arXivRaw format, as oaipmh.arxiv.org does,
// through resumption tokens, and answers with the 503s and failures a
// test asks for.
package oaitest

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// SampleRecords turns the Kaggle snapshot lines at path (gzipped), arXiv's
// own metadata, which the Kaggle snapshot and arXivRaw carry alike, into
// the repository's records in arXivRaw XML.

// kaggleFull is a line of the Kaggle snapshot, all of it that arXivRaw has.
type kaggleFull struct {
	ID         string  `json:"id"`
	Submitter  string  `json:"submitter"`
	Authors    string  `json:"authors"`
	Title      string  `json:"title"`
	Comments   *string `json:"comments"`
	JournalRef *string `json:"journal-ref"`
	DOI        *string `json:"doi"`
	ReportNo   *string `json:"report-no"`
	Categories string  `json:"categories"`
	License    *string `json:"license"`
	Abstract   string  `json:"abstract"`
	Versions   []struct {
		Version string `json:"version"`
		Created string `json:"created"`
	} `json:"versions"`
	UpdateDate string `json:"update_date"`
}

// Record is one record the server lists.
type Record struct {
	ID, Datestamp, Set string
	Deleted            bool
	Metadata           string // the arXivRaw element
}

// Each record is dated by its last update, in the set of its primary
// category's archive.
func SampleRecords(t testing.TB, path string) []Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var recs []Record
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var k kaggleFull
		if err := json.Unmarshal(sc.Bytes(), &k); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, Record{ID: k.ID, Datestamp: k.UpdateDate, Set: SetOf(k.Categories), Metadata: arxivRaw(k)})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return recs
}

// SetOf returns arXiv's OAI-PMH set of a paper's primary category: the
// group for the groups without archives of their own, physics:ARCHIVE
// for the physics archives.
func SetOf(categories string) string {
	primary, _, _ := strings.Cut(categories, " ")
	archive, _, _ := strings.Cut(primary, ".")
	switch archive {
	case "cs", "math", "q-bio", "q-fin", "stat", "eess", "econ":
		return archive
	}
	return "physics:" + archive
}

// arxivRaw writes k as an arXivRaw element; fields the metadata lacks
// are left out, as arXiv does.
func arxivRaw(k kaggleFull) string {
	var b strings.Builder
	b.WriteString(`<arXivRaw xmlns="http://arxiv.org/OAI/arXivRaw/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ` +
		`xsi:schemaLocation="http://arxiv.org/OAI/arXivRaw/ http://arxiv.org/OAI/arXivRaw.xsd">`)
	field := func(name, value string) {
		fmt.Fprintf(&b, "<%s>%s</%s>\n", name, escape(value), name)
	}
	optional := func(name string, value *string) {
		if value != nil {
			field(name, *value)
		}
	}
	field("id", k.ID)
	field("submitter", k.Submitter)
	for _, v := range k.Versions {
		fmt.Fprintf(&b, `<version version="%s"><date>%s</date><size>10kb</size><source_type>D</source_type></version>`+"\n",
			escape(v.Version), escape(v.Created))
	}
	field("title", k.Title)
	field("authors", k.Authors)
	field("categories", k.Categories)
	optional("comments", k.Comments)
	optional("report-no", k.ReportNo)
	optional("journal-ref", k.JournalRef)
	optional("doi", k.DOI)
	optional("license", k.License)
	field("abstract", k.Abstract)
	b.WriteString("</arXivRaw>")
	return b.String()
}

func escape(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s)) //nolint:errcheck // a Builder does not fail
	return b.String()
}

// Server is the repository. Tokens are "set|from|until|offset", as
// arXiv's are opaque strings of its own. Set Busy, Fail and OnRequest
// before the requests they concern are sent.
type Server struct {
	*httptest.Server
	mu           sync.Mutex
	records      []Record
	pageSize     int
	responseDate string
	// Busy holds the Retry-After a 503 answers the request of that
	// number (1-based) with.
	Busy map[int]string
	// Fail answers the request of that number (1-based) instead of the
	// repository.
	Fail map[int]http.HandlerFunc
	// requests are the queries received, 503s included.
	requests []url.Values
	// OnRequest, when set, is called with the number of each request
	// before it is answered.
	OnRequest func(n int)
}

// NewServer starts a repository of records, pageSize to a page, that
// says it is 2026-11-28; it stops when the test ends.
func NewServer(t testing.TB, records []Record, pageSize int) *Server {
	s := &Server{records: records, pageSize: pageSize, responseDate: "2026-11-28T12:00:00Z", Busy: map[int]string{}, Fail: map[int]http.HandlerFunc{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// SetRecords replaces the records and the day the server says it is.
func (s *Server) SetRecords(records []Record, responseDate string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records, s.responseDate = records, responseDate
}

// Queries returns the queries received so far.
func (s *Server) Queries() []url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	q := r.URL.Query()
	s.requests = append(s.requests, q)
	n := len(s.requests)
	hook, retryAfter, busy, fail := s.OnRequest, s.Busy[n], s.Busy[n] != "", s.Fail[n]
	s.mu.Unlock()
	if hook != nil {
		hook(n)
	}
	if fail != nil {
		fail(w, r)
		return
	}
	if busy {
		w.Header().Set("Retry-After", retryAfter)
		http.Error(w, "too many requests, slow down", http.StatusServiceUnavailable)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	set, from, until, offset := q.Get("set"), q.Get("from"), q.Get("until"), 0
	if token := q.Get("resumptionToken"); token != "" {
		parts := strings.Split(token, "|")
		if len(parts) != 4 || len(q) != 2 {
			s.Error(w, r, "badResumptionToken", "bad token")
			return
		}
		set, from, until = parts[0], parts[1], parts[2]
		offset, _ = strconv.Atoi(parts[3])
	} else if q.Get("metadataPrefix") != "arXivRaw" {
		s.Error(w, r, "cannotDisseminateFormat", "unknown format")
		return
	}
	if q.Get("verb") != "ListRecords" {
		s.Error(w, r, "badVerb", "not a verb")
		return
	}
	var list []Record
	for _, rec := range s.records {
		inSet := set == "" || rec.Set == set || strings.HasPrefix(rec.Set, set+":")
		if inSet && (from == "" || rec.Datestamp >= from) && (until == "" || rec.Datestamp <= until) {
			list = append(list, rec)
		}
	}
	if len(list) == 0 {
		s.Error(w, r, "noRecordsMatch", "no records")
		return
	}
	end := min(offset+s.pageSize, len(list))
	var b strings.Builder
	b.WriteString(s.head(r) + "<ListRecords>\n")
	for _, rec := range list[offset:end] {
		status := ""
		if rec.Deleted {
			status = ` status="deleted"`
		}
		fmt.Fprintf(&b, "<record><header%s><identifier>oai:arXiv.org:%s</identifier><datestamp>%s</datestamp><setSpec>%s</setSpec></header>\n",
			status, rec.ID, rec.Datestamp, rec.Set)
		if !rec.Deleted {
			b.WriteString("<metadata>\n" + rec.Metadata + "\n</metadata>\n")
		}
		b.WriteString("</record>\n")
	}
	if end < len(list) {
		fmt.Fprintf(&b, `<resumptionToken cursor="%d" completeListSize="%d">%s|%s|%s|%d</resumptionToken>`+"\n",
			offset, len(list), set, from, until, end)
	} else if offset > 0 {
		fmt.Fprintf(&b, `<resumptionToken cursor="%d" completeListSize="%d"/>`+"\n", offset, len(list))
	}
	b.WriteString("</ListRecords>\n</OAI-PMH>\n")
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	fmt.Fprint(w, b.String())
}

func (s *Server) head(r *http.Request) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ` +
		`xsi:schemaLocation="http://www.openarchives.org/OAI/2.0/ http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd">
<responseDate>` + s.responseDate + `</responseDate>
<request verb="ListRecords">` + escape("http://"+r.Host+r.URL.Path) + "</request>\n"
}

// Error answers with an OAI-PMH error of code.
func (s *Server) Error(w http.ResponseWriter, r *http.Request, code, msg string) {
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	fmt.Fprintf(w, "%s<error code=\"%s\">%s</error>\n</OAI-PMH>\n", s.head(r), code, msg)
}

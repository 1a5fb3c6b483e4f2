package ingest_test

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

// The tests harvest from oaiServer, a small OAI-PMH repository that serves
// ListRecords pages in arXiv's arXivRaw format, as oaipmh.arxiv.org does:
// the records are those of kaggleSample (arXiv's own metadata, which the
// Kaggle snapshot and arXivRaw carry alike), turned into arXivRaw XML by
// arxivRaw below.
const kaggleSample = "../demo/data/kaggle-arxiv-sample.jsonl.gz"

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

// oaiFixture is one record the server lists.
type oaiFixture struct {
	id, datestamp, set string
	deleted            bool
	metadata           string // the arXivRaw element
}

// sampleRecords reads kaggleSample as the server's records, each dated by
// its last update, in the set of its primary category's archive.
func sampleRecords(t *testing.T) []oaiFixture {
	t.Helper()
	f, err := os.Open(kaggleSample)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var recs []oaiFixture
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var k kaggleFull
		if err := json.Unmarshal(sc.Bytes(), &k); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, oaiFixture{id: k.ID, datestamp: k.UpdateDate, set: setOf(k.Categories), metadata: arxivRaw(k)})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return recs
}

// setOf returns arXiv's OAI-PMH set of a paper's primary category: the
// group for the groups without archives of their own, physics:ARCHIVE
// for the physics archives.
func setOf(categories string) string {
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

// oaiServer is the repository. Tokens are "set|from|until|offset", as
// arXiv's are opaque strings of its own.
type oaiServer struct {
	*httptest.Server
	mu           sync.Mutex
	records      []oaiFixture
	pageSize     int
	responseDate string
	// busy holds the Retry-After a 503 answers the request of that
	// number (1-based) with.
	busy map[int]string
	// fail answers the request of that number (1-based) instead of the
	// repository.
	fail map[int]http.HandlerFunc
	// requests are the queries received, 503s included.
	requests []url.Values
	// onRequest, when set, is called with the number of each request
	// before it is answered.
	onRequest func(n int)
}

func newOAIServer(t *testing.T, records []oaiFixture, pageSize int) *oaiServer {
	s := &oaiServer{records: records, pageSize: pageSize, responseDate: "2026-11-28T12:00:00Z", busy: map[int]string{}, fail: map[int]http.HandlerFunc{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// setRecords replaces the records and the day the server says it is.
func (s *oaiServer) setRecords(records []oaiFixture, responseDate string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records, s.responseDate = records, responseDate
}

// queries returns the queries received so far.
func (s *oaiServer) queries() []url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

func (s *oaiServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	q := r.URL.Query()
	s.requests = append(s.requests, q)
	n := len(s.requests)
	hook, retryAfter, busy, fail := s.onRequest, s.busy[n], s.busy[n] != "", s.fail[n]
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
			s.oaiError(w, r, "badResumptionToken", "bad token")
			return
		}
		set, from, until = parts[0], parts[1], parts[2]
		offset, _ = strconv.Atoi(parts[3])
	} else if q.Get("metadataPrefix") != "arXivRaw" {
		s.oaiError(w, r, "cannotDisseminateFormat", "unknown format")
		return
	}
	if q.Get("verb") != "ListRecords" {
		s.oaiError(w, r, "badVerb", "not a verb")
		return
	}
	var list []oaiFixture
	for _, rec := range s.records {
		inSet := set == "" || rec.set == set || strings.HasPrefix(rec.set, set+":")
		if inSet && (from == "" || rec.datestamp >= from) && (until == "" || rec.datestamp <= until) {
			list = append(list, rec)
		}
	}
	if len(list) == 0 {
		s.oaiError(w, r, "noRecordsMatch", "no records")
		return
	}
	end := min(offset+s.pageSize, len(list))
	var b strings.Builder
	b.WriteString(s.head(r) + "<ListRecords>\n")
	for _, rec := range list[offset:end] {
		status := ""
		if rec.deleted {
			status = ` status="deleted"`
		}
		fmt.Fprintf(&b, "<record><header%s><identifier>oai:arXiv.org:%s</identifier><datestamp>%s</datestamp><setSpec>%s</setSpec></header>\n",
			status, rec.id, rec.datestamp, rec.set)
		if !rec.deleted {
			b.WriteString("<metadata>\n" + rec.metadata + "\n</metadata>\n")
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

func (s *oaiServer) head(r *http.Request) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ` +
		`xsi:schemaLocation="http://www.openarchives.org/OAI/2.0/ http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd">
<responseDate>` + s.responseDate + `</responseDate>
<request verb="ListRecords">` + escape("http://"+r.Host+r.URL.Path) + "</request>\n"
}

func (s *oaiServer) oaiError(w http.ResponseWriter, r *http.Request, code, msg string) {
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	fmt.Fprintf(w, "%s<error code=\"%s\">%s</error>\n</OAI-PMH>\n", s.head(r), code, msg)
}

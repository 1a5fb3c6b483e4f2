package enrich

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ingest"
)

func readTestdata(t *testing.T, name string) json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return json.RawMessage(b)
}

// fakeAPIs serves OpenAlex's /works and /authors and Semantic Scholar's
// /paper/batch and /author/batch from the objects in testdata, and
// records what it was asked.
type fakeAPIs struct {
	t          *testing.T
	work, auth json.RawMessage // OpenAlex W2741809807, A5023888391
	s2Paper    json.RawMessage // S2 223588394
	s2Merged   json.RawMessage // S2 author 119387837
	mu         sync.Mutex
	asked      []string // "works doi:…", "s2 paper ARXIV:…", …
	throttled  bool
}

func newFakeAPIs(t *testing.T) *fakeAPIs {
	return &fakeAPIs{
		t:        t,
		work:     readTestdata(t, "openalex-work-W2741809807.json"),
		auth:     readTestdata(t, "openalex-author-A5023888391.json"),
		s2Paper:  readTestdata(t, "s2-paper-223588394.json"),
		s2Merged: readTestdata(t, "s2-author-119387837.json"),
	}
}

// malformedWork is the real work with a date OpenAlex never prints, filed
// under the arXiv DOI of 1802.04375 so that the run keeps it.
func (f *fakeAPIs) malformedWork() json.RawMessage {
	var w map[string]any
	if err := json.Unmarshal(f.work, &w); err != nil {
		f.t.Fatal(err)
	}
	w["id"] = "https://openalex.org/W1"
	w["doi"] = "https://doi.org/10.48550/arxiv.1802.04375"
	w["publication_date"] = "13 February 2018"
	b, _ := json.Marshal(w)
	return b
}

func (f *fakeAPIs) log(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, s)
}

func (f *fakeAPIs) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.asked
	f.asked = nil
	return a
}

func (f *fakeAPIs) openAlex(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("mailto") != "lead@example.org" || q.Get("per_page") != "100" {
		f.t.Errorf("OpenAlex asked %s, want mailto=lead@example.org and per_page=100", r.URL)
	}
	filter, cursor := q.Get("filter"), q.Get("cursor")
	f.log(strings.TrimPrefix(r.URL.Path, "/") + " " + filter + " cursor=" + cursor)
	if !f.throttled {
		f.throttled = true
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	type page struct {
		Meta struct {
			NextCursor *string `json:"next_cursor"`
		} `json:"meta"`
		Results []json.RawMessage `json:"results"`
	}
	p := page{Results: []json.RawMessage{}}
	next := func(c string) { p.Meta.NextCursor = &c }
	switch {
	case r.URL.Path == "/works" && strings.Contains(filter, "10.7717/peerj.4375"):
		switch cursor {
		case "*":
			p.Results = append(p.Results, f.work)
			next("c2")
		case "c2":
			p.Results = append(p.Results, f.malformedWork())
			next("c3")
		}
	case r.URL.Path == "/authors" && slices.Contains(strings.Split(strings.TrimPrefix(filter, "openalex:"), "|"), "A5023888391"):
		p.Results = append(p.Results, f.auth)
	}
	json.NewEncoder(w).Encode(p)
}

func (f *fakeAPIs) s2(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.Header.Get("x-api-key") != "s2-key" {
		f.t.Errorf("S2 asked %s %s with key %q, want POST with key s2-key", r.Method, r.URL, r.Header.Get("x-api-key"))
	}
	var body struct{ IDs []string }
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		f.t.Errorf("S2 body: %v", err)
	}
	kind := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/"), "/batch")
	f.log("s2 " + kind + " " + strings.Join(body.IDs, "|") + " fields=" + r.URL.Query().Get("fields"))
	out := make([]json.RawMessage, len(body.IDs))
	for i, id := range body.IDs {
		out[i] = json.RawMessage("null")
		switch {
		case kind == "paper" && id == "ARXIV:physics/0602001":
			out[i] = f.s2Paper
		case kind == "author" && id == "2096896523":
			// Answered with the profile it was merged into, which no
			// paper of the archive lists.
			out[i] = f.s2Merged
		}
	}
	json.NewEncoder(w).Encode(out)
}

// seedArchive imports the archive's papers before enrichment: 0704.0001
// as Kaggle has it, and the two made-up papers that carry the DOIs (and
// bylines) of the real OpenAlex work W2741809807 and the real Semantic
// Scholar paper 223588394.
func seedArchive(t *testing.T, bdb *bun.DB) {
	t.Helper()
	paths := []string{filepath.Join("testdata", "kaggle-0704.0001.jsonl"), filepath.Join("testdata", "made-up.jsonl")}
	sum, err := ingest.Import(context.Background(), bdb, ingest.Options{Format: ingest.Kaggle, Paths: paths})
	if err != nil || !sum.OK() || sum.Read != 3 {
		t.Fatalf("seed: %+v, %v", sum, err)
	}
}

type paperRow struct {
	ArxivID      string `bun:"arxiv_id"`
	OpenAlexID   string `bun:"openalex_id"`
	S2ID         string `bun:"s2_id"`
	CitedByCount *int   `bun:"cited_by_count"`
}

func papers(t *testing.T, bdb *bun.DB) map[string]paperRow {
	t.Helper()
	var rows []paperRow
	if err := bdb.NewSelect().Table("papers").Column("arxiv_id", "openalex_id", "s2_id", "cited_by_count").
		Scan(context.Background(), &rows); err != nil {
		t.Fatal(err)
	}
	m := map[string]paperRow{}
	for _, r := range rows {
		m[r.ArxivID] = r
	}
	return m
}

func researcher(t *testing.T, bdb *bun.DB, where string, args ...any) []db.Researcher {
	t.Helper()
	var rs []db.Researcher
	if err := bdb.NewSelect().Model(&rs).Where(where, args...).Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	return rs
}

func intp(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestEnrich runs the command's whole path against both fake APIs: a
// first run that meets a 429 and is cut by its request cap, a second that
// goes on where the first stopped, and a third with nothing left to ask.
func TestEnrich(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		ctx := context.Background()
		seedArchive(t, bdb)
		f := newFakeAPIs(t)
		oa := httptest.NewServer(http.HandlerFunc(f.openAlex))
		defer oa.Close()
		s2 := httptest.NewServer(http.HandlerFunc(f.s2))
		defer s2.Close()
		var waits []time.Duration
		var bad []string
		o := Options{
			OpenAlexURL: oa.URL, S2URL: s2.URL, Mailto: "lead@example.org", S2Key: "s2-key",
			BatchOpenAlex: 2, // one paper a request, to see the batches
			Bad:           func(e *ingest.RecordError) { bad = append(bad, e.Error()) },
			sleep:         func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil },
		}

		// Run 1: the newest paper's works, with a 429, a second page and
		// a malformed object on it, then the cap.
		o.MaxRequests = 4
		sum, err := Run(ctx, bdb, o)
		if err != nil {
			t.Fatal(err)
		}
		if !sum.Stopped || sum.Requests != 4 || sum.Checked[sourceOpenAlexWorks] != 1 || sum.Bad != 1 {
			t.Errorf("run 1: %+v, want stopped after 4 requests, 1 paper checked, 1 malformed", sum)
		}
		wantAsked := []string{
			"works doi:10.48550/arxiv.1802.04375|10.7717/peerj.4375 cursor=*", // 429
			"works doi:10.48550/arxiv.1802.04375|10.7717/peerj.4375 cursor=*",
			"works doi:10.48550/arxiv.1802.04375|10.7717/peerj.4375 cursor=c2",
			"works doi:10.48550/arxiv.1802.04375|10.7717/peerj.4375 cursor=c3",
		}
		if got := f.take(); !slices.Equal(got, wantAsked) {
			t.Errorf("run 1 asked\n%q\nwant\n%q", got, wantAsked)
		}
		if !slices.Equal(waits, []time.Duration{7 * time.Second}) {
			t.Errorf("waits = %v, want the 7s Retry-After asked", waits)
		}
		if len(bad) != 1 || !strings.HasPrefix(bad[0], "openalex-page-2.jsonl:1: publication_date") {
			t.Errorf("malformed objects reported: %q, want one about publication_date", bad)
		}
		if p := papers(t, bdb)["1802.04375"]; p.OpenAlexID != "W2741809807" || intp(p.CitedByCount) != 962 {
			t.Errorf("1802.04375 after run 1: %+v, want W2741809807 cited by 962", p)
		}

		// Run 2 goes on with the older papers, then Semantic Scholar, then
		// the figures of the researchers the papers linked.
		o.MaxRequests = 0
		sum, err = Run(ctx, bdb, o)
		if err != nil {
			t.Fatal(err)
		}
		wantAsked = []string{
			"works doi:10.48550/arxiv.0704.0001|10.1103/physrevd.76.013009 cursor=*",
			"works doi:10.48550/arxiv.physics/0602001|10.3760/cma.j.issn.2095-1485.2006.01.019 cursor=*",
			"s2 paper ARXIV:1802.04375|ARXIV:0704.0001|ARXIV:physics/0602001 fields=" + s2PaperFields,
			// The authors 1802.04375's work linked, two a request, the
			// most recently created first.
			"authors openalex:A5014077037|A5046879461 cursor=*",
			"authors openalex:A5062989025|A5015414792 cursor=*",
			"authors openalex:A5066880338|A5085171399 cursor=*",
			"authors openalex:A5068542997|A5023888391 cursor=*",
			"authors openalex:A5048491430 cursor=*",
			// The authors physics/0602001's S2 paper linked.
			"s2 author 2096896523|101039255 fields=" + s2AuthorFields,
		}
		if got := f.take(); !slices.Equal(got, wantAsked) {
			t.Errorf("run 2 asked\n%q\nwant\n%q", got, wantAsked)
		}
		if sum.Stopped || sum.Requests != len(wantAsked) || sum.Bad != 0 {
			t.Errorf("run 2: %+v, want %d requests to the end", sum, len(wantAsked))
		}
		ps := papers(t, bdb)
		if p := ps["physics/0602001"]; p.S2ID != "223588394" || intp(p.CitedByCount) != 0 {
			t.Errorf("physics/0602001: %+v, want S2 223588394 cited by 0", p)
		}
		if p := ps["0704.0001"]; p.OpenAlexID != "" || p.S2ID != "" || p.CitedByCount != nil {
			t.Errorf("0704.0001, which neither API knows: %+v", p)
		}
		priem := researcher(t, bdb, "openalex_id = ?", "A5023888391")
		if len(priem) != 1 || priem[0].Name != "Jason Priem" || intp(priem[0].HIndex) != 17 ||
			intp(priem[0].CitationCount) != 3890 || intp(priem[0].WorksCount) != 62 {
			t.Errorf("researcher A5023888391: %+v, want Jason Priem, h-index 17, 3890 citations, 62 works", priem)
		}
		if rs := researcher(t, bdb, "s2_id = ?", "101039255"); len(rs) != 1 || rs[0].Name != "粟毅" {
			t.Errorf("researcher S2 101039255: %+v, want 粟毅", rs)
		}
		// The profile S2 answered with for another id has no paper here.
		if rs := researcher(t, bdb, "s2_id = ? OR name = ?", "119387837", "Christina Cottiero"); len(rs) != 0 {
			t.Errorf("researchers linked without evidence: %+v", rs)
		}

		// Run 3: everything was asked about.
		sum, err = Run(ctx, bdb, o)
		if err != nil || sum.Requests != 0 {
			t.Errorf("run 3: %+v, %v, want no request", sum, err)
		}
		if got := f.take(); len(got) != 0 {
			t.Errorf("run 3 asked %q", got)
		}
	})
}

// TestRetriesAreBounded checks that a source that keeps answering 429
// without a Retry-After is tried Tries times, with the waits doubling.
func TestRetriesAreBounded(t *testing.T) {
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n++
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	var waits []time.Duration
	c := &client{http: srv.Client(), tries: 3, backoff: time.Second, maxWait: time.Minute,
		sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }}
	_, err := c.do(context.Background(), http.MethodGet, srv.URL, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "429") {
		t.Errorf("err = %v, want the 429", err)
	}
	if n != 3 || !slices.Equal(waits, []time.Duration{time.Second, 2 * time.Second}) {
		t.Errorf("%d requests with waits %v, want 3 with 1s, 2s", n, waits)
	}
}

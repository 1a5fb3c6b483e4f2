package ingest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ingest"
	"github.com/papergraph/papergraph/ingest/oaitest"
)

// kaggleSample is the sample of arXiv's metadata the tests' repository
// lists (see oaitest.SampleRecords).
const kaggleSample = "../demo/data/kaggle-arxiv-sample.jsonl.gz"

// sampleRecords are the repository's records of kaggleSample.
func sampleRecords(t *testing.T) []oaitest.Record { return oaitest.SampleRecords(t, kaggleSample) }

// testDelay is the pause between requests the tests ask for; their
// Sleep only records it.
const testDelay = 4 * time.Second

// waits records what a harvest slept, instead of sleeping.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.d = append(w.d, d)
	return ctx.Err()
}

// harvestOptions are the options of a test harvest from s.
func harvestOptions(s *oaitest.Server, w *waits, sets ...string) ingest.HarvestOptions {
	return ingest.HarvestOptions{URL: s.URL, Sets: sets, Delay: testDelay, Backoff: time.Minute, Sleep: w.sleep}
}

func harvest(t *testing.T, bdb *bun.DB, o ingest.HarvestOptions) ingest.HarvestSummary {
	t.Helper()
	sum, err := ingest.Harvest(context.Background(), bdb, o)
	if err != nil {
		t.Fatalf("harvest: %v", err)
	}
	return sum
}

// withoutHarvestState drops the harvest state from a dump.
func withoutHarvestState(dump []string) []string {
	return slices.DeleteFunc(dump, func(l string) bool { return strings.HasPrefix(l, "harvest-state") })
}

// A harvest of the sample, through resumption tokens and a 503, stores
// what importing the same records from the Kaggle snapshot stores.
func TestHarvestMatchesImport(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		s := oaitest.NewServer(t, sampleRecords(t), 30)
		s.Busy[3] = "7"
		var w waits
		sum := harvest(t, bdb, harvestOptions(s, &w))
		if sum.Records != 200 || sum.Pages != 7 || sum.Requests != 8 || sum.Retries != 1 || sum.Bad != 0 || sum.Deleted != 0 {
			t.Errorf("summary: %d records in %d pages, %d requests, %d retries, %d bad, %d deleted; "+
				"want 200 in 7, 8, 1, 0, 0", sum.Records, sum.Pages, sum.Requests, sum.Retries, sum.Bad, sum.Deleted)
		}
		// Request 3 was answered 503 with Retry-After: 7; its retry waits
		// that long, every other request the pause.
		wantWaits := []time.Duration{testDelay, testDelay, 7 * time.Second, testDelay, testDelay, testDelay, testDelay}
		if !slices.Equal(w.d, wantWaits) {
			t.Errorf("waits %v, want %v", w.d, wantWaits)
		}
		qs := s.Queries()
		if got := qs[0].Encode(); got != "metadataPrefix=arXivRaw&verb=ListRecords" {
			t.Errorf("first request %s, want ListRecords of arXivRaw, all sets, all dates", got)
		}
		if got := qs[1].Encode(); got != "resumptionToken=%7C%7C%7C30&verb=ListRecords" {
			t.Errorf("second request %s, want the resumption token alone", got)
		}
		if through, err := db.HarvestedThrough(context.Background(), bdb, ""); err != nil || through != "2026-11-28" {
			t.Errorf("harvested through %q, %v, want the responseDate's day 2026-11-28", through, err)
		}

		imported := dbtest.Open(t, dbtest.NewMigrated(t, kindOf(dsn)))
		importFiles(t, imported, ingest.Kaggle, kaggleSample)
		dbtest.SameDump(t, withoutHarvestState(dbtest.Dump(t, bdb)), dbtest.Dump(t, imported))
	})
}

// A malformed record is reported and skipped, a deleted one is counted
// and leaves the paper, and the second run asks only for what changed
// since the first, and stores it.
func TestHarvestIncremental(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		ctx := context.Background()
		records := sampleRecords(t)
		first := append(slices.Clone(records),
			oaitest.Record{ID: "0704.9999", Datestamp: "2009-01-01", Set: "physics:hep-th",
				Metadata: strings.Replace(records[0].Metadata, "<id>0704.0001</id>", "<id>not-an-id</id>", 1)},
			oaitest.Record{ID: "0704.9998", Datestamp: "2009-01-01", Set: "physics:hep-th", Deleted: true})
		s := oaitest.NewServer(t, first, 50)
		var w waits
		o := harvestOptions(s, &w)
		var bad []string
		o.Bad = func(e *ingest.RecordError) { bad = append(bad, e.Error()) }
		sum := harvest(t, bdb, o)
		if sum.Records != 200 || sum.Bad != 1 || sum.Deleted != 1 || sum.Inserted != 200 {
			t.Errorf("first run: %d records, %d bad, %d deleted, %d inserted; want 200, 1, 1, 200", sum.Records, sum.Bad, sum.Deleted, sum.Inserted)
		}
		if want := []string{`all sets page 5:oai:arXiv.org:0704.9999:1: invalid arXiv id "not-an-id"`}; !slices.Equal(bad, want) {
			t.Errorf("bad records %q, want %q", bad, want)
		}

		// On the 30th, 0704.0001 has a third version and 0704.0002 is
		// deleted; nothing else changed.
		updated := strings.Replace(records[0].Metadata, "</version>\n<title>",
			"</version>\n<version version=\"v3\"><date>Sun, 29 Nov 2026 09:00:00 GMT</date><size>38kb</size><source_type>D</source_type></version>\n<title>", 1)
		updated = strings.Replace(updated, "published version", "published version, erratum added", 1)
		second := slices.Clone(records)
		second[0] = oaitest.Record{ID: "0704.0001", Datestamp: "2026-11-29", Set: "physics:hep-ph", Metadata: updated}
		second[1] = oaitest.Record{ID: "0704.0002", Datestamp: "2026-11-29", Set: "math", Deleted: true}
		s.SetRecords(second, "2026-11-30T12:00:00Z")
		before := len(s.Queries())
		sum = harvest(t, bdb, o)
		qs := s.Queries()[before:]
		if len(qs) != 1 || qs[0].Get("from") != "2026-11-28" {
			t.Errorf("second run asked %v, want one request from 2026-11-28", qs)
		}
		if sum.Records != 1 || sum.Updated != 1 || sum.Deleted != 1 {
			t.Errorf("second run: %d records, %d updated, %d deleted; want 1, 1, 1", sum.Records, sum.Updated, sum.Deleted)
		}
		var papers []db.Paper
		if err := bdb.NewSelect().Model(&papers).Where("arxiv_id IN (?)", bun.List([]string{"0704.0001", "0704.0002"})).
			Order("arxiv_id").Scan(ctx); err != nil {
			t.Fatal(err)
		}
		if len(papers) != 2 {
			t.Fatalf("got %d of 0704.0001 and 0704.0002, want both: a deleted record leaves its paper", len(papers))
		}
		p := papers[0]
		if p.Version != 3 || p.Comments != "37 pages, 15 figures; published version, erratum added" ||
			!p.Updated.Equal(time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)) {
			t.Errorf("0704.0001 after the second run: version %d, comments %q, updated %v; want version 3 of 29 Nov 2026 with the new comment",
				p.Version, p.Comments, p.Updated)
		}
		if through, err := db.HarvestedThrough(ctx, bdb, ""); err != nil || through != "2026-11-30" {
			t.Errorf("harvested through %q, %v, want 2026-11-30", through, err)
		}
	})
}

// A harvest stopped anywhere, and run again, ends with exactly the data of
// one that was not: stopped after the first page, in the middle of the
// second set, in a request, and after the last page but before the set's
// datestamp is recorded.
func TestHarvestStoppedRerunMatchesUninterrupted(t *testing.T) {
	sets := []string{"math", "physics", "cs"}
	records := sampleRecords(t)
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		clean := oaitest.NewServer(t, records, 20)
		var w waits
		full := harvest(t, bdb, harvestOptions(clean, &w, sets...))
		want := dbtest.Dump(t, bdb)
		tests := []struct {
			name string
			// stop says whether to stop after page (the harvest's
			// count) or, page 0, in request n.
			stop func(page, request int) bool
		}{
			{"after the first page", func(page, _ int) bool { return page == 1 }},
			{"inside the second set", func(page, _ int) bool { return page == 5 }},
			{"in a request", func(page, request int) bool { return page == 0 && request == 7 }},
			{"before the last datestamp", func(page, _ int) bool { return page == full.Pages }},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				stopped := dbtest.Open(t, dbtest.NewMigrated(t, kindOf(dsn)))
				s := oaitest.NewServer(t, records, 20)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				s.OnRequest = func(n int) {
					if tt.stop(0, n) {
						cancel()
					}
				}
				o := harvestOptions(s, &w, sets...)
				pages := 0
				o.Page = func(ingest.HarvestPage) {
					if pages++; tt.stop(pages, 0) {
						cancel()
					}
				}
				if _, err := ingest.Harvest(ctx, stopped, o); !errors.Is(err, context.Canceled) {
					t.Fatalf("stopped harvest: %v, want context.Canceled", err)
				}
				if got := stats(t, stopped).Papers; got == 0 || got > 200 {
					t.Fatalf("stopped harvest stored %d papers, want some", got)
				}
				o.Page = nil
				s.OnRequest = nil
				harvest(t, stopped, o)
				dbtest.SameDump(t, dbtest.Dump(t, stopped), want)
			})
		}
	})
}

// One harvest or import writes at a time.
func TestHarvestWaitsForNoImport(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		s := oaitest.NewServer(t, sampleRecords(t), 50)
		release, err := db.LockImport(context.Background(), bdb)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		var w waits
		_, err = ingest.Harvest(context.Background(), bdb, harvestOptions(s, &w))
		var running *db.ImportRunningError
		if !errors.As(err, &running) {
			t.Errorf("harvest under an import: %v, want an ImportRunningError", err)
		}
		if n := len(s.Queries()); n != 0 {
			t.Errorf("harvest under an import sent %d requests, want none", n)
		}
	})
}

func TestHarvestRefusesBadOptions(t *testing.T) {
	bdb := dbtest.Open(t, dbtest.NewMigrated(t, "sqlite"))
	tests := []struct {
		name string
		o    ingest.HarvestOptions
		want string
	}{
		{"from not a date", ingest.HarvestOptions{From: "2026-13-01"}, `from "2026-13-01" is not a date`},
		{"until with a time", ingest.HarvestOptions{Until: "2026-11-01T00:00:00Z"}, `until "2026-11-01T00:00:00Z" is not a date`},
		{"until before from", ingest.HarvestOptions{From: "2026-11-02", Until: "2026-11-01"}, "until 2026-11-01 is before from 2026-11-02"},
		{"not http", ingest.HarvestOptions{URL: "ftp://example.org/oai"}, `"ftp://example.org/oai" is not an http(s) URL`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ingest.Harvest(context.Background(), bdb, tt.o)
			if !errors.Is(err, ingest.ErrHarvestOptions) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want ErrHarvestOptions saying %s", err, tt.want)
			}
		})
	}
}

// The killed-harvest test runs a harvest in a child process (this test
// binary, re-executed) that kills itself with SIGKILL at its
// harvestKillAt-th SQL statement: a page of 20 records is about ten
// statements, and the 65th is in the middle of the fifth page's
// transaction, in the second set.
const (
	childHarvestEnv = "PAPERGRAPH_TEST_CHILD_HARVEST"
	childURLEnv     = "PAPERGRAPH_TEST_CHILD_OAI_URL"
	harvestKillAt   = 65
)

// killAt is a query hook that kills the process at its n-th statement.
type killAt struct{ n, seen int }

func (k *killAt) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	if k.seen++; k.seen == k.n {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
	return ctx
}

func (*killAt) AfterQuery(context.Context, *bun.QueryEvent) {}

func childHarvest(dsn, url string) int {
	bdb, err := db.Open(dsn)
	if err != nil {
		return 3
	}
	bdb = bdb.WithQueryHook(&killAt{n: harvestKillAt})
	noSleep := func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	o := ingest.HarvestOptions{URL: url, Sets: []string{"math", "physics", "cs"}, Sleep: noSleep}
	if _, err := ingest.Harvest(context.Background(), bdb, o); err != nil {
		return 4
	}
	return 0
}

func TestKilledHarvestRerunMatchesUninterrupted(t *testing.T) {
	records := sampleRecords(t)
	dbtest.Each(t, func(t *testing.T, dsn string, bdb *bun.DB) {
		s := oaitest.NewServer(t, records, 20)
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childHarvestEnv+"="+dsn, childURLEnv+"="+s.URL)
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("child harvest: %v, want death by SIGKILL", err)
		}
		if got := stats(t, bdb).Papers; got == 0 || got >= 200 {
			t.Fatalf("after the kill: %d papers stored, want some but not all of 200", got)
		}
		// PostgreSQL ends the killed child's session, and its import lock,
		// once it notices the closed connection: on a loaded machine that
		// can come after the rerun starts.
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			holder, err := db.ImportRunning(t.Context(), bdb)
			if err != nil {
				t.Fatal(err)
			}
			if holder == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the killed harvest's import lock is still held 30 s on (%s)", holder)
			}
		}
		var w waits
		harvest(t, bdb, harvestOptions(s, &w, "math", "physics", "cs"))

		clean := dbtest.Open(t, dbtest.NewMigrated(t, kindOf(dsn)))
		harvest(t, clean, harvestOptions(oaitest.NewServer(t, records, 20), &w, "math", "physics", "cs"))
		dbtest.SameDump(t, dbtest.Dump(t, bdb), dbtest.Dump(t, clean))
	})
}

// How a harvest meets the repository's other answers.
func TestHarvestAnswers(t *testing.T) {
	records := sampleRecords(t)
	oaiError := func(s *oaitest.Server, code string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { s.Error(w, r, code, "as the test asks") }
	}
	status := func(code int) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "down for a moment", code) }
	}
	garbled := func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "<html><body>maintenance</body></html>") }
	// page is what a repository of the same records answers to token,
	// with its own token replaced by next when next is set.
	page := func(token, next string) http.HandlerFunc {
		mirror := oaitest.NewServer(t, records, 50)
		resp, err := http.Get(mirror.URL + "?" + url.Values{"verb": {"ListRecords"}, "resumptionToken": {token}}.Encode())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		body := string(b)
		if next != "" {
			body = regexp.MustCompile(`>[^<]*</resumptionToken>`).ReplaceAllString(body, ">"+next+"</resumptionToken>")
		}
		return func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, body) }
	}
	// forever answers every request from the third on with h.
	forever := func(s *oaitest.Server, h http.HandlerFunc) {
		for n := 3; n <= 1000; n++ {
			s.Fail[n] = h
		}
	}
	tests := []struct {
		name  string
		setup func(s *oaitest.Server, o *ingest.HarvestOptions)
		// want: the error (empty for none), records written, requests
		// and the waits before them, the day recorded.
		err      string
		records  int64
		requests int
		waits    []time.Duration
		through  string
	}{
		{
			name:  "an expired token starts the set again",
			setup: func(s *oaitest.Server, _ *ingest.HarvestOptions) { s.Fail[3] = oaiError(s, "badResumptionToken") },
			// pages 1 and 2, the expired token, then all 4 pages
			records: 50 + 50 + 200, requests: 7, through: "2026-11-28",
		},
		{
			name: "server errors back off, doubling",
			setup: func(s *oaitest.Server, _ *ingest.HarvestOptions) {
				s.Fail[2], s.Fail[3] = status(http.StatusBadGateway), status(http.StatusInternalServerError)
			},
			records: 200, requests: 6, through: "2026-11-28",
			waits: []time.Duration{testDelay, time.Minute, 2 * time.Minute, testDelay, testDelay},
		},
		{
			name: "garbled pages, as many as attempts",
			setup: func(s *oaitest.Server, o *ingest.HarvestOptions) {
				o.Attempts = 3
				s.Fail[2], s.Fail[3], s.Fail[4] = garbled, garbled, garbled
			},
			err:     "all sets: not an OAI-PMH response: a <html> document",
			records: 50, requests: 4,
			waits: []time.Duration{testDelay, time.Minute, 2 * time.Minute},
		},
		{
			name:  "a repeated token stops the set, its page written",
			setup: func(s *oaitest.Server, _ *ingest.HarvestOptions) { forever(s, page("|||100", "|||100")) },
			err:   `all sets: the repository repeats itself: page 3 gives the resumptionToken "|||100" that page 2 gave`,
			// page 3 lists records 100 to 149, new ones, before its token repeats
			records: 150, requests: 3,
		},
		{
			name:    "a repeated page stops the set",
			setup:   func(s *oaitest.Server, _ *ingest.HarvestOptions) { forever(s, page("|||50", "|||9999")) },
			err:     "all sets: the repository repeats itself: page 3 lists the records of page 2 again",
			records: 100, requests: 3,
		},
		{
			name:    "a protocol error is not asked again",
			setup:   func(s *oaitest.Server, _ *ingest.HarvestOptions) { s.Fail[1] = oaiError(s, "badArgument") },
			err:     "all sets: OAI-PMH error badArgument: as the test asks",
			records: 0, requests: 1,
		},
		{
			name:    "a 404 is not asked again",
			setup:   func(s *oaitest.Server, _ *ingest.HarvestOptions) { s.Fail[1] = status(http.StatusNotFound) },
			err:     "all sets: HTTP 404 Not Found",
			records: 0, requests: 1,
		},
		{
			name:    "nothing changed",
			setup:   func(_ *oaitest.Server, o *ingest.HarvestOptions) { o.From = "2026-01-01" },
			records: 0, requests: 1, through: "2026-11-28",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bdb := dbtest.Open(t, dbtest.NewMigrated(t, "sqlite"))
			s := oaitest.NewServer(t, records, 50)
			var w waits
			o := harvestOptions(s, &w)
			tt.setup(s, &o)
			sum, err := ingest.Harvest(context.Background(), bdb, o)
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.err)) {
				t.Errorf("harvest: %v, want %q", err, tt.err)
			}
			if sum.Records != tt.records || sum.Requests != tt.requests {
				t.Errorf("%d records in %d requests, want %d in %d", sum.Records, sum.Requests, tt.records, tt.requests)
			}
			if tt.waits != nil && !slices.Equal(w.d, tt.waits) {
				t.Errorf("waits %v, want %v", w.d, tt.waits)
			}
			if through, err := db.HarvestedThrough(context.Background(), bdb, ""); err != nil || through != tt.through {
				t.Errorf("harvested through %q, %v; want %q", through, err, tt.through)
			}
		})
	}
}

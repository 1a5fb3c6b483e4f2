package ingest

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/retry"
)

// DefaultOAIURL is arXiv's OAI-PMH endpoint (export.arxiv.org/oai2, the
// older address, redirects to it).
const DefaultOAIURL = "https://oaipmh.arxiv.org/oai"

// DefaultHarvestDelay is the pause between two requests. arXiv asks
// harvesters for no more than one request every three seconds, over one
// connection; five leaves a margin.
const DefaultHarvestDelay = 5 * time.Second

// requestTimeout bounds one request of the default client, so that a
// connection that hangs fails and is retried rather than stalling every
// later harvest; a page of 1,000 records is a few megabytes.
const requestTimeout = 5 * time.Minute

// HarvestOptions configure one harvest.
type HarvestOptions struct {
	// URL is the repository's OAI-PMH base URL; empty means DefaultOAIURL.
	URL string
	// Sets are the OAI-PMH sets to harvest ("cs", "math",
	// "physics:hep-th"); none means the whole archive.
	Sets []string
	// From and Until bound the records' datestamps (YYYY-MM-DD, both
	// inclusive). An empty From means the day each set was last harvested
	// through, or all of history for a set never harvested; an empty
	// Until, today.
	From, Until string
	Client      *http.Client // nil: a client that gives up on a request after requestTimeout
	UserAgent   string       // empty: papergraph's
	// Delay is the pause between requests; 0 means DefaultHarvestDelay.
	Delay time.Duration
	// Attempts is how often one request is tried before the harvest
	// fails (0: 8). Between two attempts it waits what a 503's
	// Retry-After says, or else Backoff, doubled each time; never longer
	// than MaxWait.
	Attempts int
	Backoff  time.Duration // 0: 30 s
	MaxWait  time.Duration // 0: 30 min
	// Sleep waits d or until ctx ends; nil means a timer. Tests replace it.
	Sleep func(ctx context.Context, d time.Duration) error
	// MaxErrors stops the harvest after that many malformed records; 0
	// means no limit.
	MaxErrors int
	// Bad is told about every malformed record (it is skipped either way).
	Bad func(*RecordError)
	// Page, when set, is told about every page once it is written.
	Page func(HarvestPage)
	// OnCommit is Options.OnCommit for the harvest's pages.
	OnCommit func(papers, researchers []int64)
	// Retry, when set, is told about every failed request that will be
	// tried again, and how long the harvest waits first.
	Retry func(err error, wait time.Duration)
}

// HarvestPage is what one page of a harvest held.
type HarvestPage struct {
	Set  string // "" for the whole archive
	Page int    // 1-based, within the set
	// Records were written; Deleted and Bad were skipped.
	Records, Deleted, Bad int
	// Datestamp is the latest datestamp on the page.
	Datestamp string
	// Done and Total count the set's records: those listed before the
	// next page and all of them, as the repository tells (0 when it
	// does not).
	Done, Total int
}

// HarvestSummary is what a harvest did.
type HarvestSummary struct {
	Requests, Pages, Retries int
	Records                  int64 // good records written
	Deleted, Bad             int64 // records skipped
	Counts
	// Through maps each set harvested to its end to the datestamp it is
	// now harvested through.
	Through map[string]string
	Elapsed time.Duration
	Derive  time.Duration // part of Elapsed spent on derived figures
}

// ErrHarvestOptions says a harvest was asked for something that makes no
// sense (a date that is not one, an Until before From).
var ErrHarvestOptions = errors.New("bad harvest options")

// ErrHarvestLoop is the error of a harvest whose repository leads it in a
// circle: a resumptionToken it gave before, or a page of the same records
// as the page before. Following it would never end; the set stops there,
// with the pages read so far written and its harvested day unchanged.
var ErrHarvestLoop = errors.New("the repository repeats itself")

// Harvest reads the records of every set changed since it was last
// harvested from an OAI-PMH repository of arXivRaw records, following
// resumption tokens, and writes them through the importers' writer, a
// transaction per page; then it brings the derived figures of the
// researchers it touched up to date. It holds the import lock (see
// db.LockImport) meanwhile, so one harvest or import writes at a time,
// across processes and, on PostgreSQL, machines.
//
// A set's datestamp is recorded once the set has been read to its end: a
// harvest that is stopped anywhere and run again asks for the same records
// again and ends with the data an uninterrupted one would have, since
// writing a record twice changes nothing. Deleted records are counted and
// left alone (see docs/live.md, "Harvesting arXiv").
func Harvest(ctx context.Context, bdb *bun.DB, o HarvestOptions) (HarvestSummary, error) {
	start := time.Now()
	h := &harvester{o: o, bdb: bdb, sum: HarvestSummary{Through: map[string]string{}}}
	h.defaults()
	if err := h.o.Check(); err != nil {
		return h.sum, err
	}
	release, err := db.LockImport(ctx, bdb)
	if err != nil {
		return h.sum, err
	}
	defer release()
	bulk, err := db.BeginBulk(ctx, bdb)
	if err != nil {
		return h.sum, err
	}
	h.w = newWriter(bdb)
	h.w.onCommit = o.OnCommit
	h.w.bulk = bulk
	sets := o.Sets
	if len(sets) == 0 {
		sets = []string{""}
	}
	var runErr error
	for _, set := range sets {
		if runErr = h.harvestSet(ctx, set); runErr != nil {
			break
		}
	}
	// What a stopped harvest wrote is good data: derive it, unless the
	// harvest was cancelled (the next run or `papergraph migrate` will).
	if ctx.Err() == nil && (runErr == nil || h.sum.Pages > 0) {
		d := time.Now()
		if err := Derive(ctx, bdb); err != nil && runErr == nil {
			runErr = err
		}
		h.sum.Derive = time.Since(d)
	}
	h.sum.Elapsed = time.Since(start)
	return h.sum, runErr
}

// harvester is one run of Harvest.
type harvester struct {
	o   HarvestOptions
	bdb *bun.DB
	w   *writer
	sum HarvestSummary
}

func (h *harvester) defaults() {
	o := &h.o
	if o.URL == "" {
		o.URL = DefaultOAIURL
	}
	if o.Client == nil {
		o.Client = &http.Client{Timeout: requestTimeout}
	}
	if o.UserAgent == "" {
		o.UserAgent = "papergraph-harvest/1 (+https://github.com/papergraph/papergraph)"
	}
	if o.Delay <= 0 {
		o.Delay = DefaultHarvestDelay
	}
	if o.Attempts <= 0 {
		o.Attempts = 8
	}
	if o.Backoff <= 0 {
		o.Backoff = 30 * time.Second
	}
	if o.MaxWait <= 0 {
		o.MaxWait = 30 * time.Minute
	}
	if o.Sleep == nil {
		o.Sleep = retry.Sleep
	}
}

// Check returns an ErrHarvestOptions error when o makes no sense: a date
// that is not one, Until before From, a URL that is not http(s).
func (o HarvestOptions) Check() error {
	if o.URL == "" {
		o.URL = DefaultOAIURL
	}
	for _, d := range []struct{ name, value string }{{"from", o.From}, {"until", o.Until}} {
		if d.value != "" && (len(d.value) != 10 || oaiDay(d.value) == "") {
			return fmt.Errorf("%w: %s %q is not a date: want YYYY-MM-DD", ErrHarvestOptions, d.name, d.value)
		}
	}
	if o.From != "" && o.Until != "" && o.Until < o.From {
		return fmt.Errorf("%w: until %s is before from %s", ErrHarvestOptions, o.Until, o.From)
	}
	if u, err := url.Parse(o.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: %q is not an http(s) URL", ErrHarvestOptions, o.URL)
	}
	return nil
}

// harvestSet reads one set from where it was harvested through, or from
// From, to its end, and records how far that is.
func (h *harvester) harvestSet(ctx context.Context, set string) error {
	stored, err := db.HarvestedThrough(ctx, h.bdb, set)
	if err != nil {
		return err
	}
	from := h.o.From
	if from == "" {
		from = stored
	}
	// A window that starts after the stored day leaves a gap before it:
	// the stored day must stay where it is.
	gap := stored != "" && from > stored
	var through, token string
	restarted := false
	var loop loopGuard
	for n := 1; ; n++ {
		page, err := h.fetch(ctx, listRecordsQuery(set, from, h.o.Until, token))
		if err != nil {
			return fmt.Errorf("%s: %w", setLabel(set), err)
		}
		if through == "" {
			through = oaiDay(page.ResponseDate)
		}
		if len(page.Errors) > 0 {
			e := page.Errors[0]
			if e.Code == oaiNoRecords {
				break
			}
			if e.Code == oaiBadToken && token != "" && !restarted {
				// The token expired (a long pause, a slow retry): the
				// set starts again; the pages read are written already,
				// and writing them again changes nothing.
				restarted, token, n = true, "", 0
				loop = loopGuard{}
				continue
			}
			return fmt.Errorf("%s: %w", setLabel(set), e)
		}
		if err := loop.checkPage(n, page); err != nil {
			return fmt.Errorf("%s: %w", setLabel(set), err)
		}
		if err := h.writePage(ctx, set, n, page); err != nil {
			return fmt.Errorf("%s: %w", setLabel(set), err)
		}
		// A page that gives an earlier page's token may still list new
		// records: they are written before the harvest stops.
		if err := loop.checkToken(n, page); err != nil {
			return fmt.Errorf("%s: %w", setLabel(set), err)
		}
		if token = strings.TrimSpace(page.Token.Value); token == "" {
			break
		}
	}
	if h.o.Until != "" && h.o.Until < through {
		through = h.o.Until
	}
	if gap || through == "" {
		return nil
	}
	if err := db.SetHarvestedThrough(ctx, h.bdb, set, through); err != nil {
		return err
	}
	h.sum.Through[set] = max(through, stored)
	return nil
}

// writePage writes the good records of page n of set in one transaction.
func (h *harvester) writePage(ctx context.Context, set string, n int, page *oaiPage) error {
	p := HarvestPage{Set: set, Page: n}
	batch := make([]Record, 0, len(page.Records))
	for i, r := range page.Records {
		p.Datestamp = max(p.Datestamp, oaiDay(r.Header.Datestamp))
		if r.Header.Status == "deleted" {
			p.Deleted++
			continue
		}
		reason := "no arXivRaw metadata"
		var paper *Paper
		if r.Raw != nil {
			paper, reason = r.Raw.paper()
		}
		if reason != "" {
			p.Bad++
			if err := h.bad(&RecordError{Pos: Position{File: fmt.Sprintf("%s page %d", setLabel(set), n),
				Member: shortened(strings.TrimSpace(r.Header.Identifier)), Line: i + 1}, Reason: reason}); err != nil {
				return err
			}
			continue
		}
		prepare(paper)
		batch = append(batch, paper)
	}
	c, err := h.w.write(ctx, batch)
	if err != nil {
		return err
	}
	p.Records = len(batch)
	p.Done, _ = strconv.Atoi(page.Token.Cursor)
	p.Done += len(page.Records)
	p.Total, _ = strconv.Atoi(page.Token.CompleteListSize)
	if p.Total == 0 || strings.TrimSpace(page.Token.Value) == "" {
		p.Total = max(p.Total, p.Done)
	}
	h.sum.Pages++
	h.sum.Records += int64(p.Records)
	h.sum.Deleted += int64(p.Deleted)
	h.sum.Counts.add(c)
	if h.o.Page != nil {
		h.o.Page(p)
	}
	return nil
}

// bad reports one malformed record and stops the harvest after MaxErrors.
func (h *harvester) bad(e *RecordError) error {
	h.sum.Bad++
	if h.o.Bad != nil {
		h.o.Bad(e)
	}
	if h.o.MaxErrors > 0 && h.sum.Bad >= int64(h.o.MaxErrors) {
		return ErrTooManyErrors
	}
	return nil
}

// fetch asks for one page, after the pause due since the last request,
// and tries again on failures that may pass.
func (h *harvester) fetch(ctx context.Context, q url.Values) (*oaiPage, error) {
	wait := time.Duration(0)
	if h.sum.Requests > 0 {
		wait = h.o.Delay
	}
	backoff := h.o.Backoff
	for attempt := 1; ; attempt++ {
		if wait > 0 {
			if err := h.o.Sleep(ctx, wait); err != nil {
				return nil, err
			}
		}
		h.sum.Requests++
		page, err := fetchPage(ctx, h.o.Client, h.o.URL, h.o.UserAgent, q)
		if err == nil {
			return page, nil
		}
		var perm *permanentError
		if ctx.Err() != nil || errors.As(err, &perm) || attempt == h.o.Attempts {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, err
		}
		var later *retryAfterError
		if errors.As(err, &later) {
			wait = later.wait
		} else {
			wait, backoff = backoff, backoff*2
		}
		wait = min(max(wait, h.o.Delay), h.o.MaxWait)
		h.sum.Retries++
		if h.o.Retry != nil {
			h.o.Retry(err, wait)
		}
	}
}

// setLabel names a set in messages.
func setLabel(set string) string {
	if set == "" {
		return "all sets"
	}
	return "set " + set
}

// loopGuard remembers the resumption tokens of one walk through a set
// and the records of its last page, by their hashes, so that a
// repository that repeats itself is caught at the first repeat.
type loopGuard struct {
	tokens   map[uint64]int // token hash → the page that gave it
	lastPage uint64
}

// checkPage returns an ErrHarvestLoop when page n lists the same records
// as page n-1, which are written already.
func (g *loopGuard) checkPage(n int, page *oaiPage) error {
	if len(page.Records) == 0 {
		return nil
	}
	h := fnv.New64a()
	for _, r := range page.Records {
		io.WriteString(h, r.Header.Identifier)
		io.WriteString(h, "\x00"+r.Header.Datestamp+"\x00")
	}
	sum := h.Sum64()
	if n > 1 && sum == g.lastPage {
		return fmt.Errorf("%w: page %d lists the records of page %d again", ErrHarvestLoop, n, n-1)
	}
	g.lastPage = sum
	return nil
}

// checkToken returns an ErrHarvestLoop when page n gives a token an
// earlier page gave.
func (g *loopGuard) checkToken(n int, page *oaiPage) error {
	token := strings.TrimSpace(page.Token.Value)
	if token == "" {
		return nil
	}
	h := fnv.New64a()
	io.WriteString(h, token)
	sum := h.Sum64()
	if first, ok := g.tokens[sum]; ok {
		return fmt.Errorf("%w: page %d gives the resumptionToken %s that page %d gave", ErrHarvestLoop, n, quoteShort(token), first)
	}
	if g.tokens == nil {
		g.tokens = map[uint64]int{}
	}
	g.tokens[sum] = n
	return nil
}

// quoteShort quotes s, shortened: tokens and identifiers are the
// source's to choose, of any length, and errors end up in logs.
func quoteShort(s string) string { return strconv.Quote(shortened(s)) }

// shortened is s cut to 80 bytes, on a character boundary.
func shortened(s string) string {
	if len(s) <= 80 {
		return s
	}
	n := 80
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

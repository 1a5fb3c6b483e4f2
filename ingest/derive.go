package ingest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/names"
)

// Derive brings up to date what the API reads often: resolved citations,
// citation counts, researcher figures, fields, co-authors, same-name
// links and institution matches, after ending a bulk load (see
// db.BeginBulk). Three queues say what changed: derive_queue the
// researchers whose papers changed otherwise than by a new paper, whom it
// recomputes whole; derive_added the papers an import added, which it adds
// to their other authors' figures, fields and co-authors; derive_cited the
// researchers of papers cited anew, whose h-index and most cited paper it
// recomputes. It empties the researchers' queues last, and each added
// paper with the transaction that adds it, so running it again, or after a
// crash, gives the same result; the cost follows what an import changed,
// not the size of the archive.
func Derive(ctx context.Context, bdb *bun.DB) error {
	_, err := DeriveSteps(ctx, bdb, nil)
	return err
}

// A DeriveStep is a step of Derive as it ran: how long it took, the CPU
// time the process used meanwhile (user and system, zero where the system
// does not say) and in how many transactions. An import's summary lists
// them, so that a long derive says where its time went. SQLite runs in
// the process, so its CPU time is SQLite's work too; PostgreSQL's work is
// the server's and not counted, and its full-text build runs beside the
// other steps, whose CPU times then hold part of it.
type DeriveStep struct {
	Name         string
	Elapsed      time.Duration
	CPU          time.Duration
	Transactions int
}

// DeriveSteps is Derive, telling started, if given, the name of each
// step as it starts, and returning the steps it ran in the order they
// ended. On PostgreSQL the full-text indexes build beside the steps after
// the citations, so their step ends among those.
func DeriveSteps(ctx context.Context, bdb *bun.DB, started func(step string)) ([]DeriveStep, error) {
	c := &stepClock{started: started}
	// The steps below read the indexes a bulk load deferred, but for the
	// full-text ones.
	var fullText func(context.Context) error
	bulk, err := db.BulkOpen(ctx, bdb)
	if err != nil {
		return nil, err
	}
	if err := c.time("bulk indexes", func() (n int, err error) {
		fullText, err = db.EndBulkIndexes(ctx, bdb)
		return 1, err
	}); err != nil {
		return c.steps, err
	}
	if err := c.time("citations", func() (int, error) {
		return 1, deriveStep(ctx, bdb, "citations", func(ctx context.Context, tx bun.Tx) error {
			return db.ResolveReferences(ctx, tx)
		})
	}); err != nil {
		return c.steps, err
	}
	// A bulk load's papers are vacuumed before the steps that read them by
	// researcher, so that those reads are index-only (papers_figures,
	// migration 0020); the vacuum at the end would do it anyway, and
	// would then have nothing to do for them. It runs before the
	// full-text build, whose index builds it would wait for.
	if bulk && db.IsPostgres(bdb) {
		if err := c.time("vacuum papers", func() (int, error) { return 0, db.VacuumPapers(ctx, bdb) }); err != nil {
			return c.steps, err
		}
	}
	buildFullText := func(ctx context.Context) error {
		return c.time("full-text", func() (int, error) { return 1, fullText(ctx) })
	}
	// The full-text indexes build while the other steps run, which write
	// no papers: PostgreSQL gives them a second core. SQLite has one
	// writer, so they build first. A failed step stops the build.
	done := make(chan error, 1)
	if db.IsPostgres(bdb) {
		// Returning early cancels the build; done is buffered, so
		// the goroutine ends either way.
		ftCtx, stop := context.WithCancel(ctx)
		defer stop()
		go func() { done <- buildFullText(ftCtx) }()
	} else if err := buildFullText(ctx); err != nil {
		return c.steps, err
	} else {
		done <- nil
	}
	for _, s := range deriveSteps {
		if err = c.time(s.name, func() (int, error) { return s.run(ctx, bdb) }); err != nil {
			break
		}
	}
	if err != nil {
		return c.snapshot(), err
	}
	if err := <-done; err != nil {
		return c.steps, err
	}
	if err := c.time("queue", func() (int, error) {
		return 1, deriveStep(ctx, bdb, "queue", func(ctx context.Context, tx bun.Tx) error {
			return db.ClearDeriveQueue(ctx, tx)
		})
	}); err != nil {
		return c.steps, err
	}
	// PostgreSQL's tables that the import and the derive rewrote in large
	// part are vacuumed and analysed before the first request
	// (db.VacuumAnalyze); a small increment leaves them to autovacuum.
	if db.IsPostgres(bdb) {
		err = c.time("vacuum", func() (int, error) { return 0, db.VacuumAnalyze(ctx, bdb) })
	}
	return c.steps, err
}

// stepClock times the steps of one Derive. Its steps are written by the
// full-text build's goroutine too, under mu; once that has ended (Derive
// has read done) they are read without it.
type stepClock struct {
	mu      sync.Mutex
	steps   []DeriveStep
	started func(string)
}

// time runs fn, a step that reports how many transactions it ran, and
// records it.
func (c *stepClock) time(name string, fn func() (int, error)) error {
	if c.started != nil {
		c.started(name)
	}
	start, cpu := time.Now(), cpuTime()
	n, err := fn()
	c.mu.Lock()
	c.steps = append(c.steps, DeriveStep{Name: name, Elapsed: time.Since(start), CPU: cpuTime() - cpu, Transactions: n})
	c.mu.Unlock()
	return err
}

// snapshot copies the steps recorded so far, while the full-text build
// may still record its own.
func (c *stepClock) snapshot() []DeriveStep {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.steps)
}

// A deriveStepKind says how a step of Derive is divided into
// transactions.
type deriveStepKind int

const (
	// once: the step in one transaction.
	once deriveStepKind = iota
	// batched: a transaction per batch of the researchers of the step's
	// queue (deriveBatches).
	batched
	// drained: transactions one after the other until one returns
	// errDrained, each taking its part of the work off a queue as it
	// commits it.
	drained
)

// errDrained is what a drained step's transaction returns when there is
// nothing left for it.
var errDrained = errors.New("nothing left")

// deriveTask is a step of Derive: fn is one of its transactions.
type deriveTask struct {
	name  string
	kind  deriveStepKind
	queue db.DeriveQueue // of a batched step
	fn    func(ctx context.Context, tx bun.Tx) error
}

// run runs the step in its transactions and says how many it ran.
func (s deriveTask) run(ctx context.Context, bdb *bun.DB) (int, error) {
	switch s.kind {
	case batched:
		return deriveBatches(ctx, bdb, s.name, s.queue, s.fn)
	case drained:
		for n := 1; ; n++ {
			if err := deriveStep(ctx, bdb, s.name, s.fn); err != nil {
				if errors.Is(err, errDrained) {
					return n, nil
				}
				return n, err
			}
		}
	}
	return 1, deriveStep(ctx, bdb, s.name, s.fn)
}

// deriveSteps are the steps of Derive after the citations, in order.
var deriveSteps = []deriveTask{
	{name: "initials", fn: mergeInitials},
	{name: "researchers", kind: batched, queue: db.Recompute, fn: deriveResearchers},
	// New papers of researchers on neither queue: added to what they
	// have, after the merges, which queue the authors of the papers they
	// move.
	{name: "added", kind: drained, fn: addChunk},
	// Researchers whose papers were only cited anew: their figures alone
	// (a citation moves the h-index and the most cited paper, not the
	// fields, co-authors or names), after the merges, recomputes and
	// added papers above, which leave them on the other queue if they
	// touched them, or put them on this one.
	{name: "cited", kind: batched, queue: db.FiguresOnly, fn: deriveFigures},
	{name: "same-name", fn: deriveSameName},
	{name: "affiliations", fn: matchAffiliations},
	// Last, as it measures what the steps above wrote.
	{name: "list sizes", fn: deriveListSizes},
}

// deriveBatchSize is the most researchers one transaction of a batched
// step recomputes. What such a step holds in memory (every co-author pair
// of the batch's researchers, their figures) grows with the batch, not
// with the archive.
var deriveBatchSize = 20_000

// deriveBatches runs fn over the researchers of queue a batch at a time,
// each batch (derive_batch, in id order) in a transaction of its own. The
// queue itself is emptied only at the end of Derive, so a derive stopped
// between two batches is done again in full by the next import or migrate.
func deriveBatches(ctx context.Context, bdb *bun.DB, name string, queue db.DeriveQueue, fn func(ctx context.Context, tx bun.Tx) error) (int, error) {
	var after int64
	for txs := 1; ; txs++ {
		var n int
		err := deriveStep(ctx, bdb, name, func(ctx context.Context, tx bun.Tx) error {
			var err error
			if n, after, err = db.FillDeriveBatch(ctx, tx, queue, after, deriveBatchSize); err != nil || n == 0 {
				return err
			}
			return fn(ctx, tx)
		})
		if err != nil || n == 0 {
			return txs, err
		}
	}
}

// deriveStep runs one step of Derive in a transaction of its own.
func deriveStep(ctx context.Context, bdb *bun.DB, name string, fn func(ctx context.Context, tx bun.Tx) error) error {
	err := bdb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := db.DeriveSortMemory(ctx, tx); err != nil {
			return err
		}
		return fn(ctx, tx)
	})
	if err != nil {
		return fmt.Errorf("derive %s: %w", name, err)
	}
	return nil
}

// deriveListSizes measures the archive's lists (db.MeasureListSizes),
// which the server's estimates of a query's size read.
func deriveListSizes(ctx context.Context, tx bun.Tx) error {
	sizes, err := db.MeasureListSizes(ctx, tx)
	if err != nil {
		return err
	}
	return db.SetListSizes(ctx, tx, sizes)
}

// familyMember is a researcher as the name-matching steps see it.
type familyMember struct {
	db.NameCandidate
	parsed names.Name
}

// candidateGroups returns the researchers that may share a name with
// another profile, grouped by family name and first initial (names that
// differ there are never compatible), each group sorted by id. Only
// families with a researcher on the derive queue are read (with added,
// or on a paper of derive_added: see db.NameCandidates). Profiles
// without a given name are left out: a bare surname says too little.
func candidateGroups(ctx context.Context, tx bun.Tx, added bool) ([][]familyMember, error) {
	cs, err := db.NameCandidates(ctx, tx, added)
	if err != nil {
		return nil, err
	}
	return groupCandidates(cs), nil
}

// groupCandidates groups candidates as candidateGroups says.
func groupCandidates(cs []db.NameCandidate) [][]familyMember {
	ms := make([]familyMember, len(cs))
	for i, c := range cs {
		ms[i].NameCandidate = c
	}
	parseAll(ms)
	var groups [][]familyMember
	index := map[string]int{}
	for _, m := range ms {
		initial := m.parsed.FirstInitial()
		if initial == "" {
			continue
		}
		k := m.FamilyKey + "\x00" + initial
		i, ok := index[k]
		if !ok {
			i = len(groups)
			index[k] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], m)
	}
	return groups
}

// parseAll takes the members' names apart, on every core: after a large
// import there are hundreds of thousands, and the database waits.
func parseAll(ms []familyMember) {
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(ms); i += workers {
				ms[i].parsed = names.Parse(ms[i].Name)
			}
		}()
	}
	wg.Wait()
}

// mergeInitials joins a profile known only by initials ("C. Itzykson") to
// a full-name profile ("Claude Itzykson") when the names are compatible
// and exactly one such profile shares a co-author with it. Without that
// evidence the initials stay a profile of their own.
//
// A decision follows the co-authors of the initials and of their
// candidates, so it can change only when one of those profiles is queued
// (its papers changed): only those are decided. A merge changes the
// co-authors of the profile merged into and of everyone on the papers
// that moved, so the step decides again the candidates those touch, until
// no merge is left; the next derive then finds no merge that a derive of
// every researcher would make. Each round decides all before it moves any,
// deciding initialsBatchSize profiles at a time (decideInitials).
func mergeInitials(ctx context.Context, tx bun.Tx) error {
	groups, err := candidateGroups(ctx, tx, true)
	if err != nil {
		return err
	}
	gone := map[int64]bool{} // merged away
	// matched holds how many candidates the initials this derive decided
	// shared a co-author with (none, or two and more: one is a merge), and
	// targets the profiles merged into. A move takes nothing shared away
	// from two profiles neither of which is merged into: the initials it
	// moves are replaced on the same papers by the profile merged into, and
	// everyone else stays. And what they newly share can only be a profile
	// merged into, the only co-author anyone gains. So initials decided
	// before, none of whose candidates was merged into since, are decided
	// again only by the targets they share with each candidate
	// (decideByTargets); the others are decided from their co-author
	// sets.
	matched, targets := map[int64]int{}, map[int64]bool{}
	for {
		cands, touched := initialsCandidates(groups, gone)
		var todo, again []initialsCandidate
		for _, c := range cands {
			if !touched[c.id] && !slices.ContainsFunc(c.fullNames, func(b int64) bool { return touched[b] }) {
				continue
			}
			n, decided := matched[c.id]
			switch {
			case !decided || slices.ContainsFunc(c.fullNames, func(b int64) bool { return targets[b] }):
				todo = append(todo, c)
			case n == 0:
				again = append(again, c)
			} // two or more: they still share a co-author with both
		}
		moves, err := decideInitials(ctx, tx, todo, matched)
		if err != nil {
			return err
		}
		more, err := decideByTargets(ctx, tx, again, targets, matched)
		if err != nil {
			return err
		}
		if moves = append(moves, more...); len(moves) == 0 {
			return nil
		}
		for _, m := range moves {
			targets[m[1]] = true
		}
		if groups, err = applyMerges(ctx, tx, moves, gone); err != nil {
			return err
		}
	}
}

// applyMerges moves the authorships of each merge's initials (m[0]) to
// the profile merged into (m[1]), marks the initials gone and queues the
// researchers whose figures change; it returns the families of those
// researchers, for the next round to decide.
//
// A move changes the co-authors of the profile merged into and of
// everyone on the papers that move, and no one else's: the next round
// decides their families, read afresh (the rounds before may not have
// read them: a co-author of the initials whose own initials now share the
// profile merged into).
func applyMerges(ctx context.Context, tx bun.Tx, moves [][2]int64, gone map[int64]bool) ([][]familyMember, error) {
	froms := make([]int64, len(moves))
	for i, m := range moves {
		froms[i] = m[0]
	}
	on, err := db.ResearchersOnPapersOf(ctx, tx, froms)
	if err != nil {
		return nil, err
	}
	for _, m := range moves {
		if err := db.MoveAuthorships(ctx, tx, m[0], m[1]); err != nil {
			return nil, err
		}
		gone[m[0]] = true
		on = append(on, m[1])
	}
	// Everyone on the papers that moved, the emptied profiles and the
	// profiles merged into are recomputed: queued once a round (queued
	// move by move, a large collaboration's authors were queued again
	// for each of its initials that moved).
	if err := db.QueueResearchers(ctx, tx, on); err != nil {
		return nil, err
	}
	cs, err := db.FamilyCandidates(ctx, tx, on)
	if err != nil {
		return nil, err
	}
	return groupCandidates(cs), nil
}

// initialsCandidates returns the initials profiles of groups (but those
// gone) with their compatible full-name profiles, and the members queued.
func initialsCandidates(groups [][]familyMember, gone map[int64]bool) ([]initialsCandidate, map[int64]bool) {
	var cands []initialsCandidate
	touched := map[int64]bool{}
	for _, ms := range groups {
		for _, a := range ms {
			if a.Queued {
				touched[a.ID] = true
			}
			if gone[a.ID] || a.HasExtID || !a.parsed.InitialsOnly() {
				continue
			}
			c := initialsCandidate{id: a.ID}
			for _, b := range ms {
				if b.ID != a.ID && !gone[b.ID] && !b.parsed.InitialsOnly() && a.parsed.Compatible(b.parsed) {
					c.fullNames = append(c.fullNames, b.ID)
				}
			}
			if len(c.fullNames) > 0 {
				cands = append(cands, c)
			}
		}
	}
	return cands, touched
}

// decideInitials returns the merges of cands that the authorships as they
// stand call for: initials and the one full-name profile they share a
// co-author with.
// It records in matched how many candidates each shares a co-author with.
func decideInitials(ctx context.Context, tx bun.Tx, cands []initialsCandidate, matched map[int64]int) ([][2]int64, error) {
	var moves [][2]int64
	for len(cands) > 0 {
		n, size := 0, 0
		for n < len(cands) && (n == 0 || size+1+len(cands[n].fullNames) <= initialsBatchSize) {
			size += 1 + len(cands[n].fullNames)
			n++
		}
		batch := cands[:n]
		cands = cands[n:]
		var involved []int64
		for _, c := range batch {
			involved = append(involved, c.id)
			involved = append(involved, c.fullNames...)
		}
		co, err := db.CoauthorSets(ctx, tx, involved)
		if err != nil {
			return nil, err
		}
		for _, c := range batch {
			moves = c.decide(co, matched, moves)
		}
	}
	return moves, nil
}

// decide appends to moves the merge of c that the co-author sets co call
// for, if any, and records in matched how many of c's candidates c shares
// a co-author with.
func (c initialsCandidate) decide(co map[int64]map[int64]bool, matched map[int64]int, moves [][2]int64) [][2]int64 {
	var match []int64
	for _, b := range c.fullNames {
		if shares(co[c.id], co[b]) {
			match = append(match, b)
		}
	}
	if len(match) == 1 {
		moves = append(moves, [2]int64{c.id, match[0]})
	}
	matched[c.id] = len(match)
	return moves
}

// decideByTargets decides again initials that shared a co-author with
// none of their candidates when last decided and none of whose
// candidates was merged into since (see mergeInitials): each now shares
// one with the candidates that co-author a profile merged into that the
// initials co-author too, and with no other.
func decideByTargets(ctx context.Context, tx bun.Tx, cands []initialsCandidate, targets map[int64]bool, matched map[int64]int) ([][2]int64, error) {
	if len(cands) == 0 {
		return nil, nil
	}
	read := maps.Clone(targets)
	for _, c := range cands {
		read[c.id] = true
		for _, b := range c.fullNames {
			read[b] = true
		}
	}
	// One read of the papers of the targets and of the profiles the round
	// decides, from the researcher index.
	papers, err := db.PapersOf(ctx, tx, slices.Collect(maps.Keys(read)))
	if err != nil {
		return nil, err
	}
	on := map[int64][]int64{} // the targets on each of their papers
	for t := range targets {
		for _, p := range papers[t] {
			if ts := on[p]; len(ts) == 0 || ts[len(ts)-1] != t {
				on[p] = append(ts, t)
			}
		}
	}
	// co holds the targets each profile decided co-authors, itself left
	// out.
	co := map[int64]map[int64]bool{}
	coauthor := func(x int64) {
		if _, done := co[x]; done {
			return
		}
		co[x] = map[int64]bool{}
		for _, p := range papers[x] {
			for _, t := range on[p] {
				if t != x {
					co[x][t] = true
				}
			}
		}
	}
	var moves [][2]int64
	for _, c := range cands {
		coauthor(c.id)
		for _, b := range c.fullNames {
			coauthor(b)
		}
		moves = c.decide(co, matched, moves)
	}
	return moves, nil
}

// initialsBatchSize is the most initials profiles and candidates
// decideInitials decides at once (an initials profile with its candidates
// can exceed it alone). Their co-author sets are the step's memory: read
// for every initials profile at once, they would grow with the archive.
var initialsBatchSize = 5_000

// initialsCandidate is a profile known only by initials and the
// compatible full-name profiles of its family.
type initialsCandidate struct {
	id        int64
	fullNames []int64
}

func shares(a, b map[int64]bool) bool {
	for id := range a {
		if b[id] {
			return true
		}
	}
	return false
}

// deriveResearchers recomputes the figures and tables of the queued
// researchers and drops those left with no paper and no external identity.
func deriveResearchers(ctx context.Context, tx bun.Tx) error {
	if err := db.ClearQueuedDerived(ctx, tx); err != nil {
		return err
	}
	for _, fn := range []func(context.Context, bun.Tx) error{deriveFigures, deriveFields, deriveCoauthors} {
		if err := fn(ctx, tx); err != nil {
			return err
		}
	}
	return nil
}

// deriveSameName links profiles that may be the same person: the same
// family name and compatible given names (which includes two profiles
// of one name that external ids keep apart).
func deriveSameName(ctx context.Context, tx bun.Tx) error {
	// Same-name links follow names alone: a paper added to a profile
	// moves none.
	groups, err := candidateGroups(ctx, tx, false)
	if err != nil {
		return err
	}
	var rows []db.SameName
	for _, ms := range groups {
		for i, a := range ms {
			for _, b := range ms[i+1:] {
				// Pairs of two unqueued profiles are still stored.
				if (a.Queued || b.Queued) && a.parsed.Compatible(b.parsed) {
					rows = append(rows, db.SameName{ResearcherID: a.ID, OtherID: b.ID}, db.SameName{ResearcherID: b.ID, OtherID: a.ID})
				}
			}
		}
	}
	// deriveResearchers has deleted the queued researchers' links.
	return db.InsertSameName(ctx, tx, rows)
}

// matchAffiliations links affiliations to institutions: by the ROR id a
// source gave, else by a confident name match (see institutionMatcher).
// The raw string is always kept.
func matchAffiliations(ctx context.Context, tx bun.Tx) error {
	if err := db.MatchAffiliationsByROR(ctx, tx); err != nil {
		return err
	}
	raws, err := db.UnmatchedAffiliations(ctx, tx)
	if err != nil {
		return err
	}
	if len(raws) == 0 {
		return nil
	}
	m, err := loadInstitutionMatcher(ctx, tx)
	if err != nil {
		return err
	}
	var matched []string
	var ids []int64
	for _, raw := range raws {
		if id := m.match(raw); id != 0 {
			matched, ids = append(matched, raw), append(ids, id)
		}
	}
	return db.MatchAffiliations(ctx, tx, matched, ids)
}

// institutionMatcher matches affiliation strings to institutions by exact
// folded names, labels, aliases and acronyms.
type institutionMatcher struct {
	byKey   map[string][]int64 // names, labels, aliases
	byAcro  map[string][]int64 // acronyms, matched case-sensitively
	country map[int64]string
	byLand  map[string]string // folded country name → ISO code
}

func loadInstitutionMatcher(ctx context.Context, tx bun.Tx) (*institutionMatcher, error) {
	rows, err := db.MatchableNames(ctx, tx)
	if err != nil {
		return nil, err
	}
	m := &institutionMatcher{byKey: map[string][]int64{}, byAcro: map[string][]int64{}, country: map[int64]string{}, byLand: countryNames}
	for _, r := range rows {
		m.country[r.InstitutionID] = r.Country
		if r.Kind == "acronym" {
			if acronymUsable(r.Name, r.Types) {
				m.byAcro[r.Name] = appendUnique(m.byAcro[r.Name], r.InstitutionID)
			}
		} else {
			m.byKey[r.NameKey] = appendUnique(m.byKey[r.NameKey], r.InstitutionID)
		}
	}
	return m, nil
}

// acronymUsable says whether an acronym may match on its own: it must be
// three letters or more, not a country ("UK", "USA"), and name a research
// body (a university, facility, government lab or funder); a company or
// club acronym ("KFA") is too likely to collide with a lab's.
func acronymUsable(acro, types string) bool {
	if len([]rune(acro)) < 3 {
		return false
	}
	if _, isCountry := countryNames[foldKey(acro)]; isCountry {
		return false
	}
	for _, t := range strings.Split(types, ",") {
		switch t {
		case "education", "facility", "government", "funder":
			return true
		}
	}
	return false
}

func appendUnique(ids []int64, id int64) []int64 {
	if slices.Contains(ids, id) {
		return ids
	}
	return append(ids, id)
}

// match returns the one institution an affiliation names, or 0. It tries
// the whole string and then each comma-separated part ("Dept. of Physics,
// Princeton University, USA"); a part naming several institutions counts
// only when a country named in the string picks one of them.
func (m *institutionMatcher) match(raw string) int64 {
	parts := strings.Split(raw, ",")
	land := ""
	for _, p := range parts {
		if c, ok := m.byLand[foldKey(p)]; ok {
			land = c
		}
	}
	found := map[int64]bool{}
	try := func(ids []int64) {
		if land != "" {
			var in []int64
			for _, id := range ids {
				if m.country[id] == land {
					in = append(in, id)
				}
			}
			ids = in
		}
		if len(ids) == 1 {
			found[ids[0]] = true
		}
	}
	try(m.byKey[foldKey(raw)])
	for _, p := range parts {
		p = strings.TrimSpace(p)
		try(m.byKey[foldKey(p)])
		try(m.byAcro[p])
	}
	if len(found) != 1 {
		return 0
	}
	for id := range found {
		return id
	}
	return 0
}

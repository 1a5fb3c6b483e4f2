package server

import (
	"bufio"
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/graph/model"
	"github.com/papergraph/papergraph/reqid"
	"github.com/papergraph/papergraph/resolvers"
)

// searchExportPage is how many papers the search export reads per
// statement; it flushes the response after each page. A variable so that
// tests can make pages small.
var searchExportPage = 500

// searchRow is one paper of a search export.
type searchRow struct {
	ArxivID       string   `json:"arxivId"`
	Title         string   `json:"title"`
	Published     *string  `json:"published"`
	Categories    []string `json:"categories"`
	Authors       string   `json:"authors"`
	CitationCount int      `json:"citationCount"`
	DOI           *string  `json:"doi"`
	AbsURL        string   `json:"absUrl"`
}

// searchFormats are the content types of the export's formats.
var searchFormats = map[string]string{
	"csv":   "text/csv; charset=utf-8",
	"jsonl": "application/jsonl",
}

// searchWriter writes a search export in one format: its rows, then the
// line that ends it (see writeEnd).
type searchWriter struct {
	row   func(searchRow) error
	flush func() error
	w     io.Writer
	jsonl bool
}

// newSearchWriter starts a file of format on w.
func newSearchWriter(format string, w io.Writer) (*searchWriter, error) {
	if format == "jsonl" {
		enc := json.NewEncoder(w)
		return &searchWriter{row: func(r searchRow) error { return enc.Encode(r) }, flush: func() error { return nil }, w: w, jsonl: true}, nil
	}
	cw := csv.NewWriter(w)
	sw := &searchWriter{w: w, flush: func() error { cw.Flush(); return cw.Error() }}
	sw.row = func(r searchRow) error {
		return cw.Write([]string{r.ArxivID, spreadsheetSafe(r.Title), deref(r.Published), strings.Join(r.Categories, " "), spreadsheetSafe(r.Authors),
			strconv.Itoa(r.CitationCount), deref(r.DOI), r.AbsURL})
	}
	return sw, cw.Write([]string{"arxivId", "title", "published", "categories", "authors", "citationCount", "doi", "absUrl"})
}

// writeEnd writes the last line of the file, after rows rows: for JSON
// Lines {"complete":{"rows":N}}, or {"error":{"message","code",
// "requestId","rows"}} when f says why the file is cut short; for CSV a
// comment line, "# complete: N rows" or "# error: CODE: message (request
// ID); N rows". No paper line or CSV record starts with "{\"complete\"",
// "{\"error\"" or "#".
func (sw *searchWriter) writeEnd(rows int, f *exportFailure) error {
	if err := sw.flush(); err != nil {
		return err
	}
	if sw.jsonl {
		type end struct {
			Rows int `json:"rows"`
		}
		var v any = struct {
			Complete end `json:"complete"`
		}{end{rows}}
		if f != nil {
			v = struct {
				Error struct {
					exportFailure
					Rows int `json:"rows"`
				} `json:"error"`
			}{struct {
				exportFailure
				Rows int `json:"rows"`
			}{*f, rows}}
		}
		return json.NewEncoder(sw.w).Encode(v)
	}
	if f == nil {
		_, err := fmt.Fprintf(sw.w, "# complete: %d rows\n", rows)
		return err
	}
	_, err := fmt.Fprintf(sw.w, "# error: %s: %s (request %s); %d rows\n", f.Code, f.Message, f.RequestID, rows)
	return err
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// searchExport serves GET /export/search: every paper searchPapers would
// list for the same query, filter and sort, as CSV or JSON Lines, read a
// page at a time and written as it is read. Parameters: query, categories
// (comma-separated codes), from and to (YYYY-MM-DD, both days included),
// researcher, institution, hasDoi (true or false), sort (a PaperSearchSort
// value, any case) and format (csv, the default, or jsonl). A bad
// parameter is a 400 whose message starts with its name; an export that
// cannot start is a 5xx with a JSON error; the file ends with a line that
// says whether it is whole (searchWriter.writeEnd), and so do its
// trailers.
func searchExport(bdb bun.IDB, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		format := cmp.Or(q.Get("format"), "csv")
		contentType, ok := searchFormats[format]
		if !ok {
			http.Error(w, "format: must be csv or jsonl", http.StatusBadRequest)
			return
		}
		query, filter, sort, err := searchParams(q)
		var s db.PaperSearch
		var order db.PaperOrder
		if err == nil {
			s, order, err = resolvers.SearchArgs(r.Context(), bdb, query, filter, sort)
			s.RankAll = true
		}
		if err == nil {
			s, err = modeSearch(r.Context(), bdb, q, s, deref(query), order)
		}
		if answerError(w, r, log, "search export could not start", err) {
			return
		}
		// The first page is read before the status is sent, so that an
		// export that cannot start says so with its status.
		args := db.PageArgs{First: searchExportPage, Order: order}
		page, err := searchExportPageRows(r.Context(), bdb, s, args)
		if err != nil {
			exportError(w, failure(r, log, "search export could not start", err))
			return
		}
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Content-Disposition", `attachment; filename="search.`+format+`"`)
		announceTrailers(w.Header(), true)
		rows, complete, err := writeSearch(r.Context(), w, bdb, s, args, page, format, func(err error) exportFailure {
			return failure(r, log, "search export cut short", err)
		})
		if err != nil {
			// Nothing more reaches the client, not even the end line.
			log.WarnContext(r.Context(), "search export cut short", "request_id", reqid.From(r.Context()), "err", err)
		}
		setTrailers(w.Header(), complete, rows)
	})
}

// modeSearch applies the mode parameter (a SearchMode value, any case;
// HYBRID when absent) to s as searchPapers does (resolvers.SemanticSearch).
// A search whose relevance order ranks candidates (SEMANTIC, HYBRID)
// exports them, not every keyword match.
func modeSearch(ctx context.Context, bdb bun.IDB, q map[string][]string, s db.PaperSearch, text string, order db.PaperOrder) (db.PaperSearch, error) {
	mode := model.SearchModeHybrid
	if vs := q["mode"]; len(vs) > 0 && vs[0] != "" {
		mode = model.SearchMode(strings.ToUpper(vs[0]))
		if !mode.IsValid() {
			return s, &resolvers.InputError{Arg: "mode", Msg: "must be keyword, semantic or hybrid, got " + resolvers.QuoteInput(vs[0])}
		}
	}
	s, err := resolvers.SemanticSearch(ctx, bdb, s, text, order, mode)
	if s.HasCandidates() {
		s.RankAll = false
	}
	return s, err
}

// searchParams reads the search's parameters as searchPapers' arguments.
// Parameters left out or empty are not set.
func searchParams(q map[string][]string) (query *string, f *model.PaperFilter, sort *model.PaperSearchSort, err error) {
	get := func(name string) *string {
		if vs := q[name]; len(vs) > 0 && vs[0] != "" {
			return &vs[0]
		}
		return nil
	}
	f = &model.PaperFilter{Researcher: get("researcher"), Institution: get("institution")}
	query = get("query")
	if s := get("categories"); s != nil {
		for _, c := range strings.Split(*s, ",") {
			if c = strings.TrimSpace(c); c != "" {
				f.Categories = append(f.Categories, c)
			}
		}
	}
	day := func(name string, next bool) (*time.Time, error) {
		s := get(name)
		if s == nil {
			return nil, nil
		}
		t, err := time.Parse(time.DateOnly, *s)
		if err != nil {
			return nil, &resolvers.InputError{Arg: name, Msg: "not a date (YYYY-MM-DD): " + resolvers.QuoteInput(*s)}
		}
		if next {
			if t.Year() == 9999 && t.YearDay() == 365 {
				// The last day that can be written: every date is on or
				// before it, and the day after has five digits of year.
				return nil, nil
			}
			t = t.AddDate(0, 0, 1)
		}
		return &t, nil
	}
	if f.PublishedFrom, err = day("from", false); err != nil {
		return
	}
	if f.PublishedTo, err = day("to", true); err != nil {
		return
	}
	if s := get("hasDoi"); s != nil {
		b, perr := strconv.ParseBool(*s)
		if perr != nil {
			return nil, nil, nil, &resolvers.InputError{Arg: "hasDoi", Msg: "must be true or false, got " + resolvers.QuoteInput(*s)}
		}
		f.HasDoi = &b
	}
	if s := get("sort"); s != nil {
		v := model.PaperSearchSort(strings.ToUpper(*s))
		if !v.IsValid() {
			return nil, nil, nil, &resolvers.InputError{Arg: "sort", Msg: "must be relevance, newest, oldest or most_cited, got " + resolvers.QuoteInput(*s)}
		}
		sort = &v
	}
	return query, f, sort, nil
}

// writeSearch writes every paper of s in order, a page at a time from
// first (the page args names), and the line that ends the file: three
// statements per page (the page, the papers' bylines, their categories),
// and a flush to the client after each. A page that cannot be read ends
// the file with the failure cut makes of its error. It returns the rows
// written, whether the file is whole, and the error of a write to the
// client, after which nothing more can be written.
func writeSearch(ctx context.Context, w http.ResponseWriter, bdb bun.IDB, s db.PaperSearch, args db.PageArgs, first searchPage, format string,
	cut func(error) exportFailure,
) (rows int, complete bool, err error) {
	bw := bufio.NewWriterSize(w, 32<<10)
	sw, err := newSearchWriter(format, bw)
	if err != nil {
		return 0, false, err
	}
	rc := http.NewResponseController(w)
	flush := func() error {
		if err := sw.flush(); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		return nil
	}
	page := first
	for {
		for _, p := range page.Items {
			if err := sw.row(newSearchRow(p, page.full[p.ID], page.cats[p.ID])); err != nil {
				return rows, false, err
			}
			rows++
		}
		if err := flush(); err != nil {
			return rows, false, err
		}
		if !page.HasNext {
			break
		}
		args.After = db.PaperCursor(page.Items[len(page.Items)-1], args.Order)
		// An export has no overall time limit, only one per page and per
		// write, so that any number of rows can stream to a client that
		// keeps reading.
		if err := rc.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return rows, false, err
		}
		if page, err = searchExportPageRows(ctx, bdb, s, args); err != nil {
			f := cut(err)
			if err := sw.writeEnd(rows, &f); err != nil {
				return rows, false, err
			}
			return rows, false, flush()
		}
	}
	if err := sw.writeEnd(rows, nil); err != nil {
		return rows, false, err
	}
	return rows, true, flush()
}

// newSearchRow is p as exported; full is its whole row (for the byline),
// nil if it is gone.
func newSearchRow(p, full *db.Paper, cats []db.Category) searchRow {
	m := model.Paper{Paper: p}
	row := searchRow{ArxivID: p.ArxivID, Title: p.Title, CitationCount: p.CitationCount, DOI: m.DOI(), AbsURL: deref(m.AbsURL()), Categories: []string{}}
	if t := m.Published(); t != nil {
		s := t.UTC().Format(time.RFC3339)
		row.Published = &s
	}
	if full != nil {
		row.Authors = full.Byline
	}
	for _, c := range cats {
		row.Categories = append(row.Categories, c.Code)
	}
	return row
}

// searchPage is one page of an export: the papers, their whole rows
// (for the bylines) and their categories.
type searchPage struct {
	db.Page[*db.Paper]
	full map[int64]*db.Paper
	cats map[int64][]db.Category
}

// searchExportPageRows spends the page's points and reads it within
// queryTimeout.
func searchExportPageRows(ctx context.Context, bdb bun.IDB, s db.PaperSearch, args db.PageArgs) (searchPage, error) {
	var page searchPage
	if _, err := spendPoints(ctx, exportPoints); err != nil {
		return page, err
	}
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	var err error
	if page.Page, err = db.SearchPapers(ctx, bdb, s, args); err != nil {
		return page, err
	}
	ids := make([]int64, len(page.Items))
	for i, p := range page.Items {
		ids[i] = p.ID
	}
	if page.full, err = db.PapersByIDs(ctx, bdb, ids); err != nil {
		return page, err
	}
	page.cats, err = db.CategoriesByPaperIDs(ctx, bdb, ids)
	return page, err
}

package server

import (
	"bufio"
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
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

// newSearchWriter starts a file of format on w and returns the functions
// that write a row and flush what is buffered.
func newSearchWriter(format string, w io.Writer) (write func(searchRow) error, flush func() error, err error) {
	if format == "jsonl" {
		enc := json.NewEncoder(w)
		return func(r searchRow) error { return enc.Encode(r) }, func() error { return nil }, nil
	}
	cw := csv.NewWriter(w)
	write = func(r searchRow) error {
		return cw.Write([]string{r.ArxivID, spreadsheetSafe(r.Title), deref(r.Published), strings.Join(r.Categories, " "), spreadsheetSafe(r.Authors),
			strconv.Itoa(r.CitationCount), deref(r.DOI), r.AbsURL})
	}
	flush = func() error { cw.Flush(); return cw.Error() }
	return write, flush, cw.Write([]string{"arxiv_id", "title", "published", "categories", "authors", "citation_count", "doi", "abs_url"})
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
// researcher, institution, hasDOI (true or false), sort (a PaperSearchSort
// value, any case) and format (csv, the default, or jsonl). A bad
// parameter is a 400 whose message starts with its name.
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
		}
		var ie *resolvers.InputError
		switch {
		case errors.As(err, &ie):
			http.Error(w, strings.TrimPrefix(ie.Arg, "filter.")+": "+ie.Msg, http.StatusBadRequest)
			return
		case err != nil:
			log.ErrorContext(r.Context(), "search export failed", "request_id", reqid.From(r.Context()), "err", err)
			http.Error(w, "internal server error", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Content-Disposition", `attachment; filename="search.`+format+`"`)
		if err := writeSearch(r.Context(), w, bdb, s, order, format); err != nil {
			// The status is sent; all that is left is to say why the file is short.
			log.WarnContext(r.Context(), "search export cut short", "request_id", reqid.From(r.Context()), "err", err)
		}
	})
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
	if s := get("hasDOI"); s != nil {
		b, perr := strconv.ParseBool(*s)
		if perr != nil {
			return nil, nil, nil, &resolvers.InputError{Arg: "hasDOI", Msg: "must be true or false, got " + resolvers.QuoteInput(*s)}
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

// writeSearch writes every paper of s in order, a page at a time: three
// statements per page (the page, the papers' bylines, their categories),
// and a flush to the client after each.
func writeSearch(ctx context.Context, w http.ResponseWriter, bdb bun.IDB, s db.PaperSearch, order db.PaperOrder, format string) error {
	bw := bufio.NewWriterSize(w, 32<<10)
	row, flush, err := newSearchWriter(format, bw)
	if err != nil {
		return err
	}
	rc := http.NewResponseController(w)
	args := db.PageArgs{First: searchExportPage, Order: order}
	for {
		// An export has no overall time limit, only one per page and per
		// write, so that any number of rows can stream to a client that
		// keeps reading.
		if err := rc.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		pg, full, cats, err := searchExportPageRows(ctx, bdb, s, args)
		if err != nil {
			return err
		}
		for _, p := range pg.Items {
			if err := row(newSearchRow(p, full[p.ID], cats[p.ID])); err != nil {
				return err
			}
		}
		if err := flush(); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		if !pg.HasNext {
			return nil
		}
		args.After = db.PaperCursor(pg.Items[len(pg.Items)-1], order)
	}
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

// searchExportPageRows reads one page of an export within queryTimeout.
func searchExportPageRows(ctx context.Context, bdb bun.IDB, s db.PaperSearch, args db.PageArgs) (
	pg db.Page[*db.Paper], full map[int64]*db.Paper, cats map[int64][]db.Category, err error,
) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	if pg, err = db.SearchPapers(ctx, bdb, s, args); err != nil {
		return pg, nil, nil, err
	}
	ids := make([]int64, len(pg.Items))
	for i, p := range pg.Items {
		ids[i] = p.ID
	}
	if full, err = db.PapersByIDs(ctx, bdb, ids); err != nil {
		return pg, nil, nil, err
	}
	cats, err = db.CategoriesByPaperIDs(ctx, bdb, ids)
	return pg, full, cats, err
}

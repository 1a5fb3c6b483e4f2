package enrich

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/papergraph/papergraph/arxivid"
	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/ingest"
)

// openAlexPerPage is the largest page OpenAlex serves
// (developers.openalex.org, "Page through results": per_page 1–100); it
// is also the most values one filter may OR together.
const openAlexPerPage = 100

// openAlexWorks asks OpenAlex for the works of the papers by DOI: the
// arXiv DataCite DOI (10.48550/arXiv.ID) and the journal DOI when the
// paper has one, so a paper takes two of a request's 100 values.
func (r *run) openAlexWorks(ctx context.Context) error {
	perBatch := max(1, r.o.BatchOpenAlex/2)
	return batches(ctx, r, sourceOpenAlexWorks,
		func(last *db.EnrichPaper) ([]db.EnrichPaper, error) {
			return db.PapersToEnrich(ctx, r.db, sourceOpenAlexWorks, r.staleBefore, last, perBatch)
		},
		func(p db.EnrichPaper) int64 { return p.ID },
		func(ps []db.EnrichPaper) error {
			asked := map[string]bool{}
			var dois []string
			for _, p := range ps {
				for _, d := range []string{arxivDOI(p.ArxivID), p.DOI} {
					// A comma would end the filter and a bar split the DOI:
					// such a paper is asked about by its arXiv DOI alone.
					if d != "" && !asked[d] && !strings.ContainsAny(d, ",|") {
						asked[d] = true
						dois = append(dois, d)
					}
				}
			}
			if len(dois) == 0 {
				return nil
			}
			keep := func(raw json.RawMessage) bool {
				var w struct {
					DOI string `json:"doi"`
				}
				if json.Unmarshal(raw, &w) != nil {
					return true // the reader reports it
				}
				d, _ := arxivid.NormalizeDOI(w.DOI)
				return asked[d]
			}
			return r.openAlexList(ctx, "works", "doi:"+strings.Join(dois, "|"), keep)
		})
}

// arxivDOI is the DataCite DOI arXiv gives id, lowercased as DOIs compare.
func arxivDOI(id string) string {
	if id == "" {
		return ""
	}
	return "10.48550/arxiv." + strings.ToLower(id)
}

// openAlexAuthors asks OpenAlex for the figures of the researchers linked
// to an OpenAlex author, 100 a request.
func (r *run) openAlexAuthors(ctx context.Context) error {
	return batches(ctx, r, sourceOpenAlexAuthors,
		func(last *db.EnrichResearcher) ([]db.EnrichResearcher, error) {
			return db.ResearchersToEnrich(ctx, r.db, sourceOpenAlexAuthors, false, r.staleBefore, lastID(last), r.o.BatchOpenAlex)
		},
		func(x db.EnrichResearcher) int64 { return x.ID },
		func(xs []db.EnrichResearcher) error {
			asked := map[string]bool{}
			ids := make([]string, len(xs))
			for i, x := range xs {
				ids[i] = x.ExternalID
				asked[x.ExternalID] = true
			}
			// OpenAlex answers for a merged author with the profile it
			// was merged into; that one has no evidence here.
			keep := func(raw json.RawMessage) bool {
				var a struct {
					ID string `json:"id"`
				}
				if json.Unmarshal(raw, &a) != nil {
					return true
				}
				return asked[a.ID[strings.LastIndexByte(a.ID, '/')+1:]]
			}
			return r.openAlexList(ctx, "authors", "openalex:"+strings.Join(ids, "|"), keep)
		})
}

// openAlexList reads every page of the list of entity filtered by filter,
// cursor by cursor, and writes the objects keep keeps.
func (r *run) openAlexList(ctx context.Context, entity, filter string, keep func(json.RawMessage) bool) error {
	cursor := "*"
	for cursor != "" {
		q := url.Values{"filter": {filter}, "per_page": {fmt.Sprint(openAlexPerPage)}, "cursor": {cursor}}
		if r.o.Mailto != "" {
			q.Set("mailto", r.o.Mailto)
		}
		u := strings.TrimSuffix(r.o.OpenAlexURL, "/") + "/" + entity + "?" + q.Encode()
		body, err := r.client.do(ctx, http.MethodGet, u, http.Header{"Accept": {"application/json"}}, nil)
		if err != nil {
			return err
		}
		var page struct {
			Meta struct {
				NextCursor *string `json:"next_cursor"`
			} `json:"meta"`
			Results []json.RawMessage `json:"results"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			return fmt.Errorf("openalex %s: not a list response: %w", entity, err)
		}
		if err := r.write(ctx, ingest.OpenAlex, jsonLines(page.Results, keep)); err != nil {
			return err
		}
		cursor = ""
		if page.Meta.NextCursor != nil && len(page.Results) > 0 {
			cursor = *page.Meta.NextCursor
		}
	}
	return nil
}

// jsonLines puts each object that keep keeps on a line of its own; nulls
// (Semantic Scholar's "not found") are left out.
func jsonLines(objs []json.RawMessage, keep func(json.RawMessage) bool) []byte {
	var b bytes.Buffer
	for _, o := range objs {
		if len(o) == 0 || string(o) == "null" || (keep != nil && !keep(o)) {
			continue
		}
		// o is valid JSON, out of a decoded response, so Compact cannot fail.
		_ = json.Compact(&b, o)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

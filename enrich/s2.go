package enrich

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/ingest"
)

// The fields asked of Semantic Scholar: those ingest's S2AG reader maps.
// The Graph API spells them in camel case where the datasets use lower
// case, which Go's JSON decoding matches alike.
const (
	s2PaperFields  = "corpusId,externalIds,title,publicationDate,citationCount,authors"
	s2AuthorFields = "name,externalIds,paperCount,citationCount,hIndex"
	// s2AuthorBatch is the most ids /author/batch takes.
	s2AuthorBatch = 1000
)

// s2Papers asks Semantic Scholar's /paper/batch about the papers by arXiv
// id, or by DOI for a paper without one.
func (r *run) s2Papers(ctx context.Context) error {
	return batches(ctx, r, sourceS2Papers,
		func(last *db.EnrichPaper) ([]db.EnrichPaper, error) {
			return db.PapersToEnrich(ctx, r.db, sourceS2Papers, r.staleBefore, last, r.o.BatchS2)
		},
		func(p db.EnrichPaper) int64 { return p.ID },
		func(ps []db.EnrichPaper) error {
			ids := make([]string, len(ps))
			for i, p := range ps {
				ids[i] = "ARXIV:" + p.ArxivID
				if p.ArxivID == "" {
					ids[i] = "DOI:" + p.DOI
				}
			}
			return r.s2Batch(ctx, "paper", s2PaperFields, ids)
		})
}

// s2Authors asks /author/batch for the figures of the researchers linked
// to a Semantic Scholar author.
func (r *run) s2Authors(ctx context.Context) error {
	return batches(ctx, r, sourceS2Authors,
		func(last *db.EnrichResearcher) ([]db.EnrichResearcher, error) {
			return db.ResearchersToEnrich(ctx, r.db, sourceS2Authors, true, r.staleBefore, lastID(last), min(s2AuthorBatch, 2*r.o.BatchS2))
		},
		func(x db.EnrichResearcher) int64 { return x.ID },
		func(xs []db.EnrichResearcher) error {
			ids := make([]string, len(xs))
			for i, x := range xs {
				ids[i] = x.ExternalID
			}
			return r.s2Batch(ctx, "author", s2AuthorFields, ids)
		})
}

// s2Batch posts ids to /{kind}/batch and writes the objects found. The
// answer lists one object per id in the order asked, null for an id
// Semantic Scholar does not know; an author object for another id than
// the one asked (a merged profile) is left out, having no evidence here.
func (r *run) s2Batch(ctx context.Context, kind, fields string, ids []string) error {
	body, err := json.Marshal(map[string][]string{"ids": ids})
	if err != nil {
		return err
	}
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}
	if r.o.S2Key != "" {
		h.Set("x-api-key", r.o.S2Key)
	}
	u := strings.TrimSuffix(r.o.S2URL, "/") + "/" + kind + "/batch?fields=" + fields
	resp, err := r.client.do(ctx, http.MethodPost, u, h, body)
	if err != nil {
		return err
	}
	var objs []json.RawMessage
	if err := json.Unmarshal(resp, &objs); err != nil {
		return fmt.Errorf("s2 %s batch: not a list response: %w", kind, err)
	}
	var keep func(json.RawMessage) bool
	if kind == "author" {
		asked := map[string]bool{}
		for _, id := range ids {
			asked[id] = true
		}
		keep = func(raw json.RawMessage) bool {
			var a struct {
				AuthorID string `json:"authorId"`
			}
			return json.Unmarshal(raw, &a) != nil || asked[a.AuthorID]
		}
	}
	return r.write(ctx, ingest.S2AG, jsonLines(objs, keep))
}

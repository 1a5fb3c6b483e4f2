package db_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
)

// TestResolveReferencesInChunks: references resolved two citing papers at
// a time leave the edges and citation counts that one statement leaves,
// including references whose citing papers fall in different chunks,
// targets that are not in the archive, and targets that arrive after the
// references to them (the rest are resolved as they are written).
func TestResolveReferencesInChunks(t *testing.T) {
	for _, chunk := range []int64{1, 2, 1000} {
		t.Run(fmt.Sprint("chunk ", chunk), func(t *testing.T) {
			defer db.SetResolveChunk(chunk)()
			dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
				ctx := context.Background()
				papers := make([]db.Paper, 7)
				for i := range papers {
					papers[i] = db.Paper{ArxivID: fmt.Sprintf("2401.%05d", i+1), Title: fmt.Sprint("Paper ", i+1)}
				}
				// Paper 2 comes after the references to it.
				early := append([]db.Paper{papers[0]}, papers[2:]...)
				if _, err := bdb.NewInsert().Model(&early).Exec(ctx); err != nil {
					t.Fatal(err)
				}
				papers[0] = early[0]
				copy(papers[2:], early[1:])
				id := func(n int) int64 { return papers[n-1].ID }
				// Papers 3 to 7 cite 1; 4 to 7 cite 2; 6 cites 5; 7 cites
				// an arXiv id not in the archive.
				var refs []db.Reference
				for n := 3; n <= 7; n++ {
					refs = append(refs, db.Reference{CitingID: id(n), Target: "2401.00001"})
					if n >= 4 {
						refs = append(refs, db.Reference{CitingID: id(n), Target: "2401.00002"})
					}
				}
				refs = append(refs, db.Reference{CitingID: id(6), Target: "2401.00005"},
					db.Reference{CitingID: id(7), Target: "2402.99999"})
				if err := bdb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
					return db.AddReferences(ctx, tx, refs)
				}); err != nil {
					t.Fatal(err)
				}
				var unresolved []string
				if err := bdb.NewRaw(`SELECT DISTINCT target FROM paper_references WHERE cited_id IS NULL ORDER BY target`).Scan(ctx, &unresolved); err != nil {
					t.Fatal(err)
				}
				if want := []string{"2401.00002", "2402.99999"}; !slices.Equal(unresolved, want) {
					t.Errorf("references written unresolved = %q, want %q: those to papers in the archive resolve as written", unresolved, want)
				}
				if _, err := bdb.NewInsert().Model(&papers[1]).Exec(ctx); err != nil {
					t.Fatal(err)
				}
				if err := db.ResolveReferences(ctx, bdb); err != nil {
					t.Fatal(err)
				}
				var got []string
				if err := bdb.NewRaw(`SELECT p.arxiv_id || ' ' || CAST(p.archive_citation_count AS TEXT) || ' ' ||
					CAST(p.citation_count AS TEXT) FROM papers p ORDER BY p.arxiv_id`).Scan(ctx, &got); err != nil {
					t.Fatal(err)
				}
				want := []string{"2401.00001 5 5", "2401.00002 4 4", "2401.00003 0 0", "2401.00004 0 0",
					"2401.00005 1 1", "2401.00006 0 0", "2401.00007 0 0"}
				if !slices.Equal(got, want) {
					t.Errorf("papers' citation counts = %q, want %q", got, want)
				}
				unresolved = nil
				if err := bdb.NewRaw(`SELECT target FROM paper_references WHERE cited_id IS NULL`).Scan(ctx, &unresolved); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(unresolved, []string{"2402.99999"}) {
					t.Errorf("unresolved references = %q, want the one outside the archive", unresolved)
				}
			})
		})
	}
}

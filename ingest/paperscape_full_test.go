package ingest_test

import (
	"bufio"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ingest"
)

// paperscapeFacts reads a Paperscape file independently of the importer:
// the entry count its trailer states, its ids, and its references.
func paperscapeFacts(t *testing.T, path string) (stated int, ids []string, refs map[string][]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	refs = map[string][]string{}
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if n, ok := strings.CutSuffix(strings.TrimPrefix(line, "# "), " entries"); ok && strings.HasPrefix(line, "# ") {
			stated, _ = strconv.Atoi(n)
			continue
		}
		if line == "" || line[0] == '#' {
			continue
		}
		fields := strings.SplitN(line, ";", 7)
		ids = append(ids, fields[0])
		if fields[4] != "" {
			refs[fields[0]] = strings.Split(fields[4], ",")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return stated, ids, refs
}

// TestPaperscape1991To1996 imports the six Paperscape files of the demo set
// and checks the papers per year against each file's own trailer and the
// citation edges against the in-set references counted here.
func TestPaperscape1991To1996(t *testing.T) {
	if testing.Short() {
		t.Skip("imports 49,264 papers")
	}
	var paths []string
	perYear := map[string]int{}
	inSet := map[string]bool{}
	allRefs := map[string][]string{}
	for year := 1991; year <= 1996; year++ {
		p := fmt.Sprintf("../demo/data/pscp-%d.csv.gz", year)
		paths = append(paths, p)
		stated, ids, refs := paperscapeFacts(t, p)
		if stated != len(ids) {
			t.Fatalf("%s states %d entries and holds %d", p, stated, len(ids))
		}
		perYear[strconv.Itoa(year)] = stated
		for _, id := range ids {
			inSet[id] = true
		}
		for id, rs := range refs {
			allRefs[id] = rs
		}
	}
	wantCitations := 0
	for citing, rs := range allRefs {
		seen := map[string]bool{}
		for _, r := range rs {
			// A paper listing itself among its references makes no edge.
			if inSet[r] && r != citing && !seen[r] {
				seen[r] = true
				wantCitations++
			}
		}
	}
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		importFiles(t, bdb, ingest.Paperscape, paths...)
		var rows []struct {
			Year string
			N    int
		}
		err := bdb.NewSelect().Table("papers").
			ColumnExpr("SUBSTR(CAST(published AS TEXT), 1, 4) AS year, COUNT(*) AS n").
			GroupExpr("SUBSTR(CAST(published AS TEXT), 1, 4)").Scan(context.Background(), &rows)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, r := range rows {
			got[r.Year] = r.N
		}
		if fmt.Sprint(got) != fmt.Sprint(perYear) {
			t.Errorf("papers per year = %v, want %v (the files' trailers)", got, perYear)
		}
		if s := stats(t, bdb); s.Citations != wantCitations {
			t.Errorf("citation edges = %d, want %d", s.Citations, wantCitations)
		}
	})
}

package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/network"
)

// pythonEnv names the environment variable that makes a Python without
// NetworkX and pandas a failure of TestExportsReadInPython rather than a
// skip ("1"), or names the interpreter to use (a path).
const pythonEnv = "PAPERGRAPH_TEST_PYTHON"

// findPython returns a Python that has networkx and pandas: the one
// pythonEnv names, else python3 on PATH, else Debian's /usr/bin/python3
// (python3-networkx and python3-pandas install there, beside a pyenv or
// virtualenv python3 on PATH). It skips the test when there is none and
// pythonEnv does not ask for one.
func findPython(t *testing.T) string {
	t.Helper()
	env := os.Getenv(pythonEnv)
	candidates := []string{"python3", "/usr/bin/python3"}
	if env != "" && env != "1" {
		candidates = []string{env}
	}
	// Finding the modules is enough to choose: importing them (pandas
	// loads numpy) is the test's own work, and a find that an import then
	// contradicts fails the test rather than skipping it.
	const find = "import importlib.util as u, sys; sys.exit(not (u.find_spec('networkx') and u.find_spec('pandas')))"
	for _, c := range candidates {
		if exec.Command(c, "-c", find).Run() == nil {
			return c
		}
	}
	if env == "" {
		t.Skipf("no python3 with networkx and pandas (apt-get install python3-networkx python3-pandas); %s=1 makes this a failure", pythonEnv)
	}
	t.Fatalf("%s=%s: no python3 among %q imports networkx and pandas", pythonEnv, env, candidates)
	return ""
}

// readBack is what testdata/readback.py reports of one file.
type readBack struct {
	Nodes, Edges         int
	Directed             bool
	NodeAttrs, EdgeAttrs []string
	Rows                 int
	Columns              []string
	Complete             *int
}

// TestExportsReadInPython writes every export format to files and reads
// them back with NetworkX (read_graphml, read_gexf) and pandas (read_csv,
// read_json(lines=True)) as an analyst would, checking that they hold the
// network's nodes and edges, or the search's rows, under the columns
// docs/search.md lists.
func TestExportsReadInPython(t *testing.T) {
	python := findPython(t)
	ctx := context.Background()
	dbtest.EachSeeded(t, pscp1992, func(t *testing.T, _ string, bdb *bun.DB) {
		var hub, cited int64
		if err := bdb.NewRaw(`SELECT researcher_id FROM coauthors GROUP BY researcher_id ORDER BY COUNT(*) DESC, researcher_id LIMIT 1`).Scan(ctx, &hub); err != nil {
			t.Fatal(err)
		}
		var citedID string
		if err := bdb.NewRaw(`SELECT id, arxiv_id FROM papers ORDER BY archive_citation_count DESC, id LIMIT 1`).Scan(ctx, &cited, &citedID); err != nil {
			t.Fatal(err)
		}
		coauthors, err := network.Researcher(ctx, bdb, hub, network.Options{Depth: 2, MaxNodes: 40, MinWeight: 1})
		if err != nil {
			t.Fatal(err)
		}
		citations, err := network.Citations(ctx, bdb, cited, network.DefaultOptions)
		if err != nil {
			t.Fatal(err)
		}
		if len(coauthors.Edges) == 0 || len(citations.Edges) == 0 {
			t.Fatalf("networks of %d and %d edges, want some", len(coauthors.Edges), len(citations.Edges))
		}

		h := newTestServer(t, bdb, Config{}).Handler()
		dir := t.TempDir()
		researcher := "/export/researchers/" + strconv.FormatInt(hub, 10) + "/network."
		files := []struct{ name, target string }{
			{"coauthors.graphml", researcher + "graphml?depth=2&maxNodes=40"},
			{"coauthors.gexf", researcher + "gexf?depth=2&maxNodes=40"},
			{"coauthors.json", researcher + "json?depth=2&maxNodes=40"},
			{"coauthors.csv", researcher + "csv?depth=2&maxNodes=40"},
			{"citations.graphml", "/export/papers/" + citedID + "/citation-network.graphml"},
			{"citations.gexf", "/export/papers/" + citedID + "/citation-network.gexf"},
			{"search.csv", "/export/search?query=string*&format=csv"},
			{"search.jsonl", "/export/search?query=string*&format=jsonl"},
		}
		var names []string
		searchRows := map[string]int{}
		for _, f := range files {
			rec := serve(h, httptest.NewRequest(http.MethodGet, f.target, nil))
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s = %d %q", f.target, rec.Code, rec.Body.String())
			}
			if format, ok := strings.CutPrefix(f.name, "search."); ok {
				searchRows[format] = len(exportRows(t, format, rec.Body.Bytes()))
			}
			if err := os.WriteFile(filepath.Join(dir, f.name), rec.Body.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
			names = append(names, f.name)
		}
		if searchRows["csv"] == 0 || searchRows["csv"] != searchRows["jsonl"] {
			t.Fatalf("search exports of %v rows, want the same number, and some", searchRows)
		}

		cmd := exec.Command(python, append([]string{"testdata/readback.py", dir}, names...)...)
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("readback.py: %v", err)
		}
		var got map[string]readBack
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("readback.py printed %q: %v", out, err)
		}

		// NetworkX keeps the edges' ids as an attribute.
		nodeAttrs, edgeAttrs := []string{"depth", "label", "paperCount"}, []string{"id", "weight"}
		graphs := []struct {
			name     string
			g        *network.Graph
			directed bool
		}{
			{"coauthors.graphml", coauthors, false},
			{"coauthors.gexf", coauthors, false},
			{"citations.graphml", citations, true},
			{"citations.gexf", citations, true},
		}
		for _, tt := range graphs {
			g := got[tt.name]
			if g.Nodes != len(tt.g.Nodes) || g.Edges != len(tt.g.Edges) || g.Directed != tt.directed {
				t.Errorf("%s reads as %d nodes, %d edges, directed %t; want %d, %d, %t",
					tt.name, g.Nodes, g.Edges, g.Directed, len(tt.g.Nodes), len(tt.g.Edges), tt.directed)
			}
			if !slices.Equal(g.NodeAttrs, nodeAttrs) || !slices.Equal(g.EdgeAttrs, edgeAttrs) {
				t.Errorf("%s node attributes %q, edge attributes %q; want %q, %q", tt.name, g.NodeAttrs, g.EdgeAttrs, nodeAttrs, edgeAttrs)
			}
		}
		if g, want := got["coauthors.json"], []string{"depth", "id", "label", "paperCount"}; g.Nodes != len(coauthors.Nodes) ||
			g.Edges != len(coauthors.Edges) || !slices.Equal(g.NodeAttrs, want) || !slices.Equal(g.EdgeAttrs, []string{"id", "source", "target", "weight"}) {
			t.Errorf("coauthors.json reads as %+v; want %d nodes with %q, %d edges", g, len(coauthors.Nodes), want, len(coauthors.Edges))
		}
		if g, want := got["coauthors.csv"], []string{"source", "target", "weight", "sourceLabel", "targetLabel"}; g.Rows != len(coauthors.Edges) || !slices.Equal(g.Columns, want) {
			t.Errorf("coauthors.csv reads as %d rows of %q; want %d of %q", g.Rows, g.Columns, len(coauthors.Edges), want)
		}
		for _, format := range []string{"csv", "jsonl"} {
			g := got["search."+format]
			if g.Rows != searchRows[format] || !slices.Equal(g.Columns, searchColumns) {
				t.Errorf("search.%s reads as %d rows of %q; want %d of %q", format, g.Rows, g.Columns, searchRows[format], searchColumns)
			}
		}
		if c := got["search.jsonl"].Complete; c == nil || *c != searchRows["jsonl"] {
			t.Errorf("search.jsonl's end line reads as %v, want complete with %d rows", c, searchRows["jsonl"])
		}
	})
}

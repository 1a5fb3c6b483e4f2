package server

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"mime"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/graph/model"
	"github.com/papergraph/papergraph/network"
)

// exported is a network file as the tests read it back: its node and edge
// ids, and the weight and label columns where the format has them.
type exported struct {
	nodes, edges []string // ids; edges as "source>target"
	edgeIDs      []string // where the format has them
	labels       []string // of the nodes, in order
}

// The structs the formats decode into, with a real parser each.
type (
	graphmlFile struct {
		XMLName xml.Name `xml:"graphml"`
		Keys    []struct {
			ID   string `xml:"id,attr"`
			For  string `xml:"for,attr"`
			Name string `xml:"attr.name,attr"`
		} `xml:"key"`
		Graph struct {
			EdgeDefault string `xml:"edgedefault,attr"`
			Nodes       []struct {
				ID   string `xml:"id,attr"`
				Data []struct {
					Key   string `xml:"key,attr"`
					Value string `xml:",chardata"`
				} `xml:"data"`
			} `xml:"node"`
			Edges []struct {
				ID     string `xml:"id,attr"`
				Source string `xml:"source,attr"`
				Target string `xml:"target,attr"`
				Data   []struct {
					Key   string `xml:"key,attr"`
					Value string `xml:",chardata"`
				} `xml:"data"`
			} `xml:"edge"`
		} `xml:"graph"`
	}
	gexfFile struct {
		XMLName        xml.Name
		Version        string `xml:"version,attr"`
		SchemaLocation string `xml:"http://www.w3.org/2001/XMLSchema-instance schemaLocation,attr"`
		Graph          struct {
			Mode            string `xml:"mode,attr"`
			DefaultEdgeType string `xml:"defaultedgetype,attr"`
			Attributes      []struct {
				ID    string `xml:"id,attr"`
				Title string `xml:"title,attr"`
				Type  string `xml:"type,attr"`
			} `xml:"attributes>attribute"`
			Nodes []struct {
				ID        string `xml:"id,attr"`
				Label     string `xml:"label,attr"`
				AttValues []struct {
					For   string `xml:"for,attr"`
					Value string `xml:"value,attr"`
				} `xml:"attvalues>attvalue"`
			} `xml:"nodes>node"`
			Edges []struct {
				ID     string `xml:"id,attr"`
				Source string `xml:"source,attr"`
				Target string `xml:"target,attr"`
				Weight string `xml:"weight,attr"`
			} `xml:"edges>edge"`
		} `xml:"graph"`
	}
	cytoscapeFile struct {
		Elements struct {
			Nodes []struct {
				Data struct {
					ID, Label         string
					Depth, PaperCount int
				}
			}
			Edges []struct {
				Data struct {
					ID, Source, Target string
					Weight             int
				}
			}
		}
		Truncated bool
	}
)

// gexfNamespaces are the namespaces of the GEXF versions, as their XML
// schemas (https://gexf.net/schema.html) declare them.
var gexfNamespaces = map[string]string{"1.2": "http://www.gexf.net/1.2draft", "1.3": "http://gexf.net/1.3"}

// parseExport reads body in the format named by ext ("gexf" and
// "gexf1.3" for the two GEXF versions), failing t on anything a graph
// tool would choke on or the format's schema refuses.
func parseExport(t *testing.T, ext string, body []byte, directed bool) exported {
	t.Helper()
	var out exported
	edge := func(s, d string) string { return s + ">" + d }
	switch ext {
	case "graphml":
		var f graphmlFile
		if err := xml.Unmarshal(body, &f); err != nil {
			t.Fatal(err)
		}
		if len(f.Keys) != 4 || (f.Graph.EdgeDefault == "directed") != directed {
			t.Errorf("graphml keys %+v, edgedefault %q", f.Keys, f.Graph.EdgeDefault)
		}
		for _, n := range f.Graph.Nodes {
			out.nodes = append(out.nodes, n.ID)
			if len(n.Data) != 3 || n.Data[0].Key != "label" {
				t.Fatalf("graphml node %+v, want label, depth and paperCount", n)
			}
			out.labels = append(out.labels, n.Data[0].Value)
		}
		for _, e := range f.Graph.Edges {
			out.edges = append(out.edges, edge(e.Source, e.Target))
			out.edgeIDs = append(out.edgeIDs, e.ID)
			if len(e.Data) != 1 || e.Data[0].Key != "weight" {
				t.Fatalf("graphml edge %+v, want a weight", e)
			}
		}
	case "gexf", "gexf1.3":
		var f gexfFile
		if err := xml.Unmarshal(body, &f); err != nil {
			t.Fatal(err)
		}
		version := map[string]string{"gexf": "1.2", "gexf1.3": "1.3"}[ext]
		ns := gexfNamespaces[version]
		if f.XMLName.Space != ns || f.Version != version || f.SchemaLocation != ns+" "+ns+"/gexf.xsd" {
			t.Errorf("gexf namespace %q, version %q, schemaLocation %q; want version %s", f.XMLName.Space, f.Version, f.SchemaLocation, version)
		}
		wantAttrs := "depth depth integer, paperCount paperCount integer"
		var attrs []string
		for _, a := range f.Graph.Attributes {
			attrs = append(attrs, a.ID+" "+a.Title+" "+a.Type)
		}
		if got := strings.Join(attrs, ", "); got != wantAttrs || f.Graph.Mode != "static" || (f.Graph.DefaultEdgeType == "directed") != directed {
			t.Errorf("gexf attributes %q, mode %q, defaultedgetype %q; want %q", got, f.Graph.Mode, f.Graph.DefaultEdgeType, wantAttrs)
		}
		for _, n := range f.Graph.Nodes {
			out.nodes = append(out.nodes, n.ID)
			out.labels = append(out.labels, n.Label)
			if len(n.AttValues) != 2 {
				t.Fatalf("gexf node %+v, want depth and paperCount", n)
			}
		}
		for _, e := range f.Graph.Edges {
			out.edges = append(out.edges, edge(e.Source, e.Target))
			out.edgeIDs = append(out.edgeIDs, e.ID)
			if _, err := strconv.Atoi(e.Weight); err != nil || e.ID == "" {
				t.Fatalf("gexf edge %+v: want an id and a weight (%v)", e, err)
			}
		}
	case "json":
		var f cytoscapeFile
		if err := json.Unmarshal(body, &f); err != nil {
			t.Fatal(err)
		}
		for _, n := range f.Elements.Nodes {
			out.nodes = append(out.nodes, n.Data.ID)
			out.labels = append(out.labels, n.Data.Label)
		}
		for _, e := range f.Elements.Edges {
			out.edges = append(out.edges, edge(e.Data.Source, e.Data.Target))
			out.edgeIDs = append(out.edgeIDs, e.Data.ID)
		}
	case "csv":
		records, err := csv.NewReader(strings.NewReader(string(body))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(records[0], ","); got != "source,target,weight,sourceLabel,targetLabel" {
			t.Errorf("csv header %q", got)
		}
		for _, r := range records[1:] {
			out.edges = append(out.edges, edge(r[0], r[1]))
		}
	}
	return out
}

func TestExports(t *testing.T) {
	ctx := context.Background()
	dbtest.EachSeeded(t, pscp1992, func(t *testing.T, _ string, bdb *bun.DB) {
		h := newTestServer(t, bdb, Config{}).Handler()
		var hub struct {
			ID   int64
			Slug string
		}
		if err := bdb.NewRaw(`SELECT r.id, r.slug FROM researchers r
			WHERE r.id = (SELECT researcher_id FROM coauthors GROUP BY researcher_id ORDER BY COUNT(*) DESC, researcher_id LIMIT 1)`).
			Scan(ctx, &hub); err != nil {
			t.Fatal(err)
		}
		var cited struct {
			ID      int64
			ArxivID string
		}
		if err := bdb.NewRaw(`SELECT id, arxiv_id FROM papers ORDER BY archive_citation_count DESC, id LIMIT 1`).Scan(ctx, &cited); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(cited.ArxivID, "/") {
			t.Fatalf("most cited paper %q, want an old-style id", cited.ArxivID)
		}
		hubID := strconv.FormatInt(hub.ID, 10)

		// The formats by the name parseExport knows them by: the file's
		// extension, the parameter that selects it, the content type.
		formats := map[string]struct{ ext, param, contentType string }{
			"graphml": {"graphml", "", "application/graphml+xml"},
			"gexf":    {"gexf", "", "application/gexf+xml"},
			"gexf1.3": {"gexf", "gexf=1.3", "application/gexf+xml"},
			"json":    {"json", "", "application/json"},
			"csv":     {"csv", "", "text/csv; charset=utf-8"},
		}
		subjects := []struct {
			name, path, wantFile string
			directed             bool
			graph                func() (*network.Graph, error)
			prefix               string
		}{
			{"researcher depth 2", "/export/researchers/" + hubID + "/network.%s?depth=2&maxNodes=30",
				"researcher-" + hubID + "-network.%s", false,
				func() (*network.Graph, error) {
					return network.Researcher(ctx, bdb, hub.ID, network.Options{Depth: 2, MaxNodes: 30, MinWeight: 1})
				}, "r"},
			{"researcher by slug", "/export/researchers/" + hubID + "-" + hub.Slug + "/network.%s?minWeight=2",
				"researcher-" + hubID + "-network.%s", false,
				func() (*network.Graph, error) {
					return network.Researcher(ctx, bdb, hub.ID, network.Options{Depth: 1, MaxNodes: 100, MinWeight: 2})
				}, "r"},
			{"researcher by global id", "/export/researchers/" + model.GlobalID(model.KindResearcher, hub.ID) + "/network.%s",
				"researcher-" + hubID + "-network.%s", false,
				func() (*network.Graph, error) { return network.Researcher(ctx, bdb, hub.ID, network.DefaultOptions) }, "r"},
			{"citations", "/export/papers/" + cited.ArxivID + "/citation-network.%s",
				"paper-" + strings.ReplaceAll(cited.ArxivID, "/", "-") + "-citation-network.%s", true,
				func() (*network.Graph, error) { return network.Citations(ctx, bdb, cited.ID, network.DefaultOptions) }, "p"},
			{"citations by arXiv URL form", "/export/papers/arXiv:" + cited.ArxivID + "v2/citation-network.%s?depth=2&maxNodes=2000",
				"paper-" + strings.ReplaceAll(cited.ArxivID, "/", "-") + "-citation-network.%s", true,
				func() (*network.Graph, error) {
					return network.Citations(ctx, bdb, cited.ID, network.Options{Depth: 2, MaxNodes: 2000, MinWeight: 1})
				}, "p"},
		}
		for _, s := range subjects {
			g, err := s.graph()
			if err != nil || g == nil || len(g.Edges) == 0 {
				t.Fatalf("%s: got %+v, %v; want a network with edges", s.name, g, err)
			}
			var wantNodes, wantEdges []string
			for _, n := range g.Nodes {
				wantNodes = append(wantNodes, s.prefix+strconv.FormatInt(n.ID, 10))
			}
			for _, e := range g.Edges {
				wantEdges = append(wantEdges, s.prefix+strconv.FormatInt(e.Source, 10)+">"+s.prefix+strconv.FormatInt(e.Target, 10))
			}
			for name, f := range formats {
				t.Run(s.name+" "+name, func(t *testing.T) {
					ext, wantType := f.ext, f.contentType
					target := strings.Replace(s.path, "%s", ext, 1)
					if f.param != "" {
						target += map[bool]string{false: "?", true: "&"}[strings.Contains(target, "?")] + f.param
					}
					rec := serve(h, httptest.NewRequest("GET", target, nil))
					if rec.Code != http.StatusOK {
						t.Fatalf("status = %d, want 200 (body %q)", rec.Code, rec.Body.String())
					}
					if got := rec.Header().Get("Content-Type"); got != wantType {
						t.Errorf("Content-Type = %q, want %q", got, wantType)
					}
					disp, params, err := mime.ParseMediaType(rec.Header().Get("Content-Disposition"))
					if wantFile := strings.Replace(s.wantFile, "%s", ext, 1); err != nil || disp != "attachment" || params["filename"] != wantFile {
						t.Errorf("Content-Disposition = %q, want an attachment named %q", rec.Header().Get("Content-Disposition"), wantFile)
					}
					if got, want := rec.Header().Get(truncatedHeader), strconv.FormatBool(g.Truncated); got != want {
						t.Errorf("%s = %q, want %q", truncatedHeader, got, want)
					}
					if got := rec.Result().Trailer.Get(exportStatusTrailer); got != "complete" {
						t.Errorf("trailer %s = %q, want complete", exportStatusTrailer, got)
					}
					got := parseExport(t, name, rec.Body.Bytes(), s.directed)
					if ext != "csv" {
						if strings.Join(got.nodes, " ") != strings.Join(wantNodes, " ") {
							t.Errorf("nodes = %v, want %v", got.nodes, wantNodes)
						}
						if got.labels[0] != g.Nodes[0].Label || got.labels[0] == "" {
							t.Errorf("centre label = %q, want %q", got.labels[0], g.Nodes[0].Label)
						}
						// Edge ids are the same in every format.
						for i, id := range got.edgeIDs {
							if want := "e" + strconv.Itoa(i); id != want {
								t.Fatalf("edge %d has id %q, want %q", i, id, want)
							}
						}
					}
					if strings.Join(got.edges, " ") != strings.Join(wantEdges, " ") {
						t.Errorf("%d edges, want %d", len(got.edges), len(wantEdges))
					}
				})
			}
		}

		errs := []struct {
			name, target string
			wantStatus   int
			wantBody     string
		}{
			{"unknown researcher", "/export/researchers/999999999/network.json", 404, "no such researcher"},
			{"researcher not a number", "/export/researchers/abc/network.json", 404, "no such researcher"},
			{"unknown institution", "/export/institutions/999999999/network.graphml", 404, "no such institution"},
			{"unknown institution by name", "/export/institutions/No%20Such%20Place/network.graphml", 404, "no such institution"},
			{"unknown researcher by ORCID", "/export/researchers/0000-0002-1825-0097/network.csv", 404, "no such researcher"},
			{"unknown paper", "/export/papers/hep-th/9912999/citation-network.gexf", 404, "no such paper"},
			{"not an arXiv id", "/export/papers/nonsense/citation-network.gexf", 404, "no such paper"},
			{"unknown format", "/export/researchers/" + hubID + "/network.pdf", 404, "no such export"},
			{"wrong file", "/export/researchers/" + hubID + "/citation-network.csv", 404, "no such export"},
			{"paper without file", "/export/papers/0704.0001", 404, "no such export"},
			{"depth too large", "/export/researchers/" + hubID + "/network.csv?depth=4", 400, "depth: must be between 1 and 3"},
			{"depth not a number", "/export/researchers/" + hubID + "/network.csv?depth=two", 400, "depth: not an integer"},
			{"maxNodes too large", "/export/institutions/1/network.csv?maxNodes=2001", 400, "maxNodes: must be between 1 and 2000"},
			{"minWeight zero", "/export/researchers/" + hubID + "/network.csv?minWeight=0", 400, "minWeight: must be at least 1"},
			{"citation minWeight", "/export/papers/" + cited.ArxivID + "/citation-network.csv?minWeight=2", 400, "minWeight:"},
			{"unknown GEXF version", "/export/researchers/" + hubID + "/network.gexf?gexf=1.4", 400, "gexf: must be 1.2draft or 1.3"},
			{"POST", "/export/researchers/" + hubID + "/network.csv", 405, ""},
		}
		for _, tt := range errs {
			t.Run(tt.name, func(t *testing.T) {
				method := "GET"
				if tt.name == "POST" {
					method = "POST"
				}
				rec := serve(h, httptest.NewRequest(method, tt.target, nil))
				if rec.Code != tt.wantStatus || !strings.HasPrefix(rec.Body.String(), tt.wantBody) {
					t.Errorf("got %d %q, want %d %q", rec.Code, rec.Body.String(), tt.wantStatus, tt.wantBody)
				}
				if got := rec.Header().Get("Content-Type"); tt.wantStatus != 405 && got != "text/plain; charset=utf-8" {
					t.Errorf("Content-Type = %q, want plain text", got)
				}
			})
		}
	})
}

func TestSpreadsheetSafe(t *testing.T) {
	tests := []struct{ in, want string }{
		{"C. Itzykson", "C. Itzykson"},
		{"=HYPERLINK(\"x\")", "'=HYPERLINK(\"x\")"},
		{"+1", "'+1"},
		{"-x", "'-x"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := spreadsheetSafe(tt.in); got != tt.want {
			t.Errorf("spreadsheetSafe(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

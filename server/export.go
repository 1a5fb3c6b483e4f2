package server

import (
	"bufio"
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/network"
	"github.com/papergraph/papergraph/reqid"
	"github.com/papergraph/papergraph/resolvers"
)

// truncatedHeader says whether maxNodes left nodes out of an export.
const truncatedHeader = "Papergraph-Truncated"

// The columns of every export are named as the GraphQL schema names the
// fields they hold, in camelCase: arxivId, citationCount, paperCount,
// sourceLabel. CSV headers, JSON keys and GraphML and GEXF attribute ids
// and titles all use these names (docs/search.md, "Exports").

// exportFormat is one file format networks are exported in.
type exportFormat struct {
	contentType string
	write       func(w io.Writer, g exportGraph) error
}

// exportFormats are the formats by file extension.
var exportFormats = map[string]exportFormat{
	"graphml": {"application/graphml+xml", writeGraphML},
	"gexf":    {"application/gexf+xml", writeGEXF},
	"json":    {"application/json", writeCytoscape},
	"csv":     {"text/csv; charset=utf-8", writeCSV},
}

// exportGraph is a network as the files show it: node ids are the
// database ids behind a letter that names their kind ("r123"), so that ids
// of different kinds never meet in one tool.
type exportGraph struct {
	*network.Graph
	prefix   string
	directed bool
	gexf     gexfVersion
}

func (g exportGraph) nodeID(id int64) string { return g.prefix + strconv.FormatInt(id, 10) }

// exportSubject is what a family of export routes is about.
type exportSubject struct {
	noun     string // in messages and file names
	prefix   string // of node ids
	file     string // the name of the file before its extension
	directed bool
	// graph resolves ref, the path's id, and reads the network: nil
	// (and a nil error) when there is no such subject. name is the
	// canonical id, for the file name.
	graph func(ctx context.Context, bdb bun.IDB, ref string, o network.Options) (g *network.Graph, name string, err error)
}

var (
	researcherExport  = exportSubject{noun: "researcher", prefix: "r", file: "network", graph: byRef(resolvers.ResearcherByRef, network.Researcher)}
	institutionExport = exportSubject{noun: "institution", prefix: "i", file: "network", graph: byRef(resolvers.InstitutionByRef, network.Institution)}
	citationExport    = exportSubject{noun: "paper", prefix: "p", file: "citation-network", directed: true, graph: paperNetwork}
)

// byRef resolves a reference in any form the GraphQL argument takes
// (resolve is the resolvers package's) and reads the network of the id;
// a malformed reference names no subject.
func byRef(resolve func(context.Context, bun.IDB, string) (int64, error),
	read func(context.Context, bun.IDB, int64, network.Options) (*network.Graph, error)) func(context.Context, bun.IDB, string, network.Options) (*network.Graph, string, error) {
	return func(ctx context.Context, bdb bun.IDB, ref string, o network.Options) (*network.Graph, string, error) {
		id, err := resolve(ctx, bdb, ref)
		if err != nil || id == 0 {
			return nil, "", notInput(err)
		}
		g, err := read(ctx, bdb, id, o)
		return g, strconv.FormatInt(id, 10), err
	}
}

// paperNetwork resolves an arXiv id or a DOI in any form `paper(id:)`
// takes.
func paperNetwork(ctx context.Context, bdb bun.IDB, ref string, o network.Options) (*network.Graph, string, error) {
	p, err := resolvers.PaperByRef(ctx, bdb, ref)
	if err != nil || p == nil {
		return nil, "", notInput(err)
	}
	g, err := network.Citations(ctx, bdb, p.ID, o)
	return g, strings.ReplaceAll(cmp.Or(p.ArxivID, p.DOI), "/", "-"), err
}

// notInput is err unless it is a malformed reference, which names no
// subject (nil).
func notInput(err error) error {
	var ie *resolvers.InputError
	if errors.As(err, &ie) {
		return nil
	}
	return err
}

// exportPoints is what a network export costs of its client's budget, and
// a search export for each page of searchExportPage papers: the price of
// the GraphQL query that reads as much.
const exportPoints = 1

// handleExports adds the export routes to mux. Old-style arXiv ids and
// DOIs hold slashes, so the paper route takes the rest of the path and
// splits the file name off its end.
func handleExports(mux *routeMux, bdb *bun.DB, log *slog.Logger) {
	serve := func(s exportSubject, split func(*http.Request) (ref, file string)) http.Handler {
		return withTimeout(queryTimeout, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ref, file := split(r)
			s.serve(w, r, bdb, log, ref, file)
		}))
	}
	byID := func(r *http.Request) (string, string) { return r.PathValue("id"), r.PathValue("file") }
	mux.Handle("GET /export/researchers/{id}/{file}", serve(researcherExport, byID))
	mux.Handle("GET /export/institutions/{id}/{file}", serve(institutionExport, byID))
	mux.Handle("GET /export/papers/{path...}", serve(citationExport, func(r *http.Request) (string, string) {
		path := r.PathValue("path")
		i := strings.LastIndexByte(path, '/')
		if i < 0 {
			return "", ""
		}
		return path[:i], path[i+1:]
	}))
}

// serve answers one export: 404 for an unknown file name or subject, 400
// naming a bad parameter, a 5xx with a JSON error when the network cannot
// be read, else the network in the format the file name's extension asks
// for, written as it is encoded, and the trailer that says it is whole.
func (s exportSubject) serve(w http.ResponseWriter, r *http.Request, bdb bun.IDB, log *slog.Logger, ref, file string) {
	ext, ok := strings.CutPrefix(file, s.file+".")
	format, known := exportFormats[ext]
	if !ok || !known {
		http.Error(w, "no such export: use "+s.file+".graphml, .gexf, .json or .csv", http.StatusNotFound)
		return
	}
	o, gexf, err := exportOptions(r)
	if err == nil {
		err = o.Validate()
	}
	var g *network.Graph
	var name string
	if err == nil {
		_, err = spendPoints(r.Context(), exportPoints)
	}
	if err == nil {
		g, name, err = s.graph(r.Context(), bdb, ref, o)
	}
	var argErr *network.ArgError
	switch {
	case errors.As(err, &argErr):
		http.Error(w, argErr.Error(), http.StatusBadRequest)
		return
	case err != nil:
		exportError(w, failure(r, log, "export could not start", err))
		return
	case g == nil:
		http.Error(w, "no such "+s.noun, http.StatusNotFound)
		return
	}

	h := w.Header()
	h.Set("Content-Type", format.contentType)
	// Only JSON has room to say so in the file itself.
	h.Set(truncatedHeader, strconv.FormatBool(g.Truncated))
	h.Set("Content-Disposition", mime.FormatMediaType("attachment",
		map[string]string{"filename": fmt.Sprintf("%s-%s-%s.%s", s.noun, name, s.file, ext)}))
	announceTrailers(h, false)
	// The network is read whole before the first byte, so only a write to
	// the client can fail from here on, and nothing more would reach it:
	// the file lacks its end and the trailer says so.
	bw := bufio.NewWriterSize(w, 32<<10)
	err = format.write(bw, exportGraph{Graph: g, prefix: s.prefix, directed: s.directed, gexf: gexf})
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		log.WarnContext(r.Context(), "export cut short", "request_id", reqid.From(r.Context()), "err", err)
	}
	setTrailers(h, err == nil, -1)
}

// exportOptions reads depth, maxNodes and minWeight from the query string,
// each defaulting to network.DefaultOptions, and the GEXF version (gexf,
// 1.2draft unless given; any export takes it, only GEXF files use it).
func exportOptions(r *http.Request) (network.Options, gexfVersion, error) {
	o := network.DefaultOptions
	q := r.URL.Query()
	gexf, ok := gexfVersions[cmp.Or(q.Get("gexf"), "1.2draft")]
	if !ok {
		return o, gexf, &network.ArgError{Arg: "gexf", Msg: "must be 1.2draft or 1.3"}
	}
	for _, p := range []struct {
		name string
		v    *int
	}{{"depth", &o.Depth}, {"maxNodes", &o.MaxNodes}, {"minWeight", &o.MinWeight}} {
		if s := q.Get(p.name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil {
				return o, gexf, &network.ArgError{Arg: p.name, Msg: "not an integer"}
			}
			*p.v = n
		}
	}
	return o, gexf, nil
}

// GraphML (http://graphml.graphdrawing.org/), as Gephi, Cytoscape and
// NetworkX read it.
type (
	graphmlKey struct {
		XMLName xml.Name `xml:"key"`
		ID      string   `xml:"id,attr"`
		For     string   `xml:"for,attr"`
		Name    string   `xml:"attr.name,attr"`
		Type    string   `xml:"attr.type,attr"`
	}
	graphmlData struct {
		Key   string `xml:"key,attr"`
		Value string `xml:",chardata"`
	}
	graphmlNode struct {
		XMLName xml.Name      `xml:"node"`
		ID      string        `xml:"id,attr"`
		Data    []graphmlData `xml:"data"`
	}
	graphmlEdge struct {
		xmlEdge
		Data []graphmlData `xml:"data"`
	}
)

// xmlEdge is what an edge element of GraphML and of GEXF both carry: its
// id and the ids of its ends.
type xmlEdge struct {
	XMLName xml.Name `xml:"edge"`
	ID      string   `xml:"id,attr"`
	Source  string   `xml:"source,attr"`
	Target  string   `xml:"target,attr"`
}

// xmlEdge is the i-th edge of g as GraphML and GEXF name it.
func (g exportGraph) xmlEdge(i int) xmlEdge {
	e := g.Edges[i]
	return xmlEdge{ID: "e" + strconv.Itoa(i), Source: g.nodeID(e.Source), Target: g.nodeID(e.Target)}
}

// newGraphEncoder starts an indented XML encoder on w, and says how g's
// edges go in the words GraphML and GEXF share.
func newGraphEncoder(w io.Writer, g exportGraph) (*xml.Encoder, string) {
	enc := xml.NewEncoder(w)
	enc.Indent("", " ")
	if g.directed {
		return enc, "directed"
	}
	return enc, "undirected"
}

func writeGraphML(w io.Writer, g exportGraph) error {
	enc, edgeDefault := newGraphEncoder(w, g)
	root := xml.StartElement{Name: xml.Name{Space: "http://graphml.graphdrawing.org/xmlns", Local: "graphml"}}
	graph := xml.StartElement{Name: xml.Name{Local: "graph"}, Attr: []xml.Attr{
		{Name: xml.Name{Local: "id"}, Value: "G"}, {Name: xml.Name{Local: "edgedefault"}, Value: edgeDefault},
	}}
	return encodeXMLDocument(enc, root, func() error {
		for _, k := range []graphmlKey{
			{ID: "label", For: "node", Name: "label", Type: "string"},
			{ID: "depth", For: "node", Name: "depth", Type: "int"},
			{ID: "paperCount", For: "node", Name: "paperCount", Type: "int"},
			{ID: "weight", For: "edge", Name: "weight", Type: "int"},
		} {
			if err := enc.Encode(k); err != nil {
				return err
			}
		}
		return encodeXML(enc, graph, func() error {
			for _, n := range g.Nodes {
				if err := enc.Encode(graphmlNode{ID: g.nodeID(n.ID), Data: []graphmlData{
					{"label", n.Label}, {"depth", strconv.Itoa(n.Depth)}, {"paperCount", strconv.Itoa(n.PaperCount)},
				}}); err != nil {
					return err
				}
			}
			for i, e := range g.Edges {
				if err := enc.Encode(graphmlEdge{g.xmlEdge(i), []graphmlData{{"weight", strconv.Itoa(e.Weight)}}}); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// gexfVersion is a version of GEXF (https://gexf.net/), Gephi's own
// format: its namespace, the value of its version attribute and where its
// XML schema is.
type gexfVersion struct{ namespace, version, schema string }

// gexfVersions are the versions an export can be written in, by the value
// of its gexf parameter. 1.2draft is the default because the NetworkX
// releases before August 2025 (Debian 12's 2.8.8 among them) read only
// 1.1draft and 1.2draft; Gephi reads both.
var gexfVersions = map[string]gexfVersion{
	"1.2draft": {"http://www.gexf.net/1.2draft", "1.2", "http://www.gexf.net/1.2draft/gexf.xsd"},
	"1.3":      {"http://gexf.net/1.3", "1.3", "http://gexf.net/1.3/gexf.xsd"},
}

// The elements of a GEXF file, the same in 1.2draft and 1.3 for what the
// exports hold.
type (
	gexfAttribute struct {
		XMLName xml.Name `xml:"attribute"`
		ID      string   `xml:"id,attr"`
		Title   string   `xml:"title,attr"`
		Type    string   `xml:"type,attr"`
	}
	gexfAttValue struct {
		For   string `xml:"for,attr"`
		Value string `xml:"value,attr"`
	}
	gexfNode struct {
		XMLName   xml.Name       `xml:"node"`
		ID        string         `xml:"id,attr"`
		Label     string         `xml:"label,attr"`
		AttValues []gexfAttValue `xml:"attvalues>attvalue"`
	}
	gexfEdge struct {
		xmlEdge
		Weight int `xml:"weight,attr"`
	}
)

func writeGEXF(w io.Writer, g exportGraph) error {
	enc, edgeType := newGraphEncoder(w, g)
	root := xml.StartElement{Name: xml.Name{Space: g.gexf.namespace, Local: "gexf"}, Attr: []xml.Attr{
		{Name: xml.Name{Local: "version"}, Value: g.gexf.version},
		{Name: xml.Name{Local: "xmlns:xsi"}, Value: "http://www.w3.org/2001/XMLSchema-instance"},
		{Name: xml.Name{Local: "xsi:schemaLocation"}, Value: g.gexf.namespace + " " + g.gexf.schema},
	}}
	graph := xml.StartElement{Name: xml.Name{Local: "graph"}, Attr: []xml.Attr{
		{Name: xml.Name{Local: "mode"}, Value: "static"}, {Name: xml.Name{Local: "defaultedgetype"}, Value: edgeType},
	}}
	element := func(name string, attrs ...xml.Attr) xml.StartElement {
		return xml.StartElement{Name: xml.Name{Local: name}, Attr: attrs}
	}
	return encodeXMLDocument(enc, root, func() error {
		meta := struct {
			XMLName xml.Name `xml:"meta"`
			Creator string   `xml:"creator"`
		}{Creator: "papergraph"}
		if err := enc.Encode(meta); err != nil {
			return err
		}
		return encodeXML(enc, graph, func() error {
			err := encodeXML(enc, element("attributes", xml.Attr{Name: xml.Name{Local: "class"}, Value: "node"}), func() error {
				for _, a := range []gexfAttribute{{ID: "depth", Title: "depth", Type: "integer"}, {ID: "paperCount", Title: "paperCount", Type: "integer"}} {
					if err := enc.Encode(a); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
			err = encodeXML(enc, element("nodes"), func() error {
				for _, n := range g.Nodes {
					if err := enc.Encode(gexfNode{ID: g.nodeID(n.ID), Label: n.Label, AttValues: []gexfAttValue{
						{"depth", strconv.Itoa(n.Depth)}, {"paperCount", strconv.Itoa(n.PaperCount)},
					}}); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
			return encodeXML(enc, element("edges"), func() error {
				for i, e := range g.Edges {
					if err := enc.Encode(gexfEdge{g.xmlEdge(i), e.Weight}); err != nil {
						return err
					}
				}
				return nil
			})
		})
	})
}

// encodeXMLDocument writes the XML declaration, then the element root
// with what body encodes, and flushes.
func encodeXMLDocument(enc *xml.Encoder, root xml.StartElement, body func() error) error {
	if err := enc.EncodeToken(xml.ProcInst{Target: "xml", Inst: []byte(`version="1.0" encoding="UTF-8"`)}); err != nil {
		return err
	}
	if err := encodeXML(enc, root, body); err != nil {
		return err
	}
	return enc.Close()
}

// encodeXML writes start, what body encodes and the matching end.
func encodeXML(enc *xml.Encoder, start xml.StartElement, body func() error) error {
	if err := enc.EncodeToken(start); err != nil {
		return err
	}
	if err := body(); err != nil {
		return err
	}
	return enc.EncodeToken(start.End())
}

// writeCytoscape writes Cytoscape.js elements JSON
// (https://js.cytoscape.org/#notation/elements-json).
func writeCytoscape(w io.Writer, g exportGraph) error {
	type nodeData struct {
		ID         string `json:"id"`
		Label      string `json:"label"`
		Depth      int    `json:"depth"`
		PaperCount int    `json:"paperCount"`
	}
	type edgeData struct {
		ID     string `json:"id"`
		Source string `json:"source"`
		Target string `json:"target"`
		Weight int    `json:"weight"`
	}
	enc := json.NewEncoder(w)
	// element writes one element of a list, after a comma unless first.
	element := func(i int, data any) error {
		if i > 0 {
			if _, err := io.WriteString(w, ","); err != nil {
				return err
			}
		}
		return enc.Encode(struct {
			Data any `json:"data"`
		}{data})
	}
	if _, err := io.WriteString(w, `{"elements":{"nodes":[`); err != nil {
		return err
	}
	for i, n := range g.Nodes {
		if err := element(i, nodeData{g.nodeID(n.ID), n.Label, n.Depth, n.PaperCount}); err != nil {
			return err
		}
	}
	if _, err := io.WriteString(w, `],"edges":[`); err != nil {
		return err
	}
	for i, e := range g.Edges {
		if err := element(i, edgeData{"e" + strconv.Itoa(i), g.nodeID(e.Source), g.nodeID(e.Target), e.Weight}); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "]},\"truncated\":%t}\n", g.Truncated)
	return err
}

// spreadsheetSafe keeps a label that starts like a formula ("=", "+",
// "-", "@") from being run as one when the CSV is opened in a spreadsheet:
// it gets a leading apostrophe, which spreadsheets show as text.
func spreadsheetSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@", rune(s[0])) {
		return "'" + s
	}
	return s
}

// writeCSV writes the edge list with both ends' labels.
func writeCSV(w io.Writer, g exportGraph) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"source", "target", "weight", "sourceLabel", "targetLabel"}); err != nil {
		return err
	}
	labels := make(map[int64]string, len(g.Nodes))
	for _, n := range g.Nodes {
		labels[n.ID] = spreadsheetSafe(n.Label)
	}
	for _, e := range g.Edges {
		if err := cw.Write([]string{g.nodeID(e.Source), g.nodeID(e.Target), strconv.Itoa(e.Weight), labels[e.Source], labels[e.Target]}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

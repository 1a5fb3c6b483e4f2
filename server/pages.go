package server

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	graphiqlassets "github.com/papergraph/papergraph/graphiql"
	"github.com/papergraph/papergraph/reqid"
)

// ExampleQuery is the query GraphiQL opens with: a paper, its authors, and
// each author's closest co-authors.
const ExampleQuery = `# A paper, its byline and each author's five closest co-authors.
{
  paper(id: "hep-th/9201001") {
    title
    published
    authors {
      name
      researcher {
        name
        paperCount
        coauthors(first: 5) {
          nodes {
            researcher { name }
            sharedPaperCount
          }
        }
      }
    }
  }
}
`

// readyTimeout bounds the database check behind /readyz.
const readyTimeout = 2 * time.Second

// graphiqlPage is GraphiQL's page. It runs no inline script: the bundle
// reads the endpoint and the starting query from #graphiql's attributes.
var graphiqlPage = template.Must(template.New("graphiql").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>papergraph · GraphiQL</title>
<link rel="stylesheet" href="{{.Style}}">
<link rel="license" href="{{.Licenses}}">
<script defer src="{{.Script}}"></script>
</head>
<body>
<div id="graphiql" data-endpoint="{{.Endpoint}}" data-query="{{.Query}}">Loading GraphiQL…</div>
<noscript>GraphiQL needs JavaScript; the GraphQL API is at {{.Endpoint}}</noscript>
</body>
</html>
`))

// graphiqlFiles is where the page's script, style sheet, fonts and licences
// are served.
const graphiqlFiles = "/graphiql/"

// graphiql serves GraphiQL, with the files embedded from package graphiql,
// opening on ExampleQuery or on the query the URL names (the page keeps
// the URL in step with its editors).
func graphiql(endpoint string) http.HandlerFunc {
	var page bytes.Buffer
	err := graphiqlPage.Execute(&page, map[string]string{
		"Script":   graphiqlFiles + graphiqlassets.Script,
		"Style":    graphiqlFiles + graphiqlassets.Style,
		"Licenses": graphiqlFiles + graphiqlassets.Licenses,
		"Endpoint": endpoint,
		"Query":    ExampleQuery,
	})
	if err != nil {
		panic(err)
	}
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Security-Policy", graphiqlCSP)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		w.Write(page.Bytes())
	}
}

// graphiqlAssets serves the files of package graphiql under graphiqlFiles.
// Each is named by its content, so browsers may keep it for good; the
// script, style sheet and licences are sent gzipped to clients that take
// gzip (about a third of their size), compressed once, on first use.
func graphiqlAssets() http.Handler {
	files := map[string]*asset{}
	err := fs.WalkDir(graphiqlassets.Files, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(graphiqlassets.Files, name)
		if err != nil {
			return err
		}
		ext := path.Ext(name)
		a := &asset{data: data, contentType: assetTypes[ext]}
		if ext != ".woff2" && ext != ".woff" {
			a.gzipped = sync.OnceValue(func() []byte { return gzipBytes(data) })
		}
		files[graphiqlFiles+name] = a
		return nil
	})
	if err != nil {
		panic(fmt.Sprintf("graphiql's embedded files: %v", err))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", a.contentType)
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
		body := a.data
		if a.gzipped != nil {
			h.Add("Vary", "Accept-Encoding")
			if acceptsGzip(r.Header.Get("Accept-Encoding")) {
				h.Set("Content-Encoding", "gzip")
				body = a.gzipped()
			}
		}
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
	})
}

// assetTypes are the media types of the files in package graphiql, by
// extension (the mime package's table has no fonts).
var assetTypes = map[string]string{
	".js":    "text/javascript; charset=utf-8",
	".css":   "text/css; charset=utf-8",
	".woff2": "font/woff2",
	".woff":  "font/woff",
	".txt":   "text/plain; charset=utf-8",
}

// asset is one file of GraphiQL's page.
type asset struct {
	data        []byte
	contentType string
	gzipped     func() []byte // nil for files that do not compress (fonts)
}

func gzipBytes(data []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(data)
	zw.Close()
	return buf.Bytes()
}

// acceptsGzip reports whether an Accept-Encoding header takes gzip: named,
// or through *, with a quality above zero.
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(part, ";")
		if c := strings.TrimSpace(coding); !strings.EqualFold(c, "gzip") && c != "*" {
			continue
		}
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			q, _ = strconv.ParseFloat(v, 64)
		}
		return q > 0
	}
	return false
}

// noGraphiQL answers / when GraphiQL is turned off, pointing people and
// probes at the API.
func noGraphiQL(w http.ResponseWriter, _ *http.Request) {
	http.Error(w, "GraphiQL is turned off on this server; the GraphQL API is at /graphql", http.StatusNotFound)
}

// healthz reports that the process is up and serving.
func healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "ok")
}

// readyz reports whether the database answers with its schema up to date.
// The reason for a failure is logged, never sent: it may name hosts.
// Replicas, if any, follow, one a line, up or skipped and why; a skipped
// replica leaves the server ready, as its reads go to the primary.
func readyz(bdb *bun.DB, replicas *db.Replicas, log *slog.Logger) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		if err := db.Ping(ctx, bdb); err != nil {
			log.WarnContext(ctx, "not ready", "request_id", reqid.From(ctx), "err", err)
			http.Error(w, "database not ready", http.StatusServiceUnavailable)
			return
		}
		healthz(w, r)
		if replicas == nil {
			return
		}
		for i, st := range replicas.Status() {
			switch {
			case !st.Up:
				fmt.Fprintf(w, "replica %d: skipped: %s\n", i, st.Reason)
			case st.Lag < 0:
				fmt.Fprintf(w, "replica %d: up\n", i)
			default:
				fmt.Fprintf(w, "replica %d: up, %s behind\n", i, st.Lag.Round(time.Millisecond))
			}
		}
	}
}

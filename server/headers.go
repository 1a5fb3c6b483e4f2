package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"regexp"
	"slices"
	"strings"
)

// apiCSP is the Content-Security-Policy of every answer but GraphiQL's
// page: JSON, CSV and text load nothing and belong in no frame.
const apiCSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// secureHeaders sets the headers that keep browsers from reading an answer
// as something it is not, from framing it and from sending the URL of a
// GraphiQL page (which holds the query) on to the sites it loads from.
// Handlers may replace the Content-Security-Policy (GraphiQL does).
func secureHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", apiCSP)
		next.ServeHTTP(w, r)
	})
}

var (
	inlineScript = regexp.MustCompile(`(?s)<script>(.*?)</script>`)
	pageOrigin   = regexp.MustCompile(`(?:src|href)="(https://[^/"]+)/`)
)

// pageCSP returns a Content-Security-Policy that lets the page page serves
// run exactly what it loads: its inline scripts by their hashes, scripts and
// style sheets from the origins it names (gqlgen's GraphiQL page loads
// React and GraphiQL from a CDN, with subresource integrity), styles that
// its components add at run time, images and fonts inlined as data: URLs,
// and requests to this server only. Reading the policy off the rendered
// page keeps it true when a gqlgen upgrade changes the page.
func pageCSP(page http.Handler) string {
	var rec pageRecorder
	req, _ := http.NewRequest(http.MethodGet, "/", nil)
	page.ServeHTTP(&rec, req)
	html := rec.body.String()

	scripts := []string{}
	for _, m := range inlineScript.FindAllStringSubmatch(html, -1) {
		sum := sha256.Sum256([]byte(m[1]))
		scripts = append(scripts, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'")
	}
	var origins []string
	for _, m := range pageOrigin.FindAllStringSubmatch(html, -1) {
		origins = append(origins, m[1])
	}
	slices.Sort(origins)
	origins = slices.Compact(origins)
	from := strings.Join(origins, " ")
	return strings.Join([]string{
		"default-src 'none'",
		"script-src " + strings.Join(scripts, " ") + " " + from,
		"style-src 'unsafe-inline' " + from,
		"img-src data:",
		"font-src data:",
		"connect-src 'self'",
		"base-uri 'none'",
		"form-action 'none'",
		"frame-ancestors 'none'",
	}, "; ")
}

// pageRecorder keeps what a handler writes, for pageCSP.
type pageRecorder struct {
	header http.Header
	body   bytes.Buffer
}

func (p *pageRecorder) Header() http.Header {
	if p.header == nil {
		p.header = http.Header{}
	}
	return p.header
}
func (p *pageRecorder) Write(b []byte) (int, error) { return p.body.Write(b) }
func (p *pageRecorder) WriteHeader(int)             {}

package server

import (
	"bytes"
	_ "embed"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"text/template"

	"github.com/vektah/gqlparser/v2/ast"
)

// docsMaxAge is how long browsers and proxies may keep /schema.graphql
// and /llms.txt: they change only with a new release or new flags.
const docsMaxAge = "public, max-age=3600"

// schemaSDL serves the schema the server executes, as written: the text of
// the sources it was loaded from (schema.graphqls), descriptions, order and
// comments kept. It follows --introspection: a server that hides its
// schema from introspection does not hand it out here.
func schemaSDL(schema *ast.Schema, introspection bool) http.HandlerFunc {
	if !introspection {
		return func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "introspection is turned off on this server, and with it the schema", http.StatusNotFound)
		}
	}
	sources := map[string]string{}
	add := func(pos *ast.Position) {
		if pos != nil && pos.Src != nil && !pos.Src.BuiltIn {
			sources[pos.Src.Name] = pos.Src.Input
		}
	}
	for _, def := range schema.Types {
		add(def.Position)
		for _, f := range def.Fields {
			add(f.Position)
		}
	}
	for _, def := range schema.Directives {
		add(def.Position)
	}
	var sdl []byte
	for _, name := range slices.Sorted(maps.Keys(sources)) {
		sdl = append(sdl, sources[name]...)
	}
	return docsText(sdl)
}

//go:embed llms.txt
var llmsText string

var llmsTemplate = template.Must(template.New("llms.txt").Parse(llmsText))

// llms serves /llms.txt: what papergraph is, its main queries and its
// limits, for language models and their users (llmstxt.org), with the
// limits this server was started with.
func llms(cfg Config) http.HandlerFunc {
	var text bytes.Buffer
	err := llmsTemplate.Execute(&text, map[string]any{
		"Endpoint":      "/graphql",
		"Schema":        "/schema.graphql",
		"Introspection": !cfg.DisableIntrospection,
		"MaxNodes":      count(int64(cfg.MaxNodes)),
		"MaxCost":       count(int64(cfg.MaxCost)),
		"MaxDepth":      cfg.MaxDepth,
	})
	if err != nil {
		panic(fmt.Sprintf("llms.txt: %v", err))
	}
	return docsText(text.Bytes())
}

// docsText serves a fixed text, cacheable.
func docsText(body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", docsMaxAge)
		w.Write(body)
	}
}

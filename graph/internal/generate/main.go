// Command generate is `gqlgen generate` for papergraph: it generates
// graph/ and keeps resolvers/ in step as gqlgen does, with one change to
// the executable schema: below the root, nothing is resolved in a
// goroutine of its own.
//
// gqlgen runs every resolver field of an object after the first, and
// every element of a list of objects, in a new goroutine, so that
// resolvers blocked on a dataloader wait together and their keys meet in
// one batch. papergraph's resolvers do not wait: the look-ahead
// (resolvers/lookahead.go) has read each level's rows for all its objects
// before the fields below run, so they find them cached. The goroutines
// were then pure cost: starting them, growing their stacks as the
// marshalling went deeper, and scheduling them took a tenth to a fifth of
// the server's CPU for the README's first query (see graph/inline.go and
// the README's Performance section). So this generator
//   - marks every object but Query and Subscription as not concurrent
//     (what gqlgen does for Mutation), so that their resolver fields run
//     in line, and
//   - has lists of objects marshalled by graph's marshalSlice, which runs
//     the elements one after another, instead of
//     graphql.MarshalSliceConcurrently, and
//   - gives each object an empty group of deferred fields instead of
//     building one: only a concurrent field can be deferred, so @defer is
//     answered in line, in the one response.
//
// Query's fields stay concurrent: aliased roots read together, each a
// share of the statements the server gives one client.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"

	"github.com/99designs/gqlgen/api"
	"github.com/99designs/gqlgen/codegen"
	"github.com/99designs/gqlgen/codegen/config"
)

func main() {
	if err := generate(); err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
}

func generate() error {
	log.SetOutput(io.Discard) // gqlgen's progress, as its own command does unless --verbose
	cfg, err := config.LoadConfigFromDefaultLocations()
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no gqlgen.yml above the working directory: %w", err)
	}
	if err != nil {
		return err
	}
	if err := api.Generate(cfg, api.AddPlugin(inline{})); err != nil {
		return err
	}
	return rewrite(cfg.Exec.Filename)
}

// inline is the gqlgen plugin that turns concurrency off for every object
// below the root before the executable schema is written.
type inline struct{}

func (inline) Name() string { return "papergraph-inline" }

func (inline) GenerateCode(data *codegen.Data) error {
	for _, o := range data.Objects {
		if !o.Root {
			o.DisableConcurrency = true
		}
	}
	return nil
}

// rewrites are the replacements made in the generated file's text, where
// gqlgen's template has no setting for them: each is what the template
// writes and what replaces it.
var rewrites = []struct{ from, to []byte }{
	// A list of objects; marshalSlice (graph/inline.go) takes the same
	// arguments.
	{[]byte("graphql.MarshalSliceConcurrently("), []byte("marshalSlice(")},
	// An object's group of deferred fields. Only FieldSet.ResolveConcurrently
	// fills one, and no object below the root calls it now (nor does the
	// root: its fields go through ResolveRootConcurrently), so the group is
	// always empty; building it (the object's path, a field set, a map)
	// took 6 % of the CPU of the README query.
	{[]byte("deferred := graphql.NewDeferredGroup(ctx)"), []byte("deferred := graphql.DeferredGroup{}")},
}

// rewrite makes rewrites in the generated file. Finding nothing to
// replace, or a call that fills a group of deferred fields, means gqlgen's
// template changed, and the generator says so rather than leave
// goroutines in or drop deferred fields.
func rewrite(filename string) error {
	src, err := os.ReadFile(filename)
	if err != nil {
		return err
	}
	if bytes.Contains(src, []byte(".ResolveConcurrently(")) {
		return fmt.Errorf("%s: an object still resolves a field concurrently: has gqlgen's template changed?", filename)
	}
	for _, r := range rewrites {
		if !bytes.Contains(src, r.from) {
			return fmt.Errorf("%s: no %s to replace: has gqlgen's template changed?", filename, r.from)
		}
		src = bytes.ReplaceAll(src, r.from, r.to)
	}
	return os.WriteFile(filename, src, 0o644)
}

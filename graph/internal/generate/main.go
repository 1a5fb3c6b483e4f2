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
//     graphql.MarshalSliceConcurrently.
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
	return inlineSlices(cfg.Exec.Filename)
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

// concurrentSlice is what gqlgen's template writes for a list of objects;
// marshalSlice (graph/inline.go) takes the same arguments.
var concurrentSlice, inlineSlice = []byte("graphql.MarshalSliceConcurrently("), []byte("marshalSlice(")

// inlineSlices rewrites the lists of objects in the generated file to
// marshalSlice. The template has no setting for it, so the call is
// replaced in the text; finding none means the template changed, and
// the generator says so rather than leave the goroutines in.
func inlineSlices(filename string) error {
	src, err := os.ReadFile(filename)
	if err != nil {
		return err
	}
	if !bytes.Contains(src, concurrentSlice) {
		return fmt.Errorf("%s: no %s to replace: has gqlgen's template changed?", filename, concurrentSlice)
	}
	return os.WriteFile(filename, bytes.ReplaceAll(src, concurrentSlice, inlineSlice), 0o644)
}

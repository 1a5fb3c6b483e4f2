// Command generate is `gqlgen generate` for papergraph: it generates
// graph/ and keeps resolvers/ in step as gqlgen does, with two plugins of
// its own: inline has the fields of every object below the root resolved
// in line, and batched writes the look-ahead's steps of the fields that
// schema.graphqls declares @batched (batched.go).
//
// gqlgen runs every resolver field of an object after the first in a new
// goroutine, so that resolvers blocked on a dataloader wait together and
// their keys meet in one batch. papergraph's resolvers do not wait: the
// look-ahead (resolvers/lookahead.go) has read each level's rows for all
// its objects before the fields below run, so they find them cached, and
// a goroutine a field would be pure cost. gqlgen's plugin API has a
// setting for this, an object's DisableConcurrency (what gqlgen does for
// Mutation); it has none for the elements of a list of objects, which
// graphql.MarshalSliceConcurrently marshals in a goroutine each.
//
// Query's fields stay concurrent: aliased roots read together, each a
// share of the statements the server gives one client.
package main

import (
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
	return api.Generate(cfg, api.AddPlugin(inline{}), api.AddPlugin(batched{}))
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

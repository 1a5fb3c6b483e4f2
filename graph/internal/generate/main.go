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
// gqlgen has no setting for those, so once it has written the executable
// schema, inlineLists routes its calls to graph/marshal, which marshals a
// list in line when the look-ahead has read everything below it and in
// gqlgen's goroutines otherwise, where misses still meet in a batch.
//
// Query's fields stay concurrent: aliased roots read together, each a
// share of the statements the server gives one client.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"go/format"
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
	if err := api.Generate(cfg, api.AddPlugin(inline{}), api.AddPlugin(batched{}), api.AddPlugin(resolved{})); err != nil {
		return err
	}
	return inlineLists(cfg.Exec.Filename)
}

// The call inlineLists replaces, its replacement, and the replacement's
// package.
const (
	concurrentSlice = "graphql.MarshalSliceConcurrently("
	inLineSlice     = "marshal.Slice("
	marshalImport   = `"github.com/papergraph/papergraph/graph/marshal"`
)

// inlineLists rewrites the generated executable schema at path so that
// lists of objects are marshaled by graph/marshal's Slice, which takes
// the same arguments as gqlgen's function.
func inlineLists(path string) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !bytes.Contains(src, []byte(concurrentSlice)) {
		return fmt.Errorf("%s: no %s to route to %s; has gqlgen changed how it marshals lists?", path, concurrentSlice, inLineSlice)
	}
	src = bytes.ReplaceAll(src, []byte(concurrentSlice), []byte(inLineSlice))
	// Into the group of gqlgen's own imports, where gofmt sorts it.
	gqlgenImport := []byte("\t\"github.com/99designs/gqlgen/graphql\"\n")
	if !bytes.Contains(src, gqlgenImport) {
		return fmt.Errorf("%s: no import of gqlgen's graphql package to add %s beside", path, marshalImport)
	}
	src = bytes.Replace(src, gqlgenImport, append([]byte("\t"+marshalImport+"\n"), gqlgenImport...), 1)
	out, err := format.Source(src) // sorts the imports too
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, out, 0o644)
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

// Command manifest builds frontend/persisted-documents.json, an Apollo
// persisted query manifest, from the operations in frontend/operations
// (one a file) and the fragments of frontend/fragments.graphql: each
// operation with the fragments it spreads, printed by gqlparser's
// formatter, under the sha256 of its text. It runs from frontend/ (go
// generate's directory).
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
	"github.com/vektah/gqlparser/v2/parser"
)

func main() {
	if err := build("operations", "fragments.graphql", "persisted-documents.json"); err != nil {
		fmt.Fprintln(os.Stderr, "manifest:", err)
		os.Exit(1)
	}
}

// operation is one entry of an Apollo persisted query manifest.
type operation struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"`
	Body string `json:"body"`
}

func build(dir, fragmentsFile, out string) error {
	fragments, err := parseFile(fragmentsFile)
	if err != nil {
		return err
	}
	if len(fragments.Operations) > 0 {
		return fmt.Errorf("%s: holds operations; put them in %s", fragmentsFile, dir)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.graphql"))
	if err != nil {
		return err
	}
	ops := make([]operation, 0, len(files))
	for _, f := range files {
		doc, err := parseFile(f)
		if err != nil {
			return err
		}
		if len(doc.Operations) != 1 || len(doc.Fragments) > 0 || doc.Operations[0].Name+".graphql" != filepath.Base(f) {
			return fmt.Errorf("%s: want one operation named as the file, and no fragments (they go in %s)", f, fragmentsFile)
		}
		op, err := document(doc.Operations[0], fragments.Fragments)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		ops = append(ops, op)
	}
	slices.SortFunc(ops, func(a, b operation) int { return strings.Compare(a.Name, b.Name) })
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	err = enc.Encode(struct {
		Format     string      `json:"format"`
		Version    int         `json:"version"`
		Operations []operation `json:"operations"`
	}{"apollo-persisted-query-manifest", 1, ops})
	if err != nil {
		return err
	}
	return os.WriteFile(out, b.Bytes(), 0o644)
}

func parseFile(path string) (*ast.QueryDocument, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	doc, err := parser.ParseQuery(&ast.Source{Name: path, Input: string(src)})
	if err != nil {
		return nil, err
	}
	return doc, nil
}

// document is op with the fragments it spreads, directly or through
// other fragments, in the order fragments.graphql defines them.
func document(op *ast.OperationDefinition, fragments ast.FragmentDefinitionList) (operation, error) {
	used := map[string]bool{}
	var visit func(ast.SelectionSet) error
	visit = func(set ast.SelectionSet) error {
		for _, s := range set {
			switch s := s.(type) {
			case *ast.Field:
				if err := visit(s.SelectionSet); err != nil {
					return err
				}
			case *ast.InlineFragment:
				if err := visit(s.SelectionSet); err != nil {
					return err
				}
			case *ast.FragmentSpread:
				f := fragments.ForName(s.Name)
				if f == nil {
					return fmt.Errorf("no fragment %s", s.Name)
				}
				if !used[s.Name] {
					used[s.Name] = true
					if err := visit(f.SelectionSet); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	if err := visit(op.SelectionSet); err != nil {
		return operation{}, err
	}
	doc := &ast.QueryDocument{Operations: ast.OperationList{op}}
	for _, f := range fragments {
		if used[f.Name] {
			doc.Fragments = append(doc.Fragments, f)
		}
	}
	var b strings.Builder
	formatter.NewFormatter(&b, formatter.WithIndent("  ")).FormatQueryDocument(doc)
	body := b.String()
	sum := sha256.Sum256([]byte(body))
	return operation{ID: hex.EncodeToString(sum[:]), Name: op.Name, Type: string(op.Operation), Body: body}, nil
}

package main

import (
	"errors"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// root is the repository's root, from this package's directory.
const root = "../../.."

// walkThrough is CONTRIBUTING.md's walk-through of adding a field: its
// code blocks, by their info strings.
type walkThrough struct {
	schemaType, schemaField string // "graphql type=T"
	dbRead                  string // "go file=db/queries.go"
	resolverField, resolver string // "go resolver=T.field"
}

var fence = regexp.MustCompile("(?ms)^```([^\\n]+)\\n(.*?)^```$")

func readWalkThrough(t *testing.T) walkThrough {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(root, "CONTRIBUTING.md"))
	if err != nil {
		t.Fatal(err)
	}
	var w walkThrough
	for _, m := range fence.FindAllStringSubmatch(string(doc), -1) {
		info, body := m[1], m[2]
		switch {
		case strings.HasPrefix(info, "graphql type="):
			w.schemaType, w.schemaField = strings.TrimPrefix(info, "graphql type="), body
		case info == "go file=db/queries.go":
			w.dbRead = body
		case strings.HasPrefix(info, "go resolver="):
			w.resolverField, w.resolver = strings.TrimPrefix(info, "go resolver="), body
		}
	}
	if w.schemaField == "" || w.dbRead == "" || w.resolver == "" {
		t.Fatalf("CONTRIBUTING.md lacks a block of the walk-through: %+v", w)
	}
	return w
}

// TestContributingWalkThrough follows CONTRIBUTING.md's walk-through. It
// checks that its blocks are valid where they go: the field in the
// schema (a field the schema does not have yet), the read and the
// resolver line as Go. Without -short it then applies them to a copy of
// the repository, runs go generate there and the tests the walk-through
// names, on both databases when PostgreSQL is set.
func TestContributingWalkThrough(t *testing.T) {
	w := readWalkThrough(t)
	sdl, err := os.ReadFile(filepath.Join(root, "schema.graphqls"))
	if err != nil {
		t.Fatal(err)
	}
	schema, gerr := gqlparser.LoadSchema(&ast.Source{Name: "schema.graphqls", Input: string(sdl)},
		&ast.Source{Name: "CONTRIBUTING.md", Input: "extend type " + w.schemaType + " {\n" + w.schemaField + "}\n"})
	if gerr != nil {
		t.Fatalf("the schema block: %v", gerr)
	}
	typ, field, _ := strings.Cut(w.resolverField, ".")
	if typ != w.schemaType || schema.Types[typ].Fields.ForName(field) == nil {
		t.Fatalf("the resolver block is for %s, the schema block adds to %s", w.resolverField, w.schemaType)
	}
	fset := token.NewFileSet()
	for name, src := range map[string]string{
		"the read":          "package db\n" + w.dbRead,
		"the resolver line": "package resolvers\nfunc f() {\n" + w.resolver + "}\n",
	} {
		if _, err := parser.ParseFile(fset, name, src, 0); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if t.Failed() || testing.Short() {
		return
	}
	dir := copyRepository(t)
	apply(t, dir, w)
	run(t, dir, "go", "test", "./resolvers/", "-count=1", "-run", "TestBatchedFieldsDepthNotWidth|TestLookAheadsMatchSchema|TestSchemaSizesAreTheResolvers")
}

// apply makes the walk-through's edits in the copy dir, running go
// generate where it says to.
func apply(t *testing.T, dir string, w walkThrough) {
	t.Helper()
	edit(t, dir, "schema.graphqls", "type "+w.schemaType+" implements Node {\n", w.schemaField)
	edit(t, dir, "db/queries.go", "", "\n"+w.dbRead)
	run(t, dir, "go", "generate", "./graph/")
	_, field, _ := strings.Cut(w.resolverField, ".")
	stub := `	panic(fmt.Errorf("not implemented: ` + strings.ToUpper(field[:1]) + field[1:] + " - " + field + `"))` + "\n"
	replace(t, dir, "resolvers/schema.resolvers.go", stub, w.resolver)
	run(t, dir, "go", "generate", "./graph/") // gqlgen drops the stub's import
}

// edit inserts text after the first after in file (at its end when after
// is empty).
func edit(t *testing.T, dir, file, after, text string) {
	t.Helper()
	if after == "" {
		f, err := os.OpenFile(filepath.Join(dir, file), os.O_APPEND|os.O_WRONLY, 0)
		if err == nil {
			_, err = f.WriteString(text)
			err = errors.Join(err, f.Close())
		}
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	replace(t, dir, file, after, after+text)
}

func replace(t *testing.T, dir, file, old, new string) {
	t.Helper()
	path := filepath.Join(dir, file)
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), old) {
		t.Fatalf("%s has no %q", file, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(src), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyRepository copies the files git tracks into a temporary directory.
func copyRepository(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("no git checkout to copy: %v", err)
	}
	dir := t.TempDir()
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src, err := os.ReadFile(filepath.Join(root, name))
		if os.IsNotExist(err) {
			continue // deleted in the work tree
		}
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func run(t *testing.T, dir string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

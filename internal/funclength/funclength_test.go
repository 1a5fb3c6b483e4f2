package funclength

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// exempt are the functions allowed past MaxLines, as "path name". The
// list only shrinks.
var exempt = map[string]bool{}

// TestFunctionsAreShort fails on a function or function literal longer
// than MaxLines in a hand-written, non-test Go file of the module.
// Generated files (a "Code generated … DO NOT EDIT." header) and test
// files are left out.
func TestFunctionsAreShort(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		checked++
		for name, lines := range longFunctions(fset, f) {
			if !exempt[filepath.ToSlash(rel)+" "+name] {
				t.Errorf("%s: %s is %d lines, want at most %d: split it into named steps", rel, name, lines, MaxLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked %d files, want the module's (more than 100): is the walk rooted at the module?", checked)
	}
}

// longFunctions returns the functions and function literals of f longer
// than MaxLines, with their lengths; a literal is named by its line,
// after the function it stands in if any ("run: func literal at line N").
func longFunctions(fset *token.FileSet, f *ast.File) map[string]int {
	long := map[string]int{}
	check := func(name string, n ast.Node) {
		if lines := fset.Position(n.End()).Line - fset.Position(n.Pos()).Line + 1; lines > MaxLines {
			long[name] = lines
		}
	}
	for _, decl := range f.Decls {
		name := ""
		if fd, ok := decl.(*ast.FuncDecl); ok {
			name = funcName(fd)
			if fd.Body != nil {
				check(name, fd)
			}
		}
		ast.Inspect(decl, func(n ast.Node) bool {
			if lit, ok := n.(*ast.FuncLit); ok {
				check(strings.TrimPrefix(name+": ", ": ")+"func literal at line "+strconv.Itoa(fset.Position(lit.Pos()).Line), lit)
			}
			return true
		})
	}
	return long
}

// funcName is fd's name, after its receiver's type for a method
// ("PaperSearch.candidatesSQL").
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	for {
		switch t := typ.(type) {
		case *ast.StarExpr:
			typ = t.X
			continue
		case *ast.IndexExpr:
			typ = t.X
			continue
		case *ast.IndexListExpr:
			typ = t.X
			continue
		case *ast.Ident:
			return t.Name + "." + fd.Name.Name
		}
		return fd.Name.Name
	}
}

// TestLongFunctionsCountsLines: a function of MaxLines lines passes, one
// line more is reported, as is a long literal inside a short function.
func TestLongFunctionsCountsLines(t *testing.T) {
	body := func(lines int) string { return strings.Repeat("\tx++\n", lines-2) }
	src := "package p\n\nvar x int\n\n" +
		"func fits() {\n" + body(MaxLines) + "}\n\n" +
		"type T struct{}\n\nfunc (*T) tooLong() {\n" + body(MaxLines+1) + "}\n\n" +
		"var f = func() {\n" + body(MaxLines+1) + "}\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := longFunctions(fset, f)
	want := map[string]int{"T.tooLong": MaxLines + 1, "func literal at line 170": MaxLines + 1}
	if len(got) != len(want) {
		t.Fatalf("longFunctions = %v, want %v", got, want)
	}
	for name, n := range want {
		if got[name] != n {
			t.Errorf("longFunctions = %v, want %v", got, want)
		}
	}
}

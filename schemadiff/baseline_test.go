package schemadiff_test

import (
	"os"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/papergraph/papergraph/schemadiff"
)

// TestBaseline fails when schema.graphqls breaks a client written against
// schema.baseline.graphqls, the schema as released.
func TestBaseline(t *testing.T) {
	old := loadFile(t, "../schema.baseline.graphqls")
	new := loadFile(t, "../schema.graphqls")
	changes := schemadiff.Breaking(old, new)
	if len(changes) == 0 {
		return
	}
	var b strings.Builder
	for _, c := range changes {
		b.WriteString("\n  " + c.String())
	}
	t.Errorf("schema.graphqls breaks clients of schema.baseline.graphqls:%s\n"+
		"If the break is deliberate, copy schema.graphqls over schema.baseline.graphqls in the same commit\n"+
		"and name each breaking change in the commit message; otherwise keep the old field or argument\n"+
		"(mark it @deprecated) beside the new one.", b.String())
}

func loadFile(t *testing.T, path string) *ast.Schema {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := schemadiff.Load(path, string(src))
	if err != nil {
		t.Fatalf("Load(%s): %v", path, err)
	}
	return s
}

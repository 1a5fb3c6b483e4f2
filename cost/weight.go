package cost

import "github.com/vektah/gqlparser/v2/ast"

// weight is how many requests one resolution of a field bound by b
// counts. A list or page is a read, but a list that only shows the page
// above (a connection's nodes and edges) was read with it.
func (b Bound) weight(list bool) int64 {
	if b.Weight == 0 && (list || b.Page) && !b.Inherit {
		return 1
	}
	return b.Weight
}

// Weight is how many requests one resolution of def, a field of the
// object type typ, counts: what Measure counts for it each time it may
// run, so that the requests an operation actually made, summed field by
// field as they run, compare with its estimate. A list the table does
// not bound counts as one.
func (c *Calculator) Weight(typ string, def *ast.FieldDefinition) int64 {
	b, ok := c.table[typ+"."+def.Name]
	if !ok {
		b = Bound{}
	}
	return b.weight(def.Type.Elem != nil)
}

package cost

import "github.com/vektah/gqlparser/v2/ast"

// Weight is how many requests one resolution of def, a field of the
// object type typ, counts: what Measure counts for it each time it may
// run, so that the requests an operation actually made, summed field by
// field as they run, compare with its estimate. A list the schema does
// not size counts as one.
func (c *Calculator) Weight(typ string, def *ast.FieldDefinition) int64 {
	if b, ok := c.table[typ+"."+def.Name]; ok {
		return b.weight
	}
	if def.Type.Elem != nil {
		return 1
	}
	return 0
}

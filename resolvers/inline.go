package resolvers

import (
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// plan records, for one request, which fields of the operation the
// look-ahead has read for all their objects, so that graph/marshal may
// marshal the elements of a list below them in line: no goroutine per
// element, as no resolver there waits on a dataloader batch. A list the
// look-ahead has not covered (a shape its table does not know, the
// look-ahead switched off, a walk that failed) keeps gqlgen's goroutine per
// element, in which the misses of its elements meet in one batch.
type plan struct {
	mu      sync.RWMutex
	reached map[*ast.Field]reach
}

// reach is what the look-ahead did with a field of the operation.
type reach uint8

const (
	// walked: the field's step read it for every object of its level, and
	// the walk went through its selection.
	walked reach = iota + 1
	// start: a walk began below the field, from all its values (a root's
	// objects, or those at the end of a lookAhead's path).
	start
)

// record adds the fields one successful walk reached.
func (p *plan) record(starts, fields []*ast.Field) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reached == nil {
		p.reached = make(map[*ast.Field]reach, len(starts)+len(fields))
	}
	for _, f := range fields {
		p.reached[f] = max(p.reached[f], walked)
	}
	for _, f := range starts {
		p.reached[f] = start
	}
}

// InLine tells graph/marshal whether the list field of fc may be marshaled
// in line: it and every field above it were walked, up to one the walk
// started from. Fields are told apart by their place in the operation's
// document, the same for every object of a level.
func (l *Loaders) InLine(fc *graphql.FieldContext) bool {
	l.plan.mu.RLock()
	defer l.plan.mu.RUnlock()
	for ; fc != nil; fc = fc.Parent {
		if fc.Index != nil || fc.Field.Field == nil {
			continue // a list's element
		}
		switch l.plan.reached[fc.Field.Field] {
		case start:
			return true
		case walked:
		default:
			return false
		}
	}
	return false
}

package server

import (
	"fmt"
	"strings"
	"testing"
)

func TestOperationLabel(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"unnamed", "", opAnonymous},
		{"named", "PaperWithAuthors", "PaperWithAuthors"},
		{"underscore and digits", "_q2", "_q2"},
		{"leading digit", "2q", opOther},
		{"space", "a b", opOther},
		{"label syntax", `a"} 1`, opOther},
		{"overlong", strings.Repeat("q", 65), opOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := operationNames{seen: map[string]bool{}}
			if got := n.label(tt.in); got != tt.want {
				t.Errorf("label(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}

	t.Run("cardinality cap", func(t *testing.T) {
		n := operationNames{seen: map[string]bool{}}
		for i := range maxOperationNames {
			n.label(fmt.Sprintf("Op%d", i))
		}
		if got := n.label("OneTooMany"); got != opOther {
			t.Errorf("name past the cap = %q, want %q", got, opOther)
		}
		if got := n.label("Op0"); got != "Op0" {
			t.Errorf("name seen before the cap = %q, want %q", got, "Op0")
		}
	})
}

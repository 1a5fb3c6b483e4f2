package dbtest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestKeptImage checks that a seed's file is kept for the next process
// while what it reads stays the same, built again when a file it reads
// changes, and never kept for a seed that has not stated what it reads.
func TestKeptImage(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	input := filepath.Join(t.TempDir(), "input")
	write := func(s string) {
		if err := os.WriteFile(input, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	builds := 0
	image := func(s *Seed) []byte {
		t.Helper()
		got, err := keptImage(s, func() ([]byte, error) {
			builds++
			return []byte{byte(builds)}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	// A seed as the next process makes it: the same place among the
	// binary's seeds, reading the same file.
	stated := func() *Seed { return &Seed{index: -1, reads: []string{input}, known: true} }
	for _, step := range []struct {
		what  string
		input string
		seed  *Seed
		want  []byte
	}{
		{"first build", "a", stated(), []byte{1}},
		{"the next process", "a", stated(), []byte{1}},
		{"a changed input", "b", stated(), []byte{2}},
		{"the process after", "b", stated(), []byte{2}},
		{"a seed on a base of unknown reads", "b", &Seed{index: -1, reads: []string{input}, known: true, base: &Seed{index: -2}}, []byte{3}},
		{"again", "b", &Seed{index: -1, reads: []string{input}, known: true, base: &Seed{index: -2}}, []byte{4}},
		{"a seed of unknown reads", "b", &Seed{index: -3}, []byte{5}},
		{"again", "b", &Seed{index: -3}, []byte{6}},
	} {
		write(step.input)
		if got := image(step.seed); !bytes.Equal(got, step.want) {
			t.Errorf("%s: image %v, want %v", step.what, got, step.want)
		}
	}
}

package graphiql

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSums checks dist/SHA256SUMS against the files: an input changed
// without running build.sh, a file added to src/ or a hand-edited bundle
// fails here. Whether build.sh reproduces dist/ from the inputs needs npm;
// .ci/graphiql checks that.
func TestSums(t *testing.T) {
	f, err := os.Open("dist/SHA256SUMS")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var listed []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		want, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q is not HASH  NAME", sc.Text())
		}
		listed = append(listed, name)
		data, err := os.ReadFile(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != want {
			t.Errorf("%s has changed since build.sh ran: run graphiql/build.sh and commit dist/", name)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}

	want := []string{"build.sh", "finish.mjs", "sums.sh", "package.json", "package-lock.json"}
	for _, dir := range []string{"src", "dist"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && path != "dist/SHA256SUMS" {
				want = append(want, path)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(want)
	slices.Sort(listed)
	if !slices.Equal(listed, want) {
		t.Errorf("SHA256SUMS lists %q, want %q: run graphiql/build.sh", listed, want)
	}
}

// TestFiles checks that the page's script and style sheet are embedded and
// that every font the style sheet names is among Files.
func TestFiles(t *testing.T) {
	for _, name := range []string{Script, Style, Licenses} {
		if data, err := fs.ReadFile(Files, name); err != nil || len(data) == 0 {
			t.Errorf("%s: %d bytes, %v", name, len(data), err)
		}
	}
	css, _ := fs.ReadFile(Files, Style)
	fonts := 0
	for _, part := range strings.Split(string(css), "url(")[1:] {
		ref, _, _ := strings.Cut(part, ")")
		if strings.HasPrefix(ref, "data:") {
			continue
		}
		fonts++
		if _, err := fs.Stat(Files, ref); err != nil {
			t.Errorf("style sheet names %s: %v", ref, err)
		}
	}
	if fonts == 0 {
		t.Error("style sheet names no font file; the test checks nothing")
	}
}

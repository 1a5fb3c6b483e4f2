package ingest_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/ingest"
)

// writeFile writes data to name in a fresh directory and returns its path.
func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readFixture(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestImportBadInput(t *testing.T) {
	ror := readFixture(t, "testdata/ror.jsonl")
	lines := strings.SplitAfter(strings.TrimSpace(string(ror)), "\n")
	withBadLine := strings.Join(lines[:2], "") + "{\"id\": \"https://ror.org/0bad\", \"names\": [\n" + strings.Join(lines[2:], "")
	bigGz := gzipped(t, bytes.Repeat(ror, 200))

	tests := []struct {
		name      string
		format    ingest.Format
		file      string
		data      []byte
		maxErrors int
		// want
		institutions int
		bad          []string // "file:line" of each malformed record
		fileErr      error
		err          error
	}{
		{name: "malformed line between good ones", format: ingest.ROR, file: "ror.jsonl", data: []byte(withBadLine),
			institutions: 5, bad: []string{"ror.jsonl:3"}},
		{name: "truncated gzip keeps what came before", format: ingest.ROR, file: "ror.jsonl.gz", data: bigGz[:len(bigGz)*3/4],
			institutions: 5, fileErr: ingest.ErrTruncated},
		{name: "empty file", format: ingest.ROR, file: "empty.jsonl", data: nil, fileErr: ingest.ErrEmptyFile},
		{name: "empty gzip", format: ingest.ROR, file: "empty.jsonl.gz", data: gzipped(t, nil), fileErr: ingest.ErrEmptyFile},
		{name: "wrong format", format: ingest.OpenAlex, file: "ror.jsonl", data: ror, fileErr: ingest.ErrWrongFormat},
		{name: "max errors stops", format: ingest.ROR, file: "ror.jsonl", maxErrors: 2,
			data: []byte(lines[0] + "{\n[\n{\n" + strings.Join(lines[1:], "")),
			bad:  []string{"ror.jsonl:2", "ror.jsonl:3"}, err: ingest.ErrTooManyErrors, institutions: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
				path := writeFile(t, tt.file, tt.data)
				var bad []string
				var fileErrs []error
				sum, err := ingest.Import(context.Background(), bdb, ingest.Options{
					Format: tt.format, Paths: []string{path}, MaxErrors: tt.maxErrors,
					Bad: func(e *ingest.RecordError) {
						bad = append(bad, e.Pos.String())
						if e.Reason == "" {
							t.Errorf("%s: no reason given", e.Pos)
						}
					},
					FileError: func(_ string, err error) { fileErrs = append(fileErrs, err) },
				})
				if !errors.Is(err, tt.err) || (err == nil) != (tt.err == nil) {
					t.Fatalf("Import error = %v, want %v", err, tt.err)
				}
				if strings.Join(bad, ",") != strings.Join(tt.bad, ",") {
					t.Errorf("malformed records at %v, want %v", bad, tt.bad)
				}
				if sum.Bad != int64(len(tt.bad)) {
					t.Errorf("summary counts %d malformed, want %d", sum.Bad, len(tt.bad))
				}
				if tt.fileErr == nil && len(fileErrs) > 0 || tt.fileErr != nil && (len(fileErrs) != 1 || !errors.Is(fileErrs[0], tt.fileErr)) {
					t.Errorf("file errors %v, want one %v", fileErrs, tt.fileErr)
				}
				if tt.fileErr != nil && len(fileErrs) == 1 && strings.Contains(fileErrs[0].Error(), filepath.Dir(path)) {
					t.Errorf("file error %q shows a path", fileErrs[0])
				}
				if got := stats(t, bdb).Institutions; got != tt.institutions {
					t.Errorf("%d institutions stored, want %d", got, tt.institutions)
				}
			})
		})
	}
}

package dbtest

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// keptImage returns the SQLite file of seed s, as build writes it: the
// copy kept by an earlier test process when its key is this process's,
// else build's, which it keeps for the next process. The key hashes
// everything a seed's data follows from: this test binary (its code, the
// migrations and the fills included), the seed's place among the
// binary's seeds, the files the seed and its bases read, and the day (the
// import stamps some rows with it). A changed input changes the key, and
// the kept file is built again; a seed that has not stated what it reads
// (Reads) is never kept. Each package directory keeps one file a seed, so
// the files do not grow with the edits; two worktrees keep theirs apart.
func keptImage(s *Seed, build func() ([]byte, error)) ([]byte, error) {
	key, path, ok := keptKey(s)
	if !ok {
		return build()
	}
	if kept, err := os.ReadFile(path); err == nil && len(kept) > len(key) && bytes.Equal(kept[:len(key)], key) {
		return kept[len(key):], nil
	}
	image, err := build()
	if err != nil {
		return nil, err
	}
	keep(path, key, image)
	return image, nil
}

// keptKey returns s's key and the path of its kept file, or false when s
// is not to be kept.
func keptKey(s *Seed) (key []byte, path string, ok bool) {
	exe, err := executableHash()
	if err != nil {
		return nil, "", false
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, "", false
	}
	h := sha256.New()
	fmt.Fprintf(h, "papergraph dbtest seed\x00%x\x00%d\x00%s\x00", exe, s.index, time.Now().UTC().Format(time.DateOnly))
	for c := s; c != nil; c = c.base {
		if !c.known {
			return nil, "", false
		}
		for _, p := range c.reads {
			sum, err := fileHash(p)
			if err != nil {
				return nil, "", false
			}
			fmt.Fprintf(h, "%d\x00%s\x00%x\x00", c.index, p, sum)
		}
	}
	dir := filepath.Join(os.TempDir(), "papergraph-dbtest-seeds")
	name := fmt.Sprintf("%x-%d.db", sha256.Sum256([]byte(wd)), s.index)
	return h.Sum(nil), filepath.Join(dir, name), true
}

// keep writes key and image to path whole or not at all: into a file of
// its own first, renamed over path, so that a process reading path at
// the same time reads an old file or the new one. Keeping is a cache: a
// failure only means the next process builds the seed again.
func keep(path string, key, image []byte) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".seed-*")
	if err != nil {
		return
	}
	_, err = f.Write(key)
	if err == nil {
		_, err = f.Write(image)
	}
	if err = errors.Join(err, f.Close()); err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
}

// executableHash is the SHA-256 of this test binary, read once.
var executableHash = sync.OnceValues(func() ([]byte, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return fileHash(exe)
})

// fileHash is the SHA-256 of the file at path.
func fileHash(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}

package enrich

import (
	"bytes"
	"io/fs"
	"time"
)

// pageFS is a file system of one file, the objects of an API response as
// JSON lines, for ingest.Import to read like a dataset file.
type pageFS struct {
	name string
	data []byte
}

func (p pageFS) Open(name string) (fs.File, error) {
	if name != p.name {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return &pageFile{Reader: bytes.NewReader(p.data), p: p}, nil
}

type pageFile struct {
	*bytes.Reader
	p pageFS
}

func (f *pageFile) Stat() (fs.FileInfo, error) { return pageInfo{f.p}, nil }
func (f *pageFile) Close() error               { return nil }

type pageInfo struct{ p pageFS }

func (i pageInfo) Name() string       { return i.p.name }
func (i pageInfo) Size() int64        { return int64(len(i.p.data)) }
func (i pageInfo) Mode() fs.FileMode  { return 0o444 }
func (i pageInfo) ModTime() time.Time { return time.Time{} }
func (i pageInfo) IsDir() bool        { return false }
func (i pageInfo) Sys() any           { return nil }

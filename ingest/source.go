package ingest

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync/atomic"
)

// Entry is one input stream: a plain file, a gunzipped file, or one member
// of a tar archive.
type Entry struct {
	File   string // path as given on the command line
	Member string // tar member name, empty otherwise
	R      io.Reader
}

// Pos returns the position of line in this entry.
func (e Entry) Pos(line int) Position { return Position{File: e.File, Member: e.Member, Line: line} }

// Sink receives what a reader finds. Record is called for every good
// record; Bad for every malformed one, which the reader then skips. Either
// returns an error to stop reading (too many errors, cancelled context).
type Sink struct {
	Record func(Record, Position) error
	Bad    func(*RecordError) error
}

// ReadFunc decodes one entry into records.
type ReadFunc func(ctx context.Context, e Entry, s Sink) error

// Format is one input format the import command accepts.
type Format struct {
	Name string
	// Reads says in a line what files the format reads, for the CLI help.
	Reads string
	Read  ReadFunc
	// TarMember selects the tar members the format wants; nil means all
	// regular files.
	TarMember func(name string) bool
}

// ErrEmptyFile is returned for an input with no bytes at all.
var ErrEmptyFile = errors.New("file is empty")

// ErrTruncated is returned when a compressed input ends early.
var ErrTruncated = errors.New("compressed data is truncated or corrupt")

// countingReader counts bytes read from the underlying file, for progress.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// openFile opens path in fsys, or on disk when fsys is nil.
func openFile(fsys fs.FS, path string) (fs.File, error) {
	if fsys == nil {
		return os.Open(path)
	}
	return fsys.Open(path)
}

// eachEntry opens path (plain, gzip, tar or tar.gz, told apart by content,
// not by name) in fsys (nil for the disk) and calls fn for every entry in
// it. read counts the bytes consumed so far.
func eachEntry(fsys fs.FS, path string, f Format, read *atomic.Int64, fn func(Entry) error) error {
	fh, err := openFile(fsys, path)
	if err != nil {
		return err
	}
	defer fh.Close()
	br := bufio.NewReaderSize(countingReader{fh, read}, 1<<16)
	head, err := br.Peek(2)
	if len(head) == 0 {
		if err == io.EOF {
			return ErrEmptyFile
		}
		return err
	}
	var r io.Reader = br
	if bytes.Equal(head, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrTruncated, err)
		}
		defer zr.Close()
		r = gzipErrors{zr}
	}
	zbr := bufio.NewReaderSize(r, 1<<16)
	block, err := zbr.Peek(512)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if len(block) == 0 {
		return ErrEmptyFile
	}
	if !isTar(block) {
		return fn(Entry{File: path, R: zbr})
	}
	tr := tar.NewReader(zbr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if errors.Is(err, ErrTruncated) || errors.Is(err, io.ErrUnexpectedEOF) {
				return ErrTruncated
			}
			return err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if f.TarMember != nil && !f.TarMember(h.Name) {
			continue
		}
		if err := fn(Entry{File: path, Member: h.Name, R: tr}); err != nil {
			return err
		}
	}
}

// isTar reports whether block starts with a ustar header.
func isTar(block []byte) bool {
	return len(block) >= 262 && bytes.HasPrefix(block[257:], []byte("ustar"))
}

// gzipErrors turns gzip's low-level errors into ErrTruncated so that a cut
// download reads as such.
type gzipErrors struct{ r io.Reader }

func (g gzipErrors) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%w: %v", ErrTruncated, err)
	}
	return n, err
}

// maxLine bounds one JSON line; the largest real records (papers with
// thousands of authors) stay far below it.
const maxLine = 64 << 20

// eachLine calls fn with every non-blank line of e and its 1-based number.
// A last line cut off by a read error (a truncated download) is not
// passed on: only the error is returned.
func eachLine(ctx context.Context, e Entry, fn func(line []byte, n int) error) error {
	br, ok := e.R.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(e.R, 1<<16)
	}
	var long []byte // a line longer than the reader's buffer, pieced together
	n := 0
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long)+len(chunk) > maxLine {
				return fmt.Errorf("line %d: longer than %d bytes", n+1, maxLine)
			}
			long = append(long, chunk...)
			continue
		}
		if err != nil && err != io.EOF {
			if errors.Is(err, ErrTruncated) || errors.Is(err, io.ErrUnexpectedEOF) {
				return ErrTruncated
			}
			return fmt.Errorf("line %d: %w", n+1, err)
		}
		line := chunk
		if long != nil {
			line = append(long, chunk...)
			long = nil
		}
		if len(line) > 0 {
			n++
			if n%1024 == 0 {
				if cerr := ctx.Err(); cerr != nil {
					return cerr
				}
			}
			if t := bytes.TrimSpace(line); len(t) > 0 {
				if ferr := fn(t, n); ferr != nil {
					return ferr
				}
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

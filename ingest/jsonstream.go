package ingest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// eachJSON decodes every top-level JSON value of e into a T and calls fn
// with it and the position of the line it starts on; a value that does not
// decode goes to s.Bad. JSON lines are read line by line, so that a
// malformed line is the only thing lost. An entry whose first line is a
// lone "{" is a pretty-printed document (an API response saved to a file):
// it is decoded as a stream of values, and since a syntax error there
// leaves no line to resume at, the error is reported once and the rest of
// the entry is skipped.
func eachJSON[T any](ctx context.Context, e Entry, s Sink, fn func(*T, Position) error) error {
	use := func(value []byte, line int) error {
		var v T
		if err := json.Unmarshal(value, &v); err != nil {
			return s.Bad(&RecordError{Pos: e.Pos(line), Reason: "invalid JSON: " + err.Error()})
		}
		return fn(&v, e.Pos(line))
	}
	br := bufio.NewReaderSize(e.R, 1<<16)
	if !startsPretty(br) {
		return eachLine(ctx, Entry{File: e.File, Member: e.Member, R: br}, use)
	}
	nl := &newlines{r: br}
	dec := json.NewDecoder(nl)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var v json.RawMessage
		err := dec.Decode(&v)
		if err == io.EOF {
			return nil
		}
		var syntax *json.SyntaxError
		switch {
		case errors.As(err, &syntax):
			return s.Bad(&RecordError{Pos: e.Pos(nl.lineOf(syntax.Offset - 1)),
				Reason: fmt.Sprintf("invalid JSON, rest of file skipped: %v", err)})
		case errors.Is(err, io.ErrUnexpectedEOF):
			return s.Bad(&RecordError{Pos: e.Pos(nl.lineOf(nl.off - 1)), Reason: "JSON ends in the middle of a value"})
		case err != nil:
			return err
		}
		if err := use(v, nl.lineOf(dec.InputOffset()-int64(len(v)))); err != nil {
			return err
		}
	}
}

// startsPretty reports whether the first non-blank line of br is a lone
// "{", which no JSON-lines file has.
func startsPretty(br *bufio.Reader) bool {
	head, _ := br.Peek(4096)
	head = bytes.TrimLeft(head, " \t\r\n")
	if len(head) == 0 || head[0] != '{' {
		return false
	}
	rest, _, found := bytes.Cut(head[1:], []byte("\n"))
	return found && len(bytes.TrimSpace(rest)) == 0
}

// newlines remembers where the newlines are in what it has read, so that
// an offset reported by json.Decoder can be turned into a line number.
type newlines struct {
	r    io.Reader
	off  int64   // bytes read so far
	at   []int64 // offsets of the newlines not yet passed by lineOf
	line int     // newlines passed by lineOf
}

func (n *newlines) Read(p []byte) (int, error) {
	k, err := n.r.Read(p)
	for i := 0; i < k; {
		j := bytes.IndexByte(p[i:k], '\n')
		if j < 0 {
			break
		}
		n.at = append(n.at, n.off+int64(i+j))
		i += j + 1
	}
	n.off += int64(k)
	return k, err
}

// lineOf returns the 1-based line holding offset pos. Offsets must not
// decrease from one call to the next.
func (n *newlines) lineOf(pos int64) int {
	for len(n.at) > 0 && n.at[0] < pos {
		n.at = n.at[1:]
		n.line++
	}
	return n.line + 1
}

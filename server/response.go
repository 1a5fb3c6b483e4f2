package server

import (
	"context"
	"encoding/json"
	"io"

	"github.com/99designs/gqlgen/graphql"
)

// streamingExecutor hands the transport the responses of answers without
// their data, which op keeps for the response writer to write in place
// (see writeResponse): json.Marshal of a graphql.Response, the
// transport's way, compacts the data, which gqlgen writes compact
// already, a byte at a time into a buffer of its own and copies that out,
// two more copies of every answer beside gqlgen's and a pass of its JSON
// scanner over it. A response with no data at all is left to the
// transport.
type streamingExecutor struct {
	graphql.GraphExecutor
	op *operation
}

func (e streamingExecutor) DispatchOperation(ctx context.Context, rc *graphql.OperationContext) (graphql.ResponseHandler, context.Context) {
	next, ctx := e.GraphExecutor.DispatchOperation(ctx, rc)
	return func(ctx context.Context) *graphql.Response {
		resp := next(ctx)
		if resp == nil || len(resp.Data) == 0 || resp.Label != "" || resp.Path != nil || resp.HasNext != nil {
			return resp
		}
		e.op.mu.Lock()
		e.op.response = resp
		e.op.mu.Unlock()
		shell := *resp
		shell.Data = nil
		return &shell
	}, ctx
}

// takeResponse returns the response whose data the writer is to write, and
// forgets it, nil when there is none.
func (op *operation) takeResponse() *graphql.Response {
	if op == nil {
		return nil
	}
	op.mu.Lock()
	defer op.mu.Unlock()
	resp := op.response
	op.response = nil
	return resp
}

// writeResponse writes resp as json.Marshal would (its errors, data and
// extensions; the others are those of deferred answers, which are not
// streamed), the data in place: gqlgen writes it compact, so only the
// escapes of HTML characters that json.Marshal adds are added.
func writeResponse(w io.Writer, resp *graphql.Response) error {
	sw := &stickyWriter{w: w}
	sw.writeString("{")
	if len(resp.Errors) > 0 {
		sw.writeString(`"errors":`)
		sw.writeJSON(resp.Errors)
		sw.writeString(",")
	}
	sw.writeString(`"data":`)
	sw.writeHTMLEscaped(resp.Data)
	if len(resp.Extensions) > 0 {
		sw.writeString(`,"extensions":`)
		sw.writeJSON(resp.Extensions)
	}
	sw.writeString("}")
	return sw.err
}

// stickyWriter keeps the first error of its writes and writes nothing
// after it.
type stickyWriter struct {
	w   io.Writer
	err error
	// esc holds an escape being written.
	esc [6]byte
}

func (s *stickyWriter) write(b []byte) {
	if s.err == nil && len(b) > 0 {
		_, s.err = s.w.Write(b)
	}
}

func (s *stickyWriter) writeString(str string) {
	if s.err == nil {
		_, s.err = io.WriteString(s.w, str)
	}
}

func (s *stickyWriter) writeJSON(v any) {
	b, err := json.Marshal(v)
	if err != nil && s.err == nil {
		s.err = err
	}
	s.write(b)
}

// writeHTMLEscaped writes b with <, >, & and U+2028, U+2029 escaped, as
// encoding/json escapes them; in JSON they can only be inside strings,
// where the escape means the same character. It writes the runs between
// them as they are, copying nothing.
func (s *stickyWriter) writeHTMLEscaped(b []byte) {
	const hex = "0123456789abcdef"
	start := 0
	for i := 0; i < len(b); i++ {
		c := b[i]
		var r int
		switch {
		case c == '<' || c == '>' || c == '&':
			r = int(c)
		case c == 0xE2 && i+2 < len(b) && b[i+1] == 0x80 && b[i+2]&^1 == 0xA8:
			r = 0x2028 | int(b[i+2]&1)
		default:
			continue
		}
		s.write(b[start:i])
		s.esc = [6]byte{'\\', 'u', hex[r>>12&0xF], hex[r>>8&0xF], hex[r>>4&0xF], hex[r&0xF]}
		s.write(s.esc[:])
		if r >= 0x2028 {
			i += 2
		}
		start = i + 1
	}
	s.write(b[start:])
}

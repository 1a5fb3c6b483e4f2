package server

import (
	"bytes"
	"encoding/json"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// TestWriteResponse checks that a response written around its data reads
// byte for byte as json.Marshal writes it, which the transports write for
// the others: HTML characters and the JSON line separators escaped, errors
// before the data and extensions after it.
func TestWriteResponse(t *testing.T) {
	data := `{"p0":[{"byline":"A <b> & C\u2028 D\u2029 é ☃"},{"byline":null}],"n":1}`
	data = strings.NewReplacer(`\u2028`, "\u2028", `\u2029`, "\u2029").Replace(data)
	for _, resp := range []*graphql.Response{
		{Data: json.RawMessage(data)},
		{Data: json.RawMessage(data), Errors: gqlerror.List{{Message: "the answer <stopped>", Extensions: map[string]any{"code": codeAnswerTooBig}}}},
		{Data: json.RawMessage(data), Extensions: map[string]any{"cost": map[string]int{"actualBytes": 3}}},
		{Data: json.RawMessage(`<&>` + "\xe2\x80"), Errors: gqlerror.List{{Message: "x"}}, Extensions: map[string]any{"a": "<"}},
	} {
		want, err := json.Marshal(resp)
		if err != nil && json.Valid(resp.Data) {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := writeResponse(&got, resp); err != nil {
			t.Fatal(err)
		}
		if !json.Valid(resp.Data) {
			// json.Marshal refuses data that is not JSON; the data is
			// gqlgen's, always JSON, and is written escaped as it is.
			if g := got.String(); !strings.Contains(g, `"data":\u003c\u0026\u003e`+"\xe2\x80,") {
				t.Errorf("got %q", g)
			}
			continue
		}
		if got.String() != string(want) {
			t.Errorf("got  %s\nwant %s", got.String(), want)
		}
	}
}

// TestWriteResponseCopiesNoData checks that a large answer's data is
// written where it lies: json.Marshal of its response would allocate the
// data twice over, in its buffer and the copy it returns.
func TestWriteResponseCopiesNoData(t *testing.T) {
	const size = 8 << 20
	data := make([]byte, 0, size)
	data = append(data, `{"p":[`...)
	for len(data) < size-64 {
		data = append(data, `{"byline":"A. Author <a@b> & B. Author"},`...)
	}
	data = append(data[:len(data)-1], "]}"...)
	resp := &graphql.Response{Data: data, Errors: gqlerror.List{{Message: "stopped"}}}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.TotalAlloc
	if err := writeResponse(io.Discard, resp); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&ms)
	if n := ms.TotalAlloc - before; n > size/8 {
		t.Errorf("writing a response of %d MB allocated %d MB", size>>20, n>>20)
	}
}

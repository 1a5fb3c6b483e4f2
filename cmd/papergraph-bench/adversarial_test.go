package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestAnswerErrors reads the codes of a response's errors and stops at its
// data: what follows the data's key is never decoded, so a reader that
// fails past it does not fail the read.
func TestAnswerErrors(t *testing.T) {
	body := io.MultiReader(strings.NewReader(`{"errors":[{"message":"m","extensions":{"code":"SERVER_BUSY"}}],"data":{"p0":`),
		failingReader{})
	errs, err := answerErrors(body)
	if err != nil || len(errs) != 1 || errs[0].Extensions.Code != "SERVER_BUSY" {
		t.Errorf("answerErrors = %+v, %v; want the one SERVER_BUSY error", errs, err)
	}
	if errs, err := answerErrors(strings.NewReader(`{"data":{"a":1}}`)); err != nil || len(errs) != 0 {
		t.Errorf("an answer without errors: %+v, %v; want none", errs, err)
	}
	if _, err := answerErrors(strings.NewReader(`Too Many Requests`)); err == nil {
		t.Error("a body that is not JSON read without an error")
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }

// TestAttack sends a probe's attack until its standard input ends and
// reports the answers' codes: of the twenty or more requests the server
// got, at most the four of the workers were cut short.
func TestAttack(t *testing.T) {
	var got atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Add(1)
		io.WriteString(w, `{"errors":[{"message":"m","extensions":{"code":"QUERY_TOO_LARGE"}}],"data":null}`)
	}))
	defer ts.Close()
	stdin, end := io.Pipe()
	go func() {
		for got.Load() < 20 {
			time.Sleep(time.Millisecond)
		}
		end.Close()
	}()
	var out, errOut bytes.Buffer
	if err := cmdAttack(context.Background(), []string{"--probe", "bomb 50 aliases ×4", "--url", ts.URL}, stdin, &out, &errOut); err != nil {
		t.Fatalf("attack: %v\n%s", err, errOut.String())
	}
	var r attackReport
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("attack's report is not JSON: %v\n%s", err, out.String())
	}
	if r.Attacks < 10 || r.Codes["QUERY_TOO_LARGE"] != r.Attacks {
		t.Errorf("report %+v; want at least 10 attacks, each QUERY_TOO_LARGE", r)
	}
}

package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"

	"github.com/papergraph/papergraph/retry"
)

// The attacks of papergraph-bench adversarial run in a process of their
// own (papergraph-bench attack, which the probe starts), as the idle
// floods do: reading the bomb's answers of tens of megabytes would
// otherwise share the Go scheduler and the collector with the client the
// probe times, and its latency would measure the attacker's work as well
// as the server's.

// attackReport is the line the attack writes once its standard input
// ends: the requests answered and the error codes their answers carried.
type attackReport struct {
	Attacks int            `json:"attacks"`
	Codes   map[string]int `json:"codes"`
}

// cmdAttack sends the --probe's attack to --url, each of its workers from
// an address of its own, until stdin ends, and then reports on stdout.
func cmdAttack(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("attack", stderr)
	name := fs.String("probe", "", "the adversarial probe's attack to send, by its whole name")
	u := fs.String("url", "", "the server's /graphql URL")
	if err := fs.Parse(args); err != nil {
		return err
	}
	i := slices.IndexFunc(adversarialProbes(), func(p attackProbe) bool { return p.Name == *name })
	if i < 0 || *u == "" {
		return fmt.Errorf("attack: want the whole name of a probe as --probe and a --url")
	}
	p := adversarialProbes()[i]
	run, cancel := context.WithCancel(ctx)
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		cancel()
	}()
	r := attackReport{Codes: map[string]int{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	client := benchClient(false)
	for w := range p.Workers {
		wg.Go(func() {
			for i := w; run.Err() == nil; i += p.Workers {
				codes, err := attack1(run, client, *u, p.body(i))
				if run.Err() != nil {
					return
				}
				mu.Lock()
				r.Attacks++
				if err != nil {
					codes = []string{"transport: " + firstLine(err.Error())}
				}
				for _, c := range codes {
					r.Codes[c]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return json.NewEncoder(stdout).Encode(r)
}

// startAttack runs this program's attack subcommand for probe against u;
// closing the returned stdin ends it, and its report then comes on report.
func startAttack(ctx context.Context, probe, u string) (stdin io.WriteCloser, report func() (attackReport, error), err error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.CommandContext(ctx, self, "attack", "--probe", probe, "--url", u)
	cmd.Stderr = os.Stderr
	if stdin, err = cmd.StdinPipe(); err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	return stdin, func() (attackReport, error) {
		var r attackReport
		derr := json.NewDecoder(stdout).Decode(&r)
		werr := cmd.Wait()
		if derr != nil {
			return r, errors.Join(fmt.Errorf("attack: %w", derr), werr)
		}
		return r, werr
	}, nil
}

// attack1 sends one attack request and returns the error codes of its
// answer, or its status when it is not JSON.
func attack1(ctx context.Context, client *http.Client, url string, body []byte) ([]string, error) {
	req, err := retry.PostJSON(ctx, url, "", body)
	if err != nil {
		return nil, err
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	errs, err := answerErrors(res.Body)
	if _, cerr := io.Copy(io.Discard, res.Body); err == nil && cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return []string{"HTTP " + strconv.Itoa(res.StatusCode)}, nil
	}
	if len(errs) == 0 {
		return []string{"answered"}, nil
	}
	codes := []string{}
	for _, e := range errs {
		if c := cmp.Or(e.Extensions.Code, "no code"); !slices.Contains(codes, c) {
			codes = append(codes, c)
		}
	}
	return codes, nil
}

// answerError is the part of a GraphQL error the attack counts.
type answerError struct {
	Extensions struct{ Code string }
}

// answerErrors reads a GraphQL response's errors from r without decoding
// its data: the server writes the errors before the data (gqlgen's
// encoding of a response and the server's own writing of a large one
// both do), so the reader stops at the data's key, and the rest of an
// answer of tens of megabytes is only read, not decoded.
func answerErrors(r io.Reader) ([]answerError, error) {
	dec := json.NewDecoder(r)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, cmp.Or(err, errors.New("not a JSON object"))
	}
	var errs []answerError
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		switch t {
		case "errors":
			if err := dec.Decode(&errs); err != nil {
				return nil, err
			}
		case "data":
			return errs, nil
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, err
			}
		}
	}
	return errs, nil
}

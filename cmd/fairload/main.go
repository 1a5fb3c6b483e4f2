// Command fairload measures how one heavy request treats the others: it
// sends a query of many aliased searches to a papergraph server while
// clients loop on a trivial query and a poller asks /readyz, then prints
// what the heavy request got, the trivial clients' latencies and the
// probes' answers.
//
//	go run ./cmd/fairload -url http://127.0.0.1:8080 -aliases 500 -clients 20
//	go run ./cmd/fairload -aliases 50 -heavy 6 -heavy-from 203.0.113.7  # against serve --trusted-proxies 127.0.0.1
//	go run ./cmd/fairload -bylines 200 -heavy 4 -for 30s  # the answer bomb, again and again
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

const trivialQuery = `{ paper(id: "hep-th/9201001") { title } }`

func main() {
	base := flag.String("url", "http://127.0.0.1:8080", "the server")
	aliases := flag.Int("aliases", 500, `aliases of searchPapers(query: "th*", first: 1) in the heavy query (0: none is sent)`)
	clients := flag.Int("clients", 20, "clients looping on "+trivialQuery)
	idle := flag.Duration("for", 10*time.Second, "how long to run when no heavy query is sent")
	heavy := flag.Int("heavy", 1, "how many heavy queries to send at once")
	bylines := flag.Int("bylines", 0, "send instead, again and again for -for, the answer bomb: this many aliases of\n"+
		"papers(ids: $ids) { byline }, $ids the 2,832-author paper 1411.4413 a thousand times")
	heavyFrom := flag.String("heavy-from", "", "send the heavy queries with this X-Forwarded-For (another client,\nto a server run with --trusted-proxies naming this machine)")
	flag.Parse()

	var q strings.Builder
	q.WriteString("{")
	for i := range *aliases {
		fmt.Fprintf(&q, ` a%d: searchPapers(query: "th*", first: 1) { totalCount nodes { arxivId } }`, i)
	}
	q.WriteString(" }")
	c := client{base: *base, http: &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 100}}}
	if _, _, err := c.query(trivialQuery); err != nil {
		fmt.Fprintln(os.Stderr, "fairload:", err)
		os.Exit(1)
	}

	var (
		mu      sync.Mutex
		trivial []time.Duration
		bad     int
		probes  []probe
		wg      sync.WaitGroup
	)
	done := make(chan struct{})
	for range *clients {
		wg.Go(func() {
			for !closed(done) {
				start := time.Now()
				_, resp, err := c.query(trivialQuery)
				mu.Lock()
				trivial = append(trivial, time.Since(start))
				if err != nil || len(resp.Errors) > 0 {
					bad++
				}
				mu.Unlock()
			}
		})
	}
	wg.Go(func() {
		for tick := time.Tick(250 * time.Millisecond); !closed(done); <-tick {
			p := c.ready()
			mu.Lock()
			probes = append(probes, p)
			mu.Unlock()
		}
	})

	start := time.Now()
	if *bylines > 0 {
		bomb(c, *bylines, *heavy, *heavyFrom, *idle)
	} else if *aliases > 0 {
		var heavyWG sync.WaitGroup
		for range *heavy {
			heavyWG.Go(func() {
				status, resp, err := c.queryFrom(q.String(), *heavyFrom)
				answered := 0
				for _, v := range resp.Data {
					if v != nil {
						answered++
					}
				}
				fmt.Printf("heavy: %d aliases, status %d, error %v, %d answered, %d errors, in %.2f s\n",
					*aliases, status, err, answered, len(resp.Errors), time.Since(start).Seconds())
			})
		}
		heavyWG.Wait()
	} else {
		time.Sleep(*idle)
	}
	close(done)
	wg.Wait()
	report(trivial, bad, probes, time.Since(start))
}

// bomb sends the answer bomb of aliases aliases from heavy clients, each
// again and again until d has passed, and prints what each answer was.
func bomb(c client, aliases, heavy int, from string, d time.Duration) {
	var q strings.Builder
	q.WriteString("query($ids: [String!]!) {")
	for i := range aliases {
		fmt.Fprintf(&q, " p%d: papers(ids: $ids) { byline }", i)
	}
	q.WriteString(" }")
	ids := slices.Repeat([]string{"1411.4413"}, 1000)
	end := time.Now().Add(d)
	var wg sync.WaitGroup
	for range heavy {
		wg.Go(func() {
			for time.Now().Before(end) {
				start := time.Now()
				status, resp, err := c.send(q.String(), map[string]any{"ids": ids}, from)
				code := ""
				if len(resp.Errors) > 0 {
					var e struct{ Extensions struct{ Code string } }
					_ = json.Unmarshal(resp.Errors[0], &e)
					code = e.Extensions.Code
				}
				fmt.Printf("bomb: %d aliases, status %d, error %v, code %q, in %.2f s\n", aliases, status, err, code, time.Since(start).Seconds())
			}
		})
	}
	wg.Wait()
}

// report prints the trivial clients' latencies and the probes' answers.
func report(trivial []time.Duration, bad int, probes []probe, took time.Duration) {
	slices.Sort(trivial)
	at := func(p float64) time.Duration {
		if len(trivial) == 0 {
			return 0
		}
		return trivial[min(len(trivial)-1, int(p*float64(len(trivial))))].Round(time.Millisecond)
	}
	fmt.Printf("trivial: %d requests in %.2f s, %d failed; p50 %v, p90 %v, p99 %v, max %v\n",
		len(trivial), took.Seconds(), bad, at(.5), at(.9), at(.99), at(1))
	notReady, slowest := 0, time.Duration(0)
	for _, p := range probes {
		if p.status != http.StatusOK {
			notReady++
		}
		slowest = max(slowest, p.took)
	}
	fmt.Printf("readyz: %d probes, %d not 200, slowest %v\n", len(probes), notReady, slowest.Round(time.Millisecond))
}

// client talks to the server under test.
type client struct {
	base string
	http *http.Client
}

// response is a GraphQL response, with each root field's value left raw.
type response struct {
	Data   map[string]any
	Errors []json.RawMessage
}

// query posts a GraphQL query and returns the status and decoded response.
func (c client) query(q string) (int, response, error) { return c.queryFrom(q, "") }

// queryFrom is query with an X-Forwarded-For of from, when not empty.
func (c client) queryFrom(q, from string) (int, response, error) { return c.send(q, nil, from) }

// send is queryFrom with variables.
func (c client) send(q string, vars map[string]any, from string) (int, response, error) {
	body, err := json.Marshal(map[string]any{"query": q, "variables": vars})
	if err != nil {
		return 0, response{}, err
	}
	req, err := http.NewRequest(http.MethodPost, c.base+"/graphql", bytes.NewReader(body))
	if err != nil {
		return 0, response{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if from != "" {
		req.Header.Set("X-Forwarded-For", from)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, response{}, err
	}
	var r response
	err = json.Unmarshal(b, &r)
	return resp.StatusCode, r, err
}

// probe is one answer of /readyz; status 0 means none came.
type probe struct {
	status int
	took   time.Duration
}

func (c client) ready() probe {
	start := time.Now()
	resp, err := c.http.Get(c.base + "/readyz")
	if err != nil {
		return probe{took: time.Since(start)}
	}
	resp.Body.Close()
	return probe{status: resp.StatusCode, took: time.Since(start)}
}

// closed reports whether ch is closed.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

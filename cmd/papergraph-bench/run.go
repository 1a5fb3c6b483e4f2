package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/papergraph/papergraph/retry"
)

// The README's first query (see "A first query").
const readmeQuery = `query ResearcherPage($paper: String!, $first: Int!) {
  paper(id: $paper) {
    arxivId slug title published absUrl pdfUrl citedByCount citationCount
    primaryCategory { code name }
    categories { code name }
    citations(first: 3) { totalCount nodes { arxivId } }
    references(first: 3) { totalCount }
    authors {
      position role name
      researcher {
        id name slug paperCount hIndex archiveHIndex citedByCount worksCount
        authorPositions { role count }
        positionKnownPaperCount
        fields { category { code } count }
        sameName { id name paperCount archiveHIndex }
        mostCitedPaper { arxivId title citationCount }
        papers(first: $first, sort: NEWEST) {
          totalCount
          pageInfo { hasNextPage endCursor }
          nodes { arxivId title authors { position role researcher { id name archiveHIndex } } }
        }
        coauthors(first: 10) { totalCount nodes { researcher { id name } sharedPaperCount } }
      }
    }
  }
}`

// operation is one request of the mix.
type operation struct {
	Name   string
	target vegeta.Target
}

// result is what run reports of one operation at one concurrency.
type result struct {
	Operation  string  `json:"operation"`
	Clients    int     `json:"clients"`
	Requests   uint64  `json:"requests"`
	P50Ms      float64 `json:"p50_ms"`
	P99Ms      float64 `json:"p99_ms"`
	Throughput float64 `json:"throughput_per_s"`
	Errors     int     `json:"errors"`
}

// runReport is what run prints and plot reads: the corpus measured, the
// label run was given for what served it (say "SQLite"), and a result per
// operation and concurrency. The fields are in the order run printed them
// before, when it encoded a map, so that earlier files diff with new ones.
type runReport struct {
	DurationS float64  `json:"duration_s"`
	Label     string   `json:"label,omitempty"`
	Papers    int      `json:"papers"`
	Results   []result `json:"results"`
	Seed      uint64   `json:"seed"`
	Synthetic bool     `json:"synthetic"`
}

// mix builds the operations for the corpus man describes, on the server
// at base: it asks the server for the researcher ids the network and path
// operations need, and writes the path's pair to log.
func mix(ctx context.Context, client *http.Client, base string, man *manifest, log io.Writer) ([]operation, error) {
	prolific, err := researcherOf(ctx, client, base, man.ProlificPaper, true)
	if err != nil {
		return nil, err
	}
	median, err := researcherOf(ctx, client, base, man.MedianPaper, false)
	if err != nil {
		return nil, err
	}
	far, hops, err := pathPair(ctx, client, base, median.id)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "collaboration-path: researcher %s to researcher %s, %d hops\n", median.id, far, hops)
	gql := func(name, query string, vars map[string]any) operation {
		body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
		return operation{name, vegeta.Target{Method: http.MethodPost, URL: base + "/graphql", Body: body,
			Header: http.Header{"Content-Type": {"application/json"}}}}
	}
	search := `query($q: String!) { searchPapers(query: $q, sort: RELEVANCE, first: 20) {
		totalCount facets { categories { category { code } count } years { year count } } nodes { arxivId title citationCount } } }`
	export := url.Values{"from": {man.ExportFrom}, "to": {man.ExportTo}, "format": {"jsonl"}}
	return []operation{
		gql("readme-median", readmeQuery, map[string]any{"paper": man.MedianPaper, "first": 5}),
		gql("readme-prolific", readmeQuery, map[string]any{"paper": prolific.paper, "first": 5}),
		gql("paper", `query($id: String!) { paper(id: $id) { arxivId title abstract published categories { code }
			authors { name researcher { id name } } references(first: 10) { totalCount nodes { arxivId } }
			citations(first: 10) { totalCount nodes { arxivId } } } }`, map[string]any{"id": man.MedianPaper}),
		gql("search-common", search, map[string]any{"q": man.CommonWord}),
		gql("search-rare", search, map[string]any{"q": man.RareWord}),
		gql("suggest", `query($p: String!) { suggest(prefix: $p, first: 10) { type label } }`, map[string]any{"p": man.SuggestPrefix}),
		gql("category", `query($c: String!) { category(code: $c) { name topResearchers(first: 10) { researcher { name } }
			papers(first: 20) { totalCount nodes { arxivId title } } } }`, map[string]any{"c": man.Category}),
		gql("network-depth2", `query($id: String!) { researcher(id: $id) { network(depth: 2, maxNodes: 100) {
			truncated nodes { depth paperCount researcher { id name } } edges { source target weight } } } }`, map[string]any{"id": prolific.id}),
		gql("collaboration-path", `query($from: String!, $to: String!) { collaborationPath(from: $from, to: $to) {
			length steps { researcher { name } papers { arxivId } } } }`, map[string]any{"from": median.id, "to": far}),
		{"export-search-10k", vegeta.Target{Method: http.MethodGet, URL: base + "/export/search?" + export.Encode()}},
	}, nil
}

// pathHops is the length of the collaboration-path operation's path, the
// same at every scale: a path's cost follows its length, and a pair drawn
// otherwise (the median researcher and the most prolific one, say) is
// co-authors in one corpus and hops apart in the next.
const pathHops = 3

// pathTries caps the co-authors of one researcher that pathPair tries,
// and pathAsks the requests it sends in all.
const (
	pathTries = 20
	pathAsks  = 400
)

// pathPair returns a researcher pathHops hops from start, found the same
// way in every corpus: from start, it steps to the first co-author (most
// shared papers first, as the server lists them) that is one hop further
// from start than the researcher before, which it knows when no path of
// fewer hops joins them; when a step finds none, it tries the next
// co-author of the step before. Where no researcher is pathHops hops from
// start within its requests, it returns the farthest it found, and hops
// says how far that is.
func pathPair(ctx context.Context, client *http.Client, base, start string) (string, int, error) {
	asks := 0
	best, bestHops := start, 0
	var walk func(at string, hops int) (bool, error)
	walk = func(at string, hops int) (bool, error) {
		if hops > bestHops {
			best, bestHops = at, hops
		}
		if hops == pathHops {
			return true, nil
		}
		ids, err := coauthorIDs(ctx, client, base, at)
		asks++
		if err != nil {
			return false, err
		}
		for _, id := range ids {
			if asks >= pathAsks {
				return false, nil
			}
			further := hops == 0
			if !further {
				asks++
				if further, err = noPathWithin(ctx, client, base, start, id, hops); err != nil {
					return false, err
				}
			}
			if further {
				if done, err := walk(id, hops+1); done || err != nil {
					return done, err
				}
			}
		}
		return false, nil
	}
	if _, err := walk(start, 0); err != nil {
		return "", 0, err
	}
	if bestHops == 0 {
		return "", 0, fmt.Errorf("researcher %s has no co-author to draw a collaboration path to", start)
	}
	return best, bestHops, nil
}

// coauthorIDs returns the ids of the first pathTries co-authors of the
// researcher id, most shared papers first.
func coauthorIDs(ctx context.Context, client *http.Client, base, id string) ([]string, error) {
	var resp struct {
		Data struct {
			Researcher *struct {
				Coauthors struct {
					Nodes []struct{ Researcher struct{ ID string } }
				}
			}
		}
		Errors []struct{ Message string }
	}
	body, _ := json.Marshal(map[string]any{
		"query":     `query($id: String!, $n: Int!) { researcher(id: $id) { coauthors(first: $n) { nodes { researcher { id } } } } }`,
		"variables": map[string]any{"id": id, "n": pathTries},
	})
	if err := post(ctx, client, base+"/graphql", body, &resp); err != nil {
		return nil, err
	}
	if len(resp.Errors) > 0 || resp.Data.Researcher == nil {
		return nil, fmt.Errorf("researcher %s: not on the server (%v)", id, resp.Errors)
	}
	var ids []string
	for _, n := range resp.Data.Researcher.Coauthors.Nodes {
		ids = append(ids, n.Researcher.ID)
	}
	return ids, nil
}

// noPathWithin reports whether no collaboration path of at most hops
// hops joins from and to.
func noPathWithin(ctx context.Context, client *http.Client, base, from, to string, hops int) (bool, error) {
	var resp struct {
		Data struct {
			CollaborationPath *struct{ Length int }
		}
		Errors []struct{ Message string }
	}
	body, _ := json.Marshal(map[string]any{
		"query":     `query($from: String!, $to: String!, $d: Int!) { collaborationPath(from: $from, to: $to, maxDepth: $d) { length } }`,
		"variables": map[string]any{"from": from, "to": to, "d": hops},
	})
	if err := post(ctx, client, base+"/graphql", body, &resp); err != nil {
		return false, err
	}
	if len(resp.Errors) > 0 {
		return false, fmt.Errorf("collaboration path from %s to %s: %v", from, to, resp.Errors)
	}
	return resp.Data.CollaborationPath == nil, nil
}

// researcherRef is a researcher of a paper and a paper of theirs.
type researcherRef struct{ id, paper string }

// researcherOf returns the author of paper with the most papers (most),
// or the one with the median paper count.
func researcherOf(ctx context.Context, client *http.Client, base, paper string, most bool) (researcherRef, error) {
	var resp struct {
		Data struct {
			Paper *struct {
				Authors []struct {
					Researcher *struct {
						ID         string
						PaperCount int
					}
				}
			}
		}
		Errors []struct{ Message string }
	}
	body, _ := json.Marshal(map[string]any{
		"query":     `query($id: String!) { paper(id: $id) { authors { researcher { id paperCount } } } }`,
		"variables": map[string]any{"id": paper},
	})
	if err := post(ctx, client, base+"/graphql", body, &resp); err != nil {
		return researcherRef{}, err
	}
	if len(resp.Errors) > 0 || resp.Data.Paper == nil {
		return researcherRef{}, fmt.Errorf("paper %s: not on the server (%v)", paper, resp.Errors)
	}
	type ref struct {
		id    string
		count int
	}
	var refs []ref
	for _, a := range resp.Data.Paper.Authors {
		if a.Researcher != nil {
			refs = append(refs, ref{a.Researcher.ID, a.Researcher.PaperCount})
		}
	}
	if len(refs) == 0 {
		return researcherRef{}, fmt.Errorf("paper %s: no researcher", paper)
	}
	slices.SortStableFunc(refs, func(a, b ref) int { return b.count - a.count })
	if most {
		return researcherRef{refs[0].id, paper}, nil
	}
	return researcherRef{refs[len(refs)/2].id, paper}, nil
}

func post(ctx context.Context, client *http.Client, u string, body []byte, into any) error {
	b, err := postJSON(ctx, client, u, "", body)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}

// postJSON posts a JSON body to u, with key as its bearer token when it
// is set, and returns the answer's body; a status other than 200 OK is
// an error quoting the start of it.
func postJSON(ctx context.Context, client *http.Client, u, key string, body []byte) ([]byte, error) {
	res, b, err := send(ctx, client, u, key, body)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s: %.200s", u, res.Status, b)
	}
	return b, nil
}

// send posts a JSON body to u, with key as its bearer token when it is
// set, and returns the response, its body already read and closed, and
// that body, whatever the status.
func send(ctx context.Context, client *http.Client, u, key string, body []byte) (*http.Response, []byte, error) {
	req, err := retry.PostJSON(ctx, u, key, body)
	if err != nil {
		return nil, nil, err
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, nil, err
	}
	return res, b, nil
}

// attack runs each operation for d at each concurrency: clients workers,
// each sending its next request as soon as its last is answered. A
// response that is not 200, or a GraphQL response with errors, counts as
// an error.
func attack(ops []operation, clients []int, d time.Duration, client *http.Client) []result {
	var out []result
	for _, c := range clients {
		for _, op := range ops {
			a := vegeta.NewAttacker(vegeta.Workers(uint64(c)), vegeta.MaxWorkers(uint64(c)), vegeta.Client(client))
			var m vegeta.Metrics
			errs := 0
			for res := range a.Attack(vegeta.NewStaticTargeter(op.target), vegeta.ConstantPacer{}, d, op.Name) {
				if res.Code != http.StatusOK || res.Error != "" || (op.target.Method == http.MethodPost && bytes.Contains(res.Body, []byte(`"errors"`))) {
					errs++
				}
				res.Body = nil
				m.Add(res)
			}
			m.Close()
			out = append(out, result{
				Operation: op.Name, Clients: c, Requests: m.Requests,
				P50Ms: ms(m.Latencies.P50), P99Ms: ms(m.Latencies.P99),
				Throughput: float64(m.Requests-uint64(errs)) / max(m.Duration+m.Wait, time.Millisecond).Seconds(),
				Errors:     errs,
			})
		}
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// table writes results as a table.
func table(w io.Writer, rs []result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "operation\tclients\trequests\tp50 ms\tp99 ms\treq/s\terrors\t")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%.1f\t%.1f\t%d\t\n", r.Operation, r.Clients, r.Requests, r.P50Ms, r.P99Ms, r.Throughput, r.Errors)
	}
	return tw.Flush()
}

// parseClients reads a comma-separated list of concurrencies.
func parseClients(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		var n int
		if _, err := fmt.Sscan(strings.TrimSpace(f), &n); err != nil || n < 1 {
			return nil, fmt.Errorf("--clients: %q is not a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

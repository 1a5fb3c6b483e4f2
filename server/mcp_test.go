package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/ask"
	"github.com/papergraph/papergraph/ask/asktest"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/llm"
	"github.com/papergraph/papergraph/ratelimit"
)

// mcpKey is the API key the MCP tests send.
const mcpKey = "agent-0123456789abcdef"

// keyTransport sends an API key with every request.
type keyTransport struct{ key string }

func (k keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+k.key)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpServer serves the demo set on bdb with the key mcpKey and a budget
// of limit points.
func mcpServer(t *testing.T, bdb *bun.DB, limit int) *httptest.Server {
	t.Helper()
	return mcpServerWith(t, bdb, limit, nil)
}

// mcpServerWith is mcpServer with the scripted model (none when nil).
func mcpServerWith(t *testing.T, bdb *bun.DB, limit int, scripted *asktest.Scripted) *httptest.Server {
	t.Helper()
	keys, err := ratelimit.LoadKeys(strings.NewReader(mcpKey + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	limiter, err := ratelimit.NewMemory(limit, 0)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{RateLimiter: limiter, APIKeys: keys}
	if scripted != nil {
		model := httptest.NewServer(scripted)
		t.Cleanup(model.Close)
		cfg.LLM = &ask.LLM{Endpoint: llm.Endpoint{URL: model.URL + "/v1", Model: "scripted"}}
	}
	srv := httptest.NewServer(newTestServer(t, bdb, cfg).Handler())
	t.Cleanup(srv.Close)
	return srv
}

// toolCalls counts a session's calls of each tool.
type toolCalls struct {
	mu sync.Mutex
	n  map[string]int
}

// record is a client middleware that counts the tools/call requests.
func (c *toolCalls) record(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if p, ok := req.GetParams().(*mcp.CallToolParams); ok && method == "tools/call" {
			c.mu.Lock()
			c.n[p.Name]++
			c.mu.Unlock()
		}
		return next(ctx, method, req)
	}
}

// mcpSession connects the SDK's client to srv's /mcp with key.
func mcpSession(t *testing.T, srv *httptest.Server, key string) *mcp.ClientSession {
	t.Helper()
	return mcpSessionWith(t, srv, key, nil)
}

// mcpSessionWith is mcpSession counting its tool calls in calls (when
// not nil).
func mcpSessionWith(t *testing.T, srv *httptest.Server, key string, calls *toolCalls) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "papergraph-test", Version: "1"}, nil)
	if calls != nil {
		c.AddSendingMiddleware(calls.record)
	}
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp",
		HTTPClient: &http.Client{Transport: keyTransport{key}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// callJSON calls a tool and decodes its text answer into out; a tool
// error fails the test.
func callJSON(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, out any) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError {
		t.Fatalf("%s %v: tool error %s", tool, args, text)
	}
	if err := json.Unmarshal([]byte(text), out); err != nil {
		t.Fatalf("%s: %v in %s", tool, err, text)
	}
}

// demoSubjects are a paper of the demo set with citations and two of its
// authors, found through GraphQL.
type demoSubjects struct {
	paper, title, author, coauthor string
}

func findSubjects(t *testing.T, cs *mcp.ClientSession) demoSubjects {
	t.Helper()
	var found struct {
		SearchPapers struct {
			Nodes []struct {
				ArxivID, Title string
				CitationCount  int
			}
		}
	}
	callJSON(t, cs, "search_papers", map[string]any{"query": "string", "first": 20}, &found)
	var paper struct {
		Paper struct {
			Title   string
			Authors []struct{ Researcher *struct{ Slug string } }
		}
	}
	for _, n := range found.SearchPapers.Nodes {
		callJSON(t, cs, "get_paper", map[string]any{"id": n.ArxivID}, &paper)
		var slugs []string
		for _, a := range paper.Paper.Authors {
			if a.Researcher != nil {
				slugs = append(slugs, a.Researcher.Slug)
			}
		}
		if n.CitationCount > 0 && len(slugs) >= 2 && paper.Paper.Title == n.Title {
			return demoSubjects{paper: n.ArxivID, title: n.Title, author: slugs[0], coauthor: slugs[len(slugs)-1]}
		}
	}
	t.Fatalf("no cited paper of two profiled authors among %d search results", len(found.SearchPapers.Nodes))
	return demoSubjects{}
}

// mcpTools are the tools docs/mcp.md documents.
var mcpTools = []string{"ask", "citations", "coauthor_network", "collaboration_path", "get_paper", "get_researcher", "search_papers"}

// An MCP client (the official Go SDK's) lists papergraph's tools, exactly
// those documented, and calls each one on the demo set (a tool the test
// does not call fails it), reads papers and researchers as resources, is
// refused with 401 for an unknown key and gets a RATE_LIMITED tool error
// once its budget is spent.
func TestMCP(t *testing.T) {
	if testing.Short() {
		t.Skip("imports the demo set")
	}
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		importDemo(t, bdb)
		llm := &asktest.Scripted{Pieces: axionScript}
		srv := mcpServerWith(t, bdb, 10_000, llm)
		calls := &toolCalls{n: map[string]int{}}
		cs := mcpSessionWith(t, srv, mcpKey, calls)
		tools, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range tools.Tools {
			names = append(names, tool.Name)
		}
		slices.Sort(names)
		if !slices.Equal(names, mcpTools) {
			t.Fatalf("tools %v, want %v", names, mcpTools)
		}
		s := findSubjects(t, cs)
		mcpToolsAnswer(t, cs, s)
		mcpAsk(t, cs, llm, mcpSession(t, mcpServer(t, bdb, 10_000), mcpKey))
		mcpAskOnSmallBudget(t, bdb)
		for _, name := range names {
			if calls.n[name] == 0 {
				t.Errorf("tool %s is listed but the test never calls it", name)
			}
		}
		mcpResources(t, cs, s)
		mcpRefusals(t, bdb, srv)
	})
}

// mcpAsk calls ask with the scripted model on cs, whose answer cites the
// first passage and a ninth it was not given, and on bare, a server
// without a model: both give the passages; the answer cites only those.
func mcpAsk(t *testing.T, cs *mcp.ClientSession, llm *asktest.Scripted, bare *mcp.ClientSession) {
	var got struct {
		Ask struct {
			Passages []struct {
				Number int
				Paper  struct{ ArxivID string }
			}
			Answer *struct {
				Text                        string
				Citations, RemovedCitations []int
			}
		}
	}
	args := map[string]any{"question": "What is the source of axions?", "first": 3}
	callJSON(t, cs, "ask", args, &got)
	want := "Intense magnetic fields [1] may produce axions ."
	if a := got.Ask.Answer; len(got.Ask.Passages) != 3 || a == nil ||
		a.Text != want || !slices.Equal(a.Citations, []int{1}) || !slices.Equal(a.RemovedCitations, []int{9}) {
		t.Fatalf("ask: %+v, want 3 passages and the answer %q citing [1] alone", got, want)
	}
	if llm.Calls != 1 {
		t.Errorf("ask asked the model %d times, want once", llm.Calls)
	}
	res, err := bare.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	first := `"` + got.Ask.Passages[0].Paper.ArxivID + `"`
	if res.IsError || len(res.Content) != 2 || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, first) ||
		!strings.Contains(res.Content[1].(*mcp.TextContent).Text, "LLM_UNAVAILABLE") {
		var texts []string
		for _, c := range res.Content {
			texts = append(texts, c.(*mcp.TextContent).Text)
		}
		t.Errorf("ask without a model: %q, want the passages (of %s first) and a note that says why there is no answer", texts, first)
	}
}

// mcpAskOnSmallBudget: a budget that pays for ask's passages but not for
// the model's tokens gets the passages and a note that says why there is
// no answer, and the model is never asked.
func mcpAskOnSmallBudget(t *testing.T, bdb *bun.DB) {
	llm := &asktest.Scripted{Pieces: axionScript}
	small := mcpSession(t, mcpServerWith(t, bdb, 6, llm), mcpKey)
	res, err := small.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"question": "What is the source of axions?", "first": 3}})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, c := range res.Content {
		texts = append(texts, c.(*mcp.TextContent).Text)
	}
	if res.IsError || len(texts) != 2 || !strings.Contains(texts[0], `"passages"`) || !strings.Contains(texts[0], `"arxivId"`) ||
		!strings.HasPrefix(texts[1], "No answer: ") || llm.Calls != 0 {
		t.Errorf("ask on a budget too small for the model's tokens: %q (model asked %d times), want the passages, a note, no model call", texts, llm.Calls)
	}
}

// mcpToolsAnswer calls the tools past search and get_paper on s.
func mcpToolsAnswer(t *testing.T, cs *mcp.ClientSession, s demoSubjects) {
	var person struct{ Researcher struct{ Slug, Name string } }
	callJSON(t, cs, "get_researcher", map[string]any{"id": s.author}, &person)
	if person.Researcher.Slug != s.author {
		t.Errorf("get_researcher %s gave %+v", s.author, person)
	}
	var net struct {
		Researcher struct {
			Coauthors struct{ TotalCount int }
			Network   struct{ Nodes []struct{ Depth int } }
		}
	}
	callJSON(t, cs, "coauthor_network", map[string]any{"id": s.author, "maxNodes": 10}, &net)
	if net.Researcher.Coauthors.TotalCount == 0 || len(net.Researcher.Network.Nodes) < 2 || len(net.Researcher.Network.Nodes) > 10 {
		t.Errorf("coauthor_network of %s: %+v, want co-authors and 2 to 10 nodes", s.author, net)
	}
	var path struct {
		CollaborationPath *struct {
			Length int
			Steps  []struct{ Researcher struct{ Slug string } }
		}
	}
	callJSON(t, cs, "collaboration_path", map[string]any{"from": s.author, "to": s.coauthor}, &path)
	if p := path.CollaborationPath; p == nil || p.Length != 1 || p.Steps[0].Researcher.Slug != s.author || p.Steps[1].Researcher.Slug != s.coauthor {
		t.Errorf("collaboration_path %s → %s: %+v, want one hop", s.author, s.coauthor, p)
	}
	var cites struct {
		Paper struct {
			CitationCount int
			Citations     struct{ Nodes []struct{ ArxivID string } }
		}
	}
	callJSON(t, cs, "citations", map[string]any{"id": s.paper, "first": 3}, &cites)
	if n := len(cites.Paper.Citations.Nodes); n == 0 || n > 3 {
		t.Errorf("citations of %s: %d, want 1 to 3 (of %d)", s.paper, n, cites.Paper.CitationCount)
	}
	var missing struct{ Paper *struct{ Title string } }
	callJSON(t, cs, "get_paper", map[string]any{"id": "2101.00001"}, &missing)
	if missing.Paper != nil {
		t.Errorf("get_paper of an unknown id: %+v, want null", missing.Paper)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "coauthor_network", Arguments: map[string]any{"id": s.author, "depth": 9}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "BAD_USER_INPUT") {
		t.Errorf("coauthor_network with depth 9: %v %+v, want a BAD_USER_INPUT tool error", err, res)
	}
}

// mcpResources reads s's paper and author by URI, and an unknown paper.
func mcpResources(t *testing.T, cs *mcp.ClientSession, s demoSubjects) {
	templates, err := cs.ListResourceTemplates(t.Context(), nil)
	if err != nil || len(templates.ResourceTemplates) != 2 {
		t.Fatalf("resource templates: %v %+v", err, templates)
	}
	res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: paperURIPrefix + s.paper})
	if err != nil {
		t.Fatal(err)
	}
	var paper struct{ Title string }
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &paper); err != nil || paper.Title != s.title {
		t.Errorf("resource of paper %s: %s (%v), want its title %q", s.paper, res.Contents[0].Text, err, s.title)
	}
	res, err = cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: researcherURIPrefix + s.author})
	if err != nil || !strings.Contains(res.Contents[0].Text, `"slug":"`+s.author+`"`) {
		t.Errorf("resource of researcher %s: %v %+v", s.author, err, res)
	}
	_, err = cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: paperURIPrefix + "2101.00001"})
	if err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("resource of an unknown paper: %v, want not found", err)
	}
}

// mcpRefusals: an unknown key is refused with 401 before any tool runs;
// a client whose budget is spent gets RATE_LIMITED tool errors.
func mcpRefusals(t *testing.T, bdb *bun.DB, srv *httptest.Server) {
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := keyTransport{"agent-not-issued"}.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("unknown key: status %d, want 401", resp.StatusCode)
	}
	small := mcpSession(t, mcpServer(t, bdb, 3), mcpKey)
	var codes []string
	for range 4 {
		res, err := small.CallTool(t.Context(), &mcp.CallToolParams{Name: "get_paper", Arguments: map[string]any{"id": "hep-th/9407087"}})
		if err != nil {
			t.Fatal(err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		code := "ok"
		if res.IsError {
			code, _, _ = strings.Cut(text, ":")
		}
		codes = append(codes, code)
	}
	if !slices.Equal(codes, []string{"ok", "ok", "ok", "RATE_LIMITED"}) {
		t.Errorf("calls on a budget of 3 points: %v, want three answers and then RATE_LIMITED", codes)
	}
}

// The npm MCP SDK's client, as agents use it, lists the tools, calls each
// one (ask with the scripted model) and reads a paper by URI.
func TestMCPNodeClient(t *testing.T) {
	script := nodePackage(t, "mcpclient", "client.mjs")
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		importDemo(t, bdb)
		srv := mcpServerWith(t, bdb, 10_000, &asktest.Scripted{Pieces: axionScript})
		s := findSubjects(t, mcpSession(t, srv, mcpKey))
		calls, _ := json.Marshal(map[string]any{
			"search_papers":      map[string]any{"query": "string", "first": 3},
			"get_paper":          map[string]any{"id": s.paper},
			"get_researcher":     map[string]any{"id": s.author},
			"coauthor_network":   map[string]any{"id": s.author, "maxNodes": 5},
			"collaboration_path": map[string]any{"from": s.author, "to": s.coauthor},
			"citations":          map[string]any{"id": s.paper, "first": 2},
			"ask":                map[string]any{"question": "What is the source of axions?", "first": 3},
		})
		node := exec.CommandContext(t.Context(), "node", script, srv.URL+"/mcp", mcpKey, string(calls), paperURIPrefix+s.paper)
		var stderr strings.Builder
		node.Stderr = &stderr
		out, err := node.Output()
		if err != nil {
			t.Fatalf("node client.mjs: %v\n%s", err, stderr.String())
		}
		var called []string
		for line := range strings.Lines(string(out)) {
			var step struct {
				Step, Name, Text string
				Names            []string
				IsError          bool
			}
			if err := json.Unmarshal([]byte(line), &step); err != nil {
				t.Fatalf("client.mjs printed %q: %v", line, err)
			}
			switch {
			case step.Step == "tools" && !slices.Equal(step.Names, mcpTools):
				t.Errorf("the npm client listed tools %v, want %v", step.Names, mcpTools)
			case step.Step == "call" && step.Name == "ask" && !strings.Contains(step.Text, `"citations":[1],"removedCitations":[9]`):
				t.Errorf("the npm client's ask: %s, want the answer citing [1] alone", step.Text)
			case step.Step == "call" && (step.IsError || !json.Valid([]byte(step.Text))):
				t.Errorf("the npm client's %s call: %s", step.Name, step.Text)
			case step.Step == "call":
				called = append(called, step.Name)
			case step.Step == "resource" && !strings.Contains(step.Text, s.title):
				t.Errorf("the npm client read %s as %s, want the title %q", paperURIPrefix+s.paper, step.Text, s.title)
			}
		}
		slices.Sort(called)
		if !slices.Equal(called, mcpTools) {
			t.Errorf("the npm client called %v, want every tool: %v", called, mcpTools)
		}
	})
}

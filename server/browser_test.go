package server

import (
	"context"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// browserEnv names the variable that makes the browser test required: set
// to 1 (as .ci/run does), a missing chromium fails the test instead of
// skipping it; set to a path, that binary is the browser.
const browserEnv = "PAPERGRAPH_TEST_BROWSER"

// findBrowser returns the chromium to drive, skipping the test when there
// is none and browserEnv does not ask for one.
func findBrowser(t *testing.T) string {
	t.Helper()
	env := os.Getenv(browserEnv)
	if env != "" && env != "1" {
		return env
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if env == "" {
		t.Skipf("no chromium on PATH: apt-get install chromium (or set %s=1 to make this a failure)", browserEnv)
	}
	t.Fatalf("%s=1 but no chromium on PATH: apt-get install chromium", browserEnv)
	return ""
}

// TestGraphiQLInBrowser loads GraphiQL in headless chromium with every
// host but the test server's unreachable, runs the query it opens on and
// reads the answer in the result pane. It fails on any request to another
// origin, any script error and any refusal by the page's CSP.
func TestGraphiQLInBrowser(t *testing.T) {
	browser := findBrowser(t)
	bdb := paperscapeDB(t)
	srv := httptest.NewServer(newTestServer(t, bdb, Config{}).Handler())
	defer srv.Close()

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(browser),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		// Every name but the test server's address resolves to nothing.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
		chromedp.WindowSize(1280, 900),
	}
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()

	var mu sync.Mutex
	var problems []string
	ctx, cancelTab := chromedp.NewContext(ctx, chromedp.WithListener(func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			if u := ev.Request.URL; !strings.HasPrefix(u, srv.URL+"/") && !strings.HasPrefix(u, "data:") {
				problems = append(problems, "request to "+u)
			}
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			if d.Exception != nil {
				problems = append(problems, "exception: "+d.Exception.Description)
			} else {
				problems = append(problems, "exception: "+d.Text)
			}
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError {
				var args []string
				for _, a := range ev.Args {
					args = append(args, a.Description+string(a.Value))
				}
				problems = append(problems, "console.error: "+strings.Join(args, " "))
			}
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError {
				problems = append(problems, "browser log: "+ev.Entry.Text)
			}
		}
	}))
	defer cancelTab()

	const (
		editor = `.graphiql-query-editor .CodeMirror`
		result = `.graphiql-response .CodeMirror`
		title  = "Combinatorics of the Modular Group II: the Kontsevich integrals"
	)
	// The page's CSP refusals, which the browser reports to the page.
	watchCSP := func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
			Source: `window.cspRefused = [];
				document.addEventListener('securitypolicyviolation',
					(e) => window.cspRefused.push(e.violatedDirective + ' ' + e.blockedURI));`,
		})
		return chromedp.Void{}, err
	}
	err := chromedp.Do(ctx,
		watchCSP,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(editor)),
	)
	if err != nil {
		t.Fatalf("loading GraphiQL: %v (problems so far: %q)", err, problems)
	}
	readEditor := chromedp.Evaluate[string](`document.querySelector(` + jsString(editor) + `).CodeMirror.getValue()`)
	query, err := chromedp.Run(ctx, readEditor)
	if err != nil {
		t.Fatal(err)
	}
	if query != ExampleQuery {
		t.Errorf("editor opened on %q, want ExampleQuery", query)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`.graphiql-execute-button`))); err != nil {
		t.Fatal(err)
	}
	answer, err := chromedp.Run(ctx, chromedp.Poll[string](`(() => {
		const cm = document.querySelector(`+jsString(result)+`);
		const text = cm && cm.CodeMirror.getValue();
		return text && text.includes('"data"') ? text : null;
	})()`, chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil {
		t.Fatalf("waiting for the answer: %v (problems so far: %q)", err, problems)
	}
	if !strings.Contains(answer, title) {
		t.Errorf("result pane shows %s, want the paper's title %q", answer, title)
	}
	refused, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.cspRefused`))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range refused {
		t.Errorf("CSP refused %s", r)
	}

	// A link names its query in the URL, as the page keeps it.
	const linked = "{ __typename }"
	err = chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/?"+url.Values{"query": {linked}}.Encode()), chromedp.WaitVisible(chromedp.CSS(editor)))
	if err != nil {
		t.Fatal(err)
	}
	if query, err := chromedp.Run(ctx, readEditor); err != nil || query != linked {
		t.Errorf("?query= opened the editor on %q (%v), want %q", query, err, linked)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Error(p)
	}
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}

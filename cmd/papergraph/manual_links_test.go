package main_test

import (
	"fmt"
	"os"
	"path"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

var (
	markdownLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading      = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	fence        = regexp.MustCompile("(?ms)^```.*?^```")
)

// TestManualLinks checks that every relative link of README.md and
// docs/*.md names a file of the repository and, when it names an anchor,
// a heading of that page, so that moving a section cannot leave a link
// pointing nowhere.
func TestManualLinks(t *testing.T) {
	pages := manualPages(t)
	links := 0
	for page, text := range pages {
		for _, m := range markdownLink.FindAllStringSubmatch(fence.ReplaceAllString(text, ""), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			file, anchor, _ := strings.Cut(target, "#")
			if file == "" {
				file = page
			} else {
				file = path.Join(path.Dir(page), file)
			}
			info, err := os.Stat("../../" + file)
			if err != nil {
				t.Errorf("%s: link %s: %v", page, target, err)
				continue
			}
			if anchor == "" || info.IsDir() {
				continue // a file or folder, which GitHub lists
			}
			body, err := os.ReadFile("../../" + file)
			if err != nil {
				t.Fatal(err)
			}
			if !anchors(string(body))[anchor] {
				t.Errorf("%s: link %s: %s has no heading with the anchor #%s", page, target, file, anchor)
			}
		}
	}
	if links < 20 {
		t.Errorf("%d relative links in the manual, want at least 20: is the link pattern still right?", links)
	}
}

// anchors returns the anchors GitHub gives the headings of a Markdown page:
// the heading lower-cased, with spaces as hyphens and every character but
// letters, digits, hyphens and underscores left out; a repeated heading
// gets -1, -2, ….
func anchors(page string) map[string]bool {
	out := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(page, ""), -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(m[1])) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		for i := 1; out[a]; i++ {
			a = fmt.Sprintf("%s-%d", b.String(), i)
		}
		out[a] = true
	}
	return out
}

func TestAnchors(t *testing.T) {
	got := anchors("# The API\n## GraphiQL's bundle\n```sh\n# not a heading\n```\n### Rate limits\n## Rate limits\n" +
		"## Search, networks and `exports`\n")
	for _, want := range []string{"the-api", "graphiqls-bundle", "rate-limits", "rate-limits-1", "search-networks-and-exports"} {
		if !got[want] {
			t.Errorf("anchors: no %q in %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Error("anchors: a comment in a code block counted as a heading")
	}
}

// TestReadmeIsADoor keeps README.md to what a first visit needs (what
// papergraph is, the two commands, a first query, where to go next); the
// manual's pages in docs/ hold the rest.
func TestReadmeIsADoor(t *testing.T) {
	const maxLines = 250
	readme := manualPages(t)["README.md"]
	if n := strings.Count(readme, "\n"); n > maxLines {
		t.Errorf("README.md has %d lines, want at most %d: move the detail to a page of docs/", n, maxLines)
	}
	for _, page := range []string{"docs/api.md", "docs/importing.md", "docs/live.md", "docs/production.md", "docs/performance.md"} {
		if !strings.Contains(readme, "]("+page+")") {
			t.Errorf("README.md does not link %s in its table of contents", page)
		}
	}
}

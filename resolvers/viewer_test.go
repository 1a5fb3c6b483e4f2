package resolvers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/client"
	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/resolvers"
)

// do posts query and returns its data and errors.
func do(t *testing.T, c *client.Client, query string, opts ...client.Option) (json.RawMessage, []textError) {
	t.Helper()
	resp, err := c.RawPost(query, opts...)
	if err != nil {
		t.Fatal(err)
	}
	var errs []textError
	if resp.Errors != nil {
		if err := json.Unmarshal(resp.Errors, &errs); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := json.Marshal(resp.Data)
	return data, errs
}

// feedFixture is a followed researcher and category and the arXiv ids of
// the papers of either, newest first, read with plain SQL.
type feedFixture struct {
	researcher int64
	category   string
	want       []string
}

func newFeedFixture(t *testing.T, bdb *bun.DB) feedFixture {
	t.Helper()
	var f feedFixture
	f.researcher = scalar[int64](t, bdb, `SELECT researcher_id FROM authorships GROUP BY researcher_id
		ORDER BY COUNT(DISTINCT paper_id) DESC, researcher_id LIMIT 1`)
	// The category with the fewest papers, one at least, that is not all
	// the researcher's.
	f.category = scalar[string](t, bdb, `SELECT category FROM paper_categories
		WHERE paper_id NOT IN (SELECT paper_id FROM authorships WHERE researcher_id = ?)
		GROUP BY category ORDER BY COUNT(*), category LIMIT 1`, f.researcher)
	var rows []struct {
		ArxivID   string    `bun:"arxiv_id"`
		Published time.Time `bun:"published,nullzero"`
		ID        int64     `bun:"id"`
	}
	if err := bdb.NewRaw(`SELECT arxiv_id, published, id FROM papers WHERE id IN (SELECT paper_id FROM authorships WHERE researcher_id = ?)
		OR id IN (SELECT paper_id FROM paper_categories WHERE category = ?)`, f.researcher, f.category).Scan(context.Background(), &rows); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(rows, func(a, b struct {
		ArxivID   string    `bun:"arxiv_id"`
		Published time.Time `bun:"published,nullzero"`
		ID        int64     `bun:"id"`
	}) int {
		switch {
		case a.Published.IsZero() != b.Published.IsZero():
			if a.Published.IsZero() {
				return 1
			}
			return -1
		case !a.Published.Equal(b.Published):
			return b.Published.Compare(a.Published)
		}
		return int(b.ID - a.ID)
	})
	for _, r := range rows {
		f.want = append(f.want, r.ArxivID)
	}
	if len(f.want) < 5 {
		t.Fatalf("the fixture feed has %d papers; the test wants 5 or more", len(f.want))
	}
	return f
}

type feedPage struct {
	Viewer struct {
		Name      string
		Following struct {
			Researchers []struct{ ID, Name string }
			Categories  []struct{ Code string }
		}
		Feed struct {
			TotalCount int
			PageInfo   struct {
				HasNextPage bool
				EndCursor   *string
			}
			Nodes []struct {
				ArxivID string
				Authors []struct{ Name string }
			}
		}
	}
}

const feedQuery = `query($first: Int, $after: String) { viewer { name following { researchers { id name } categories { code } }
	feed(first: $first, after: $after) { totalCount pageInfo { hasNextPage endCursor } nodes { arxivId authors(first: 3) { name } } } } }`

// feedStatements is what feedQuery costs, however many papers, pages and
// follows:
//  1. what the key follows (researchers and categories, one UNION ALL)
//  2. the researchers followed
//  3. the categories followed
//  4. the feed's page (window query over the followed lists' papers)
//  5. the feed's total (GROUP BY), after the first page only: the
//     first page, read without a cursor, counts the feed too
//  6. authorships of the page's papers
const feedStatements = 6

func TestViewerFeed(t *testing.T) {
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		f := newFeedFixture(t, bdb)
		counter := &db.StatementCounter{}
		c, key := signedIn(t, bdb.WithQueryHook(counter), bdb)

		for range 2 { // following twice is following once
			data, errs := do(t, c, fmt.Sprintf(`mutation { followResearcher(id: "%d") { id } followCategory(code: %q) { code } }`, f.researcher, f.category))
			if errs != nil {
				t.Fatalf("follow: %+v", errs)
			}
			if want := fmt.Sprintf(`{"followCategory":{"code":%q},"followResearcher":{"id":`, f.category); !strings.HasPrefix(string(data), want) {
				t.Errorf("follow = %s, want %s…", data, want)
			}
		}
		if n := scalar[int](t, bdb, "SELECT COUNT(*) FROM followed_researchers WHERE api_key_id = ?", key.ID) +
			scalar[int](t, bdb, "SELECT COUNT(*) FROM followed_categories WHERE api_key_id = ?", key.ID); n != 2 {
			t.Errorf("rows of follows after following twice = %d, want 2", n)
		}

		var got []string
		var after *string
		for page := 0; ; page++ {
			before := counter.Count()
			data, errs := do(t, c, feedQuery, client.Var("first", 2), client.Var("after", after))
			if errs != nil {
				t.Fatalf("feed: %+v", errs)
			}
			want := feedStatements
			if page == 0 {
				want--
			}
			if n := counter.Count() - before; n != int64(want) {
				t.Errorf("page %d: %d statements, want %d", page, n, want)
			}
			var p feedPage
			if err := json.Unmarshal(data, &p); err != nil {
				t.Fatal(err)
			}
			v := p.Viewer
			if v.Name != "test" || len(v.Following.Researchers) != 1 || len(v.Following.Categories) != 1 || v.Following.Categories[0].Code != f.category {
				t.Fatalf("viewer = %+v, want test following one researcher and %s", v, f.category)
			}
			if v.Feed.TotalCount != len(f.want) {
				t.Errorf("totalCount = %d, want %d", v.Feed.TotalCount, len(f.want))
			}
			for _, n := range v.Feed.Nodes {
				got = append(got, n.ArxivID)
				if len(n.Authors) == 0 {
					t.Errorf("%s: no authors", n.ArxivID)
				}
			}
			if !v.Feed.PageInfo.HasNextPage {
				break
			}
			after = v.Feed.PageInfo.EndCursor
		}
		if !slices.Equal(got, f.want) {
			t.Errorf("feed, 2 a page:\n got %v\nwant %v", got, f.want)
		}

		for range 2 { // unfollowing what is not followed changes nothing
			if _, errs := do(t, c, fmt.Sprintf(`mutation { unfollowResearcher(id: "%d") { id } unfollowCategory(code: %q) { code } }`, f.researcher, f.category)); errs != nil {
				t.Fatalf("unfollow: %+v", errs)
			}
		}
		var p feedPage
		c.MustPost(feedQuery, &p)
		if v := p.Viewer; len(v.Following.Researchers)+len(v.Following.Categories) != 0 || v.Feed.TotalCount != 0 || len(v.Feed.Nodes) != 0 {
			t.Errorf("after unfollowing: %+v, want nothing followed and an empty feed", v)
		}
	})
}

func TestMutationErrors(t *testing.T) {
	dbtest.EachSeeded(t, fixtures, func(t *testing.T, _ string, bdb *bun.DB) {
		researcher := scalar[int64](t, bdb, "SELECT MIN(researcher_id) FROM authorships")
		orcid := scalar[string](t, bdb, "SELECT MIN(orcid) FROM researchers")
		signed, key := signedIn(t, bdb, bdb)
		anonymous := newClient(bdb)
		readOnly := client.New(withViewer(newHandler(bdb), key))
		tests := []struct {
			name     string
			c        *client.Client
			query    string
			wantCode string
			wantArg  string
		}{
			{"no key", anonymous, `mutation { followCategory(code: "hep-th") { code } }`, resolvers.CodeUnauthenticated, ""},
			{"read-only", readOnly, `mutation { followCategory(code: "hep-th") { code } }`, resolvers.CodeReadOnly, ""},
			{"unknown researcher", signed, `mutation { followResearcher(id: "999999999") { id } }`, resolvers.CodeNotFound, "id"},
			{"unknown ORCID", signed, `mutation { unfollowResearcher(id: "0000-0002-1825-0097") { id } }`, resolvers.CodeNotFound, "id"},
			{"malformed id", signed, `mutation { followResearcher(id: "no such form") { id } }`, resolvers.CodeBadUserInput, "id"},
			{"unknown category", signed, `mutation { followCategory(code: "hep-xx") { code } }`, resolvers.CodeNotFound, "code"},
			{"by ORCID", signed, `mutation { followResearcher(id: "` + orcid + `") { id } }`, "", ""},
			{"by global id", signed, fmt.Sprintf(`mutation { followResearcher(id: %q) { id } }`, globalResearcherID(t, signed, researcher)), "", ""},
		}
		for _, tt := range tests {
			_, errs := do(t, tt.c, tt.query)
			var code, arg string
			if len(errs) > 0 {
				code, arg = errs[0].Extensions.Code, errs[0].Extensions.Argument
			}
			if code != tt.wantCode || arg != tt.wantArg || len(errs) > 1 {
				t.Errorf("%s: errors %+v, want code %q naming %q", tt.name, errs, tt.wantCode, tt.wantArg)
			}
		}
		if data, errs := do(t, anonymous, `{ viewer { name } }`); errs != nil || string(data) != `{"viewer":null}` {
			t.Errorf("viewer without a key = %s %+v, want null", data, errs)
		}
	})
}

// globalResearcherID is the id field of researcher id.
func globalResearcherID(t *testing.T, c *client.Client, id int64) string {
	t.Helper()
	var resp struct{ Researcher struct{ ID string } }
	c.MustPost(fmt.Sprintf(`{ researcher(id: "%d") { id } }`, id), &resp)
	return resp.Researcher.ID
}

func TestFollowLimit(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, _ string, bdb *bun.DB) {
		ctx := context.Background()
		c, key := signedIn(t, bdb, bdb)
		// MaxFollows researchers, one less followed, written in one
		// transaction: the limit is the mutations' to keep, not the setup's.
		err := bdb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			for i := 1; i <= db.MaxFollows; i++ {
				if _, err := tx.ExecContext(ctx, "INSERT INTO researchers (id, name, name_key, family_key, slug) VALUES (?, ?, ?, ?, ?)",
					i, fmt.Sprint("R ", i), fmt.Sprint("r ", i), "r", fmt.Sprint("r-", i)); err != nil {
					return err
				}
			}
			_, err := tx.ExecContext(ctx, "INSERT INTO followed_researchers (api_key_id, researcher_id, created_at) SELECT ?, id, ? FROM researchers WHERE id < ?",
				key.ID, time.Now().UTC(), db.MaxFollows)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		steps := []struct {
			query, wantCode string
		}{
			{`mutation { followCategory(code: "hep-th") { code } }`, ""},                                              // the 500th
			{`mutation { followCategory(code: "hep-th") { code } }`, ""},                                              // again: no new follow
			{fmt.Sprintf(`mutation { followResearcher(id: "%d") { id } }`, db.MaxFollows), resolvers.CodeFollowLimit}, // the 501st
			{`mutation { unfollowResearcher(id: "1") { id } }`, ""},
			{fmt.Sprintf(`mutation { followResearcher(id: "%d") { id } }`, db.MaxFollows), ""},
		}
		for i, s := range steps {
			_, errs := do(t, c, s.query)
			var code string
			if len(errs) > 0 {
				code = errs[0].Extensions.Code
			}
			if code != s.wantCode {
				t.Errorf("step %d %s: errors %+v, want code %q", i, s.query, errs, s.wantCode)
			}
		}
		n := scalar[int](t, bdb, "SELECT COUNT(*) FROM followed_researchers WHERE api_key_id = ?", key.ID) +
			scalar[int](t, bdb, "SELECT COUNT(*) FROM followed_categories WHERE api_key_id = ?", key.ID)
		if n != db.MaxFollows {
			t.Errorf("follows = %d, want %d", n, db.MaxFollows)
		}
		var resp struct {
			Viewer struct {
				Following struct{ Researchers []struct{ ID string } }
			}
		}
		c.MustPost(`{ viewer { following { researchers { id } } } }`, &resp)
		if got := len(resp.Viewer.Following.Researchers); got != db.MaxFollows-1 {
			t.Errorf("following.researchers has %d, want %d", got, db.MaxFollows-1)
		}
	})
}

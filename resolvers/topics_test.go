package resolvers_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db/dbtest"
	"github.com/papergraph/papergraph/vector"
)

// hashedEmbedder embeds with hashedEmbedding, as a provider would.
type hashedEmbedder struct{}

func (hashedEmbedder) Name() string { return "hashed" }
func (hashedEmbedder) Dim() int     { return testDim }
func (hashedEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, s := range texts {
		out[i] = vector.HashedWords(s, testDim)
	}
	return out, nil
}

// TestTopicsDepthNotWidth: the topic fields cost a statement per level
// of the answer, for 1 parent as for 20.
func TestTopicsDepthNotWidth(t *testing.T) {
	cases := []rootList{
		{
			name: "papers topics",
			// 1 the papers; 2 their topics; 3 the parents of those.
			query: `query($ids: [String!]!) { papers(ids: $ids) { title topics { name parent { name } } } }`,
			vars: func(t *testing.T, bdb bun.IDB) []client.Option {
				return []client.Option{client.Var("ids", column(t, bdb, "SELECT arxiv_id FROM papers WHERE arxiv_id IS NOT NULL ORDER BY id"))}
			},
			item: "parent", want: 3,
		},
		{
			name: "topics",
			// 1 the page; 2 the children of its topics; 3 a page of papers
			// each; 4 their researchers, joined with their profiles; 5 the
			// parents of the children.
			query: `query($n: Int) { topics(first: $n) { nodes { name paperCount children { name parent { name } }
				papers(first: 2) { nodes { title } } researchers(first: 2) { paperCount researcher { name } } } } }`,
			small: 1, item: "paperCount", want: 5,
		},
		{
			name: "researcher topics",
			// 1 the page; 2 the topics of the researchers' papers; 3 the
			// parents of those.
			query: `query($n: Int) { searchResearchers(query: "a", first: $n) { nodes { name
				topics(first: 5) { paperCount topic { name parent { name } } } } } }`,
			small: 1, item: "topic", want: 3,
		},
	}
	dbtest.EachSeeded(t, fixturesWithTopics, func(t *testing.T, _ string, bdb *bun.DB) {
		log := &dbtest.Log{}
		bdb.AddQueryHook(log)
		c := newClient(bdb)
		for _, tt := range cases {
			var opts []client.Option
			if tt.vars != nil {
				opts = tt.vars(t, bdb)
			}
			items := map[int]int{}
			small := max(tt.small, 1)
			for _, n := range []int{small, 20} {
				runOpts := append(opts, client.Var("n", n))
				if xs := listVar(opts, "ids"); xs != nil {
					runOpts = append(opts[:0:0], client.Var("ids", xs[:min(n, len(xs))]))
				}
				log.Take()
				data, errs := rawPost(t, c, tt.query, runOpts...)
				sqls := log.Take()
				if len(errs) != 0 {
					t.Fatalf("%s, n=%d: %+v", tt.name, n, errs)
				}
				items[n] = strings.Count(data, `"`+tt.item+`":`)
				if len(sqls) != tt.want {
					t.Errorf("%s, n=%d: %d statements, want %d:\n%s", tt.name, n, len(sqls), tt.want, strings.Join(sqls, "\n"))
				}
			}
			if items[20] <= items[small] {
				t.Errorf("%s: %d items for n=20, %d for n=%d: the case does not test width", tt.name, items[20], items[small], small)
			}
		}
	})
}

// TestTopicLookups: a topic by id, its place in the hierarchy and its
// pages, a paper's topics broad first, and the answers to ids that name
// no topic.
func TestTopicLookups(t *testing.T) {
	type topic struct {
		ID, Name   string
		Level      int
		PaperCount int
		Parent     *struct{ ID string }
		Children   []struct{ ID string }
	}
	dbtest.EachSeeded(t, fixturesWithTopics, func(t *testing.T, _ string, bdb *bun.DB) {
		c := newClient(bdb)
		var top struct {
			Topics struct {
				Nodes      []topic
				TotalCount int
				PageInfo   struct {
					HasNextPage bool
					EndCursor   string
				}
			}
		}
		c.MustPost(`{ topics(first: 1) { nodes { id name level paperCount parent { id } children { id } } totalCount pageInfo { hasNextPage endCursor } } }`, &top)
		broad := scalar[int](t, bdb, "SELECT COUNT(*) FROM topics WHERE parent_id IS NULL")
		if len(top.Topics.Nodes) != 1 || top.Topics.TotalCount != broad || top.Topics.PageInfo.HasNextPage != (broad > 1) {
			t.Fatalf("topics(first: 1) = %+v, want 1 of %d broad topics", top.Topics, broad)
		}
		first := top.Topics.Nodes[0]
		want := scalar[int](t, bdb, "SELECT paper_count FROM topics WHERE id = 1")
		if first.Level != 0 || first.Parent != nil || first.Name == "" || first.PaperCount != want {
			t.Errorf("first broad topic = %+v, want level 0, no parent, a name, %d papers", first, want)
		}

		var next struct{ Topics struct{ Nodes []topic } }
		c.MustPost(`query($a: String) { topics(first: 100, after: $a) { nodes { id } } }`, &next, client.Var("a", top.Topics.PageInfo.EndCursor))
		if len(next.Topics.Nodes) != broad-1 {
			t.Errorf("the page after the first has %d topics, want %d", len(next.Topics.Nodes), broad-1)
		}
		for _, n := range next.Topics.Nodes {
			if n.ID == first.ID {
				t.Errorf("the page after the first repeats %s", n.ID)
			}
		}

		var paper struct {
			Paper struct {
				Topics []topic
			}
		}
		arxiv := column(t, bdb, "SELECT p.arxiv_id FROM papers AS p JOIN paper_topics AS pt ON pt.paper_id = p.id AND pt.level = 1 ORDER BY p.id LIMIT 1")
		if len(arxiv) == 0 {
			t.Fatal("no paper is filed under a topic of level 1")
		}
		c.MustPost(`query($id: String!) { paper(id: $id) { topics { id name level parent { id } } } }`, &paper, client.Var("id", arxiv[0]))
		ts := paper.Paper.Topics
		if len(ts) != 2 || ts[0].Level != 0 || ts[1].Level != 1 || ts[1].Parent == nil || ts[1].Parent.ID != ts[0].ID {
			t.Fatalf("paper %s topics = %+v, want its broad topic and the one within it", arxiv[0], ts)
		}

		var byID struct{ Topic *topic }
		c.MustPost(`query($id: ID!) { topic(id: $id) { id name level parent { id } children { id } } }`, &byID, client.Var("id", ts[0].ID))
		if byID.Topic == nil || byID.Topic.Name != ts[0].Name || len(byID.Topic.Children) == 0 {
			t.Errorf("topic(%s) = %+v, want %q with its children", ts[0].ID, byID.Topic, ts[0].Name)
		}
		var within struct{ Topics struct{ Nodes []topic } }
		c.MustPost(`query($p: ID) { topics(parent: $p, first: 100) { nodes { id parent { id } } } }`, &within, client.Var("p", ts[0].ID))
		if len(within.Topics.Nodes) != len(byID.Topic.Children) {
			t.Errorf("topics(parent:) lists %d topics, children %d", len(within.Topics.Nodes), len(byID.Topic.Children))
		}

		// A well-formed id of no topic is null; a malformed one, or the
		// id of another kind, is refused naming the argument.
		var none struct{ Topic *topic }
		c.MustPost(`{ topic(id: "VG9waWM6OTk5OTk") { id } }`, &none) // Topic:99999
		if none.Topic != nil {
			t.Errorf("topic(Topic:99999) = %+v, want null", none.Topic)
		}
		for _, bad := range []string{"nonsense", "UGFwZXI6MQ"} { // UGFwZXI6MQ: Paper:1
			_, errs := rawPost(t, c, `query($id: ID!) { topic(id: $id) { id } }`, client.Var("id", bad))
			if len(errs) != 1 || errs[0].Extensions.Code != "BAD_USER_INPUT" || !strings.Contains(errs[0].Message, "id") {
				b, _ := json.Marshal(errs)
				t.Errorf("topic(id: %q) errors %s, want BAD_USER_INPUT naming id", bad, b)
			}
		}
		_, errs := rawPost(t, c, `{ topics(after: "bm9wZQ") { nodes { id } } }`)
		if len(errs) != 1 || errs[0].Extensions.Code != "BAD_USER_INPUT" || !strings.Contains(errs[0].Message, "after") {
			t.Errorf("topics(after: bad) errors %+v, want BAD_USER_INPUT naming after", errs)
		}
	})
}

// TestTopicResearchers: a topic's researchers are those with most papers
// filed under it, most first and the lower id among equals, with their
// counts, as counted from its papers' bylines.
func TestTopicResearchers(t *testing.T) {
	dbtest.EachSeeded(t, fixturesWithTopics, func(t *testing.T, _ string, bdb *bun.DB) {
		c := newClient(bdb)
		var got struct {
			Topics struct {
				Nodes []struct {
					Researchers []struct {
						PaperCount int
						Researcher struct{ Name string }
					}
				}
			}
		}
		c.MustPost(`{ topics(first: 1) { nodes { researchers(first: 3) { paperCount researcher { name } } } } }`, &got)
		var want []struct {
			Name string `bun:"name"`
			N    int    `bun:"n"`
		}
		if err := bdb.NewRaw(`SELECT r.name, c.n FROM (SELECT a.researcher_id, COUNT(DISTINCT a.paper_id) AS n
			FROM paper_topics AS pt JOIN papers AS p ON p.id = pt.paper_id AND p.author_count <= 100
			JOIN authorships AS a ON a.paper_id = pt.paper_id
			WHERE pt.topic_id = 1 AND a.researcher_id IS NOT NULL GROUP BY a.researcher_id) AS c
			JOIN researchers AS r ON r.id = c.researcher_id ORDER BY c.n DESC, r.id LIMIT 3`).Scan(t.Context(), &want); err != nil {
			t.Fatal(err)
		}
		if len(got.Topics.Nodes) != 1 || len(want) == 0 {
			t.Fatalf("topics(first: 1) = %+v; counted %+v", got.Topics, want)
		}
		rs := got.Topics.Nodes[0].Researchers
		if len(rs) != len(want) {
			t.Fatalf("researchers = %+v, want %+v", rs, want)
		}
		for i, w := range want {
			if rs[i].Researcher.Name != w.Name || rs[i].PaperCount != w.N {
				t.Errorf("researcher %d = %+v, want %s with %d papers", i+1, rs[i], w.Name, w.N)
			}
		}
	})
}

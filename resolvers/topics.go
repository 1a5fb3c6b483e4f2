package resolvers

import (
	"context"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/graph/model"
)

// Defaults and bounds of the topic fields' counts, as schema.graphqls
// states them.
const (
	defaultTopicsPage = 20
	maxTopicsPage     = 100
	defaultTopicList  = 10
	maxTopicChildren  = 50
)

// The request's loaders of topics by id, of their children and of their
// researchers.
func topicsByID(l *Loaders) *loader[int64, *db.Topic] { return readLoader(l, db.TopicsByIDs) }
func topicChildren(l *Loaders) *loader[int64, []*db.Topic] {
	return readLoader(l, db.TopicChildrenByTopicIDs)
}
func topicResearchers(l *Loaders) *loader[int64, []*db.TopicResearcher] {
	return readLoader(l, db.TopicResearchersByTopicIDs)
}

func topicID(t *db.Topic) int64 { return t.ID }

// topicSteps are the steps of the fields of Topic and of the lists that
// lead to topics: each reads the field for all the topics of a level in
// one statement (the papers of a level's topics as the other paper lists
// do).
func topicSteps() map[string]step {
	return map[string]step{
		"Topic.parent": follow(topicsByID, noArgs(func(t *db.Topic) (int64, bool) { return t.ParentID, t.ParentID != 0 }),
			"Topic", appendObject[int64, db.Topic]),
		"Topic.children":    follow(topicChildren, noArgs(keyOfEach(topicID)), "Topic", appendItems[int64, *db.Topic]),
		"Topic.researchers": follow(topicResearchers, noArgs(keyOfEach(topicID)), "TopicResearcher", appendItems[int64, *db.TopicResearcher]),
		"Topic.papers":      paperConnection(db.TopicPapers, func(t *db.Topic) paperParent { return paperParent{id: t.ID} }),

		"TopicResearcher.researcher": hop("Researcher", noArgs(func(r *db.TopicResearcher) any { return &r.Researcher })),
		"ResearcherTopic.topic":      hop("Topic", noArgs(func(r *db.TopicCount) any { return &r.Topic })),
		"TopicEdge.node":             hop("Topic", noArgs(asObject[*db.Topic])),
		// The global id is made of the row's key: nothing to read.
		"Topic.id": {read: func(context.Context, *Loaders, []any, map[string]any) ([]any, error) { return nil, nil }},
	}
}

// topic is the topic of global id id, nil when there is none.
func topic(ctx context.Context, id string) (*db.Topic, error) {
	if err := checkText("id", id, idText); err != nil {
		return nil, err
	}
	n, ok := model.ParseTopicID(id)
	if !ok {
		return nil, badInput("id", "not a topic id: %s", QuoteInput(id))
	}
	ts, err := topicsByID(loaders(ctx)).read(ctx, []int64{n})
	if err != nil || ts[0] == nil {
		return nil, err
	}
	return ts[0], lookAhead(ctx, "Topic", ts)
}

// topicList is a page of the broad topics, or of those within parent.
func topicList(ctx context.Context, r *Resolver, first *int, after, parent *string) (*model.TopicConnection, error) {
	n, err := countArg("first", first, defaultTopicsPage, maxTopicsPage)
	if err != nil {
		return nil, err
	}
	var from, within int64
	if after != nil {
		c, err := decodeCursor("after", *after, "topics")
		if err != nil {
			return nil, err
		}
		from = c.ID
	}
	if parent != nil {
		if err := checkText("parent", *parent, idText); err != nil {
			return nil, err
		}
		id, ok := model.ParseTopicID(*parent)
		if !ok {
			return nil, badInput("parent", "not a topic id: %s", QuoteInput(*parent))
		}
		within = id
	}
	conn := &model.TopicConnection{
		PageInfo: &model.PageInfo{HasPreviousPage: from > 0},
		Total:    func(ctx context.Context) (int, error) { return db.CountTopics(ctx, r.db, within) },
	}
	if !asksPage(ctx, "TopicConnection") {
		return conn, nil
	}
	ts, more, err := db.TopicPage(ctx, r.db, within, from, n)
	if err != nil {
		return nil, err
	}
	conn.Nodes, conn.Edges, conn.PageInfo = fillPage(db.Page[*db.Topic]{Items: ts, HasNext: more, HasPrev: from > 0},
		func(t *db.Topic) string { return encodeCursor("topics", db.Cursor{Set: true, ID: t.ID}) },
		identity[*db.Topic], func(_ *db.Topic, t *db.Topic, c string) *model.TopicEdge { return &model.TopicEdge{Cursor: c, Node: t} })
	return conn, lookAheadPage(ctx, "TopicConnection", "Topic", "TopicEdge", ts)
}

// topicParent is the broad topic t lies within, nil for a broad one.
func topicParent(ctx context.Context, t *db.Topic) (*db.Topic, error) {
	if t.ParentID == 0 {
		return nil, nil
	}
	return topicsByID(loaders(ctx)).load(ctx, t.ParentID)
}

// topicChildList is the topics within t.
func topicChildList(ctx context.Context, t *db.Topic) ([]*db.Topic, error) {
	ts, err := topicChildren(loaders(ctx)).load(ctx, t.ID)
	return firstN(ts, maxTopicChildren), err
}

// topicResearcherList is the first researchers of t with most papers
// there.
func topicResearcherList(ctx context.Context, t *db.Topic, first *int) ([]*model.TopicResearcher, error) {
	n, err := countArg("first", first, defaultTopicList, db.MaxTopicResearchers)
	if err != nil {
		return nil, err
	}
	rows, err := topicResearchers(loaders(ctx)).load(ctx, t.ID)
	rows = firstN(rows, n)
	out := make([]*model.TopicResearcher, len(rows))
	for i, r := range rows {
		out[i] = &model.TopicResearcher{Researcher: wrapResearcher(&r.Researcher), PaperCount: r.Count}
	}
	return out, err
}

// researcherTopics is the first topics of researcher id's papers, most
// papers first.
func researcherTopics(ctx context.Context, id int64, first *int) ([]*model.ResearcherTopic, error) {
	n, err := countArg("first", first, defaultTopicList, db.MaxResearcherTopics)
	if err != nil {
		return nil, err
	}
	rows, err := researcherTopicsField.load(ctx, id)
	rows = firstN(rows, n)
	out := make([]*model.ResearcherTopic, len(rows))
	for i := range rows {
		out[i] = &model.ResearcherTopic{Topic: &rows[i].Topic, PaperCount: rows[i].Count}
	}
	return out, err
}

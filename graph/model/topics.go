package model

import (
	"context"

	"github.com/papergraph/papergraph/db"
)

// TopicConnection is a page of topics. The total is counted only when a
// client asks for it.
type TopicConnection struct {
	Edges    []*TopicEdge
	Nodes    []*db.Topic
	PageInfo *PageInfo
	Total    func(context.Context) (int, error)
}

// TotalCount counts the topics of the whole list.
func (c *TopicConnection) TotalCount(ctx context.Context) (int, error) { return c.Total(ctx) }

// TopicEdge is a topic of a page with its cursor.
type TopicEdge struct {
	Cursor string
	Node   *db.Topic
}

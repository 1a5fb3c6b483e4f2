// Package graph is the executable GraphQL schema that gqlgen generates from
// schema.graphqls; resolvers.NewSchema builds it with its resolvers.
package graph

// gqlgen finds gqlgen.yml by walking up from this directory and runs from
// the repository root.
//go:generate go tool gqlgen generate

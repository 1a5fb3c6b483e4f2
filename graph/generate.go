// Package graph is the executable GraphQL schema that gqlgen generates from
// schema.graphqls; resolvers.NewSchema builds it with its resolvers.
package graph

// The generator is gqlgen's with a plugin that resolves the fields of
// objects below the root in line (internal/generate says why); it finds gqlgen.yml by walking up from
// this directory and runs from the repository root.
//go:generate go run ./internal/generate

// Package frontend holds the GraphQL documents a front end like the
// reference site sends, one operation a file in operations/ with the
// fragments of fragments.graphql, and builds them into
// persisted-documents.json: the trusted-documents manifest that
// `papergraph serve --trusted-documents` reads and that server's
// TestFrontendDocuments runs on the demo set under the default limits.
package frontend

//go:generate go run ./internal/manifest

// Package graphiql holds the files of papergraph's GraphiQL page: GraphiQL,
// React and the explorer plugin bundled from npm by build.sh into one
// script, one style sheet and the fonts it names. They are committed in
// dist/, so that the binary serves the page with no network and go build
// needs no npm.
package graphiql

import (
	"embed"
	"fmt"
	"io/fs"
)

//go:embed dist/*.js dist/*.css dist/*.txt dist/fonts
var dist embed.FS

// Files are the page's files, each named by its content: the script
// (graphiql-HASH.js), the style sheet (graphiql-HASH.css), fonts/ and the
// licences of the npm packages in them (LICENSES-HASH.txt).
var Files, _ = fs.Sub(dist, "dist")

// Script, Style and Licenses are the names in Files of the page's script,
// style sheet and licences.
var Script, Style, Licenses = one("graphiql-*.js"), one("graphiql-*.css"), one("LICENSES-*.txt")

func one(pattern string) string {
	names, _ := fs.Glob(Files, pattern)
	if len(names) != 1 {
		panic(fmt.Sprintf("graphiql: %d files match %s in dist/, want 1: run build.sh", len(names), pattern))
	}
	return names[0]
}

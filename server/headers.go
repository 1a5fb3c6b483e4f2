package server

import "net/http"

// apiCSP is the Content-Security-Policy of every answer but GraphiQL's
// page: JSON, CSV and text load nothing and belong in no frame.
const apiCSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// secureHeaders sets the headers that keep browsers from reading an answer
// as something it is not, from framing it and from sending the URL of a
// GraphiQL page (which holds the query) on to the sites it loads from.
// Handlers may replace the Content-Security-Policy (GraphiQL does).
func secureHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", apiCSP)
		next.ServeHTTP(w, r)
	})
}

// graphiqlCSP is the Content-Security-Policy of GraphiQL's page: its
// script, style sheet and fonts from this server only (package graphiql
// embeds them), no inline script or style element, data: images (the
// editor's lint markers), and requests to this server only. GraphiQL sets
// styles through the DOM, which style-src does not govern; the one style
// element a library adds (the scroll lock behind GraphiQL's dialogs) is
// refused, which a page of the window's height does not miss.
const graphiqlCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src data:; " +
	"font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

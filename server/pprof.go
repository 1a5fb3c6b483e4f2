package server

import (
	"net/http"
	"net/http/pprof"
)

// profiles adds Go's runtime profiles (net/http/pprof) to mux, the
// separate metrics address's routes: an operator's address, as /metrics
// is, never the API's, since a CPU profile holds a core for its seconds.
func profiles(mux *http.ServeMux) {
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
}

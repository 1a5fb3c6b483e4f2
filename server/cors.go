package server

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// DefaultCORSOrigins lets a front end on the developer's own machine, on
// any port, call the API.
var DefaultCORSOrigins = []string{"http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"}

// corsPolicy decides which browser origins may read the API's responses.
// The API uses no cookies or credentials, so it never sends
// Access-Control-Allow-Credentials.
type corsPolicy struct {
	anyOrigin bool
	exact     map[string]bool // "scheme://host[:port]"
	anyPort   map[string]bool // "scheme://host", from patterns ending in ":*"
}

// newCORSPolicy parses origin patterns: "*" for any origin,
// "scheme://host:*" for a host on any port, or an exact "scheme://host[:port]".
func newCORSPolicy(patterns []string) (*corsPolicy, error) {
	p := &corsPolicy{exact: map[string]bool{}, anyPort: map[string]bool{}}
	for _, pat := range patterns {
		if pat == "*" {
			p.anyOrigin = true
			continue
		}
		base, wildPort := strings.CutSuffix(pat, ":*")
		key, ok := originKey(base, !wildPort)
		if !ok {
			return nil, fmt.Errorf("cors origin %q: want *, scheme://host[:port] or scheme://host:*", pat)
		}
		if wildPort {
			p.anyPort[key] = true
		} else {
			p.exact[key] = true
		}
	}
	return p, nil
}

// originKey normalises an origin to "scheme://host[:port]", or to
// "scheme://host" when withPort is false.
func originKey(origin string, withPort bool) (string, bool) {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" ||
		u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" {
		return "", false
	}
	host := u.Host
	if !withPort {
		host = u.Hostname()
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
	}
	return u.Scheme + "://" + strings.ToLower(host), true
}

func (p *corsPolicy) allows(origin string) bool {
	if p.anyOrigin {
		return true
	}
	if key, ok := originKey(origin, true); ok && p.exact[key] {
		return true
	}
	key, ok := originKey(origin, false)
	return ok && p.anyPort[key]
}

// handler answers preflight requests itself and adds the CORS response
// headers to the actual requests of allowed origins.
func (p *corsPolicy) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		origin := r.Header.Get("Origin")
		preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
		if origin == "" && !preflight {
			next.ServeHTTP(w, r)
			return
		}
		h.Add("Vary", "Origin")
		allowed := origin != "" && p.allows(origin)
		if preflight {
			h.Add("Vary", "Access-Control-Request-Method")
			h.Add("Vary", "Access-Control-Request-Headers")
			if allowed {
				h.Set("Access-Control-Allow-Origin", origin)
				h.Set("Access-Control-Allow-Methods", "GET, POST")
				// Authorization and X-API-Key carry a signed-in user's key.
				h.Set("Access-Control-Allow-Headers", "Accept, Content-Type, X-Request-Id, Authorization, X-API-Key")
				h.Set("Access-Control-Max-Age", "600")
			}
			// Without the headers above, the browser refuses the request.
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if allowed {
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Expose-Headers", requestIDHeader)
		}
		next.ServeHTTP(w, r)
	})
}

package ratelimit

import (
	"net/http"
	"net/netip"
	"strings"
)

// ClientKey names the budget a request spends: its client's address, an
// IPv4 address or an IPv6 /64 (one host's usual share, which it could
// otherwise walk through for fresh budgets).
//
// The client is the peer of the connection unless that peer is in
// trustedProxies: then it is the nearest address in X-Forwarded-For that
// is not, read from the right, since each proxy appends the peer it saw and
// everything to the left of a proxy we trust may be forged. Behind a load
// balancer without trustedProxies, every client spends the balancer's
// budget.
//
// API keys do not name budgets. Without a registry that issues and checks
// them, a client could send a fresh key with every request and have a
// fresh budget each time; the address is what it cannot mint as cheaply.
func ClientKey(r *http.Request, trustedProxies []netip.Prefix) string {
	client, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		// Not a TCP peer (a test's or a Unix socket's address): its text,
		// bounded, is the best name there is.
		return "peer:" + r.RemoteAddr[:min(len(r.RemoteAddr), 64)]
	}
	addr := client.Addr().Unmap()
	if trusted(addr, trustedProxies) {
		addr = forwardedFor(strings.Join(r.Header.Values("X-Forwarded-For"), ","), addr, trustedProxies)
	}
	if addr.Is4() {
		return "ip:" + addr.String()
	}
	return "ip:" + netip.PrefixFrom(addr.WithZone(""), 64).Masked().String()
}

// forwardedFor walks the X-Forwarded-For list from the right, starting at
// the trusted peer, to the first hop that is not a trusted proxy. An entry
// that does not parse ends the walk at the last hop a trusted proxy named.
func forwardedFor(list string, peer netip.Addr, trustedProxies []netip.Prefix) netip.Addr {
	client := peer
	for list != "" {
		i := strings.LastIndexByte(list, ',')
		hop := strings.TrimSpace(list[i+1:])
		list = list[:max(i, 0)]
		addr, err := netip.ParseAddr(hop)
		if err != nil {
			ap, perr := netip.ParseAddrPort(hop)
			if perr != nil {
				return client
			}
			addr = ap.Addr()
		}
		client = addr.Unmap()
		if !trusted(client, trustedProxies) {
			return client
		}
	}
	return client
}

func trusted(addr netip.Addr, proxies []netip.Prefix) bool {
	for _, p := range proxies {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

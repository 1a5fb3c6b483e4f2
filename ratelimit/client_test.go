package ratelimit_test

import (
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/papergraph/papergraph/ratelimit"
)

func TestClientKey(t *testing.T) {
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	tests := []struct {
		name    string
		remote  string
		xff     []string
		headers map[string]string
		trusted []netip.Prefix
		want    string
	}{
		{"IPv4 peer", "192.0.2.7:41000", nil, nil, nil, "ip:192.0.2.7"},
		{"IPv4 in IPv6", "[::ffff:192.0.2.7]:41000", nil, nil, nil, "ip:192.0.2.7"},
		{"IPv6 peer: its /64", "[2001:db8:1:2:3:4:5:6]:41000", nil, nil, nil, "ip:2001:db8:1:2::/64"},
		{"IPv6 hosts of one /64 share", "[2001:db8:1:2:ffff::1]:41000", nil, nil, nil, "ip:2001:db8:1:2::/64"},
		{"IPv6 with zone", "[fe80::1%eth0]:41000", nil, nil, nil, "ip:fe80::/64"},
		{"API keys name no budget", "192.0.2.7:41000", nil,
			map[string]string{"Authorization": "Bearer secret", "X-API-Key": "secret"}, nil, "ip:192.0.2.7"},
		{"forwarded-for from an untrusted peer is ignored", "192.0.2.7:41000", []string{"198.51.100.1"}, nil, proxies, "ip:192.0.2.7"},
		{"forwarded-for ignored when no proxy is trusted", "10.1.1.1:41000", []string{"198.51.100.1"}, nil, nil, "ip:10.1.1.1"},
		{"trusted proxy: the client it saw", "10.1.1.1:41000", []string{"198.51.100.1"}, nil, proxies, "ip:198.51.100.1"},
		{"trusted proxy: forged hops left of the client are ignored", "10.1.1.1:41000",
			[]string{"203.0.113.9, 198.51.100.1"}, nil, proxies, "ip:198.51.100.1"},
		{"chain of trusted proxies, over several headers", "10.1.1.1:41000",
			[]string{"203.0.113.9, 198.51.100.1", "10.2.2.2", "[fd00::1]:8080"}, nil, proxies, "ip:198.51.100.1"},
		{"trusted proxy, IPv6 client", "10.1.1.1:41000", []string{"2001:db8::1"}, nil, proxies, "ip:2001:db8::/64"},
		{"trusted proxy without forwarded-for", "10.1.1.1:41000", nil, nil, proxies, "ip:10.1.1.1"},
		{"all hops trusted: the farthest", "10.1.1.1:41000", []string{"10.3.3.3, 10.2.2.2"}, nil, proxies, "ip:10.3.3.3"},
		{"garbage hop: the last hop a proxy named", "10.1.1.1:41000", []string{"junk, 10.2.2.2"}, nil, proxies, "ip:10.2.2.2"},
		{"not a TCP peer", "pipe", nil, nil, nil, "peer:pipe"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/graphql", nil)
			r.RemoteAddr = tt.remote
			for _, v := range tt.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			for k, v := range tt.headers {
				r.Header.Set(k, v)
			}
			if got := ratelimit.ClientKey(r, tt.trusted); got != tt.want {
				t.Errorf("ClientKey = %q, want %q", got, tt.want)
			}
		})
	}
}

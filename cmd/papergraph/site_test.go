package main

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/papergraph/papergraph/server"
)

// TestSiteURLFlag: serve --site-url sets the sitemap's base URL, and a
// URL the sitemap cannot be made of is a usage error that names the flag.
func TestSiteURLFlag(t *testing.T) {
	apply := func(args ...string) (server.Config, error) {
		var cfg server.Config
		f, err := parseServeFlags(args, io.Discard)
		if err == nil {
			err = f.prod.apply(&cfg, io.Discard)
		}
		return cfg, err
	}
	if cfg, err := apply("--site-url", "https://papers.example.org/"); err != nil || cfg.SiteURL != "https://papers.example.org" {
		t.Errorf("--site-url https://papers.example.org/: %q, %v", cfg.SiteURL, err)
	}
	if cfg, err := apply(); err != nil || cfg.SiteURL != "" {
		t.Errorf("no --site-url: %q, %v", cfg.SiteURL, err)
	}
	if _, err := apply("--site-url", "papers.example.org"); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "--site-url") {
		t.Errorf("--site-url without a scheme: %v, want a usage error naming the flag", err)
	}
}

package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/papergraph/papergraph/ask"

	"github.com/papergraph/papergraph/llm"
	"github.com/papergraph/papergraph/server"
)

// production holds serve's switches for a server exposed to the internet.
type production struct {
	introspection, graphiql  *bool
	mcp                      *bool
	llmURL, llmModel         *string
	llmTimeout               *time.Duration
	metricsAddr, trustedDocs *string
	siteURL                  *string
}

func productionFlags(fs *flag.FlagSet) production {
	return production{
		introspection: fs.Bool("introspection", true, "answer introspection (__schema, __type); false refuses it with INTROSPECTION_DISABLED"),
		graphiql:      fs.Bool("graphiql", true, "serve GraphiQL at /; false answers / with a 404 pointing at /graphql"),
		mcp:           fs.Bool("mcp", true, "serve the Model Context Protocol endpoint at /mcp for AI agents (off with --trusted-documents)"),
		llmURL:        fs.String("llm-url", "", "answer ask from its passages with the OpenAI-compatible chat-completions API at `URL`\n(http://host:8000/v1; key in PAPERGRAPH_LLM_KEY); empty: ask gives passages alone"),
		llmModel:      fs.String("llm-model", "", "the `MODEL` --llm-url answers with"),
		llmTimeout:    fs.Duration("llm-timeout", ask.DefaultTimeout, "bound one answer of the model to `DURATION`"),
		metricsAddr:   fs.String("metrics-addr", "", "serve /metrics on this address only, not on --addr\n(empty: /metrics on --addr)"),
		siteURL: fs.String("site-url", "", "the front end's base `URL` (https://papers.example.org), whose paper and researcher pages\n"+
			"/sitemap.xml lists; empty: no sitemap"),
		trustedDocs: fs.String("trusted-documents", "", "run only the operations in this persisted-documents file\n(JSON {\"sha256:HASH\": \"query …\"} or an Apollo persisted query manifest)"),
	}
}

// apply sets cfg from the flags, reading the trusted documents.
func (p production) apply(cfg *server.Config, stderr io.Writer) error {
	cfg.DisableIntrospection = !*p.introspection
	cfg.DisableGraphiQL = !*p.graphiql
	cfg.DisableMCP = !*p.mcp
	if *p.llmURL != "" {
		cfg.LLM = &ask.LLM{Endpoint: llm.Endpoint{URL: *p.llmURL, Model: *p.llmModel, Key: os.Getenv("PAPERGRAPH_LLM_KEY")}, Timeout: *p.llmTimeout}
	}
	cfg.MetricsAddr = *p.metricsAddr
	if *p.siteURL != "" {
		site, err := server.ParseSiteURL(*p.siteURL)
		if err != nil {
			return fmt.Errorf("%w: --site-url: %v", errUsage, err)
		}
		cfg.SiteURL = site
	}
	if *p.trustedDocs != "" {
		docs, err := server.ReadTrustedDocuments(*p.trustedDocs)
		if err != nil {
			return fmt.Errorf("%w: --trusted-documents: %v", errUsage, err)
		}
		cfg.TrustedDocuments = docs
	}
	if *p.graphiql && (cfg.DisableIntrospection || cfg.TrustedDocuments != nil) {
		fmt.Fprintln(stderr, "papergraph: GraphiQL at / cannot load the schema or run its own queries with "+
			"introspection off or trusted documents only; add --graphiql=false")
	}
	return nil
}

// where says where serve's pages are, for its first line.
func (p production) where(addr string) string {
	api := "API at http://" + playgroundHost(addr) + "/graphql"
	if *p.graphiql {
		api = "GraphiQL at http://" + playgroundHost(addr) + "/, API at /graphql"
	}
	if *p.metricsAddr != "" {
		api += ", metrics at http://" + playgroundHost(*p.metricsAddr) + "/metrics"
	}
	return api
}

package server

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The MCP tools' GraphQL documents. Each is priced by the cost model as
// any client's query is; their lists are small so that a call costs few
// points.
const (
	mcpSearchDoc = `query McpSearch($query: String!, $categories: [String!], $first: Int) {
  searchPapers(query: $query, filter: {categories: $categories}, first: $first) {
    totalCount
    nodes { arxivId title byline published citationCount primaryCategory { code } }
  }
}`
	mcpPaperDoc = `query McpPaper($id: String!) {
  paper(id: $id) {
    arxivId title abstract byline published updated doi journalRef absUrl pdfUrl citationCount
    categories { code name }
    authors(first: 50) { position name researcher { researcherId slug } }
  }
}`
	mcpResearcherDoc = `query McpResearcher($id: String!) {
  researcher(id: $id) {
    researcherId slug name orcid paperCount hIndex citedByCount archiveHIndex
    fields(first: 5) { category { code name } count }
    papers(first: 10, sort: MOST_CITED) { totalCount nodes { arxivId title published citationCount } }
  }
}`
	mcpCoauthorsDoc = `query McpCoauthors($id: String!, $depth: Int, $maxNodes: Int) {
  researcher(id: $id) {
    researcherId name
    coauthors(first: 20) { totalCount nodes { sharedPaperCount researcher { researcherId slug name } } }
    network(depth: $depth, maxNodes: $maxNodes) {
      truncated
      nodes { depth paperCount researcher { id researcherId name } }
      edges { source target weight }
    }
  }
}`
	mcpPathDoc = `query McpPath($from: String!, $to: String!, $maxDepth: Int) {
  collaborationPath(from: $from, to: $to, maxDepth: $maxDepth) {
    length
    steps { researcher { researcherId slug name } papers { arxivId title } }
  }
}`
	mcpCitationsDoc = `query McpCitations($id: String!, $first: Int) {
  paper(id: $id) {
    arxivId title citationCount
    citations(first: $first, sort: MOST_CITED) { totalCount nodes { arxivId title published citationCount } }
    references(first: $first, sort: MOST_CITED) { totalCount nodes { arxivId title published citationCount } }
  }
}`
	mcpAskDoc = `query McpAsk($question: String!, $first: Int) {
  ask(question: $question, first: $first) {
    passages { number text position score paper { arxivId title } }
    answer { text citations removedCitations model tokens }
  }
}`
)

type mcpAskIn struct {
	Question string `json:"question" jsonschema:"the question, in plain words (at most 500 characters)"`
	First    *int   `json:"first,omitempty" jsonschema:"how many passages (1 to 20; 5 when absent)"`
}

type mcpSearchIn struct {
	Query      string   `json:"query" jsonschema:"words that must all appear in a paper's title or abstract; \"a quoted phrase\"; a word ending in * matches every word it begins"`
	Categories []string `json:"categories,omitempty" jsonschema:"only papers filed under one of these arXiv categories (e.g. hep-th)"`
	First      *int     `json:"first,omitempty" jsonschema:"how many papers, best match first (0 to 100; 20 when absent)"`
}

type mcpIDIn struct {
	ID string `json:"id" jsonschema:"the paper or researcher, in any form papergraph's GraphQL paper(id:) or researcher(id:) accepts"`
}

type mcpCoauthorsIn struct {
	ID       string `json:"id" jsonschema:"the researcher: profile id, slug (12-e-witten), ORCID or global id"`
	Depth    *int   `json:"depth,omitempty" jsonschema:"how many hops the network reaches (1 to 3; 1 when absent)"`
	MaxNodes *int   `json:"maxNodes,omitempty" jsonschema:"the most researchers in the network (1 to 2000; 100 when absent)"`
}

type mcpPathIn struct {
	From     string `json:"from" jsonschema:"where the path starts: any form of a researcher id"`
	To       string `json:"to" jsonschema:"where the path ends: any form of a researcher id"`
	MaxDepth *int   `json:"maxDepth,omitempty" jsonschema:"the most hops (1 to 8; 6 when absent)"`
}

type mcpCitationsIn struct {
	ID    string `json:"id" jsonschema:"the paper: arXiv id, DOI or global id"`
	First *int   `json:"first,omitempty" jsonschema:"how many citing and cited papers, most cited first (0 to 100; 20 when absent)"`
}

// addMCPTools adds the tools, each a fixed document of the above.
func addMCPTools(s *mcp.Server, g gqlRunner) {
	mcpTool[mcpSearchIn](s, g, "search_papers",
		"Full-text search of the arXiv papers' titles and abstracts, best match first.", mcpSearchDoc)
	mcpTool[mcpIDIn](s, g, "get_paper",
		"A paper by arXiv id (2108.10257, hep-th/9407087), DOI or global id: title, abstract, authors, categories. "+
			"The paper is null when the archive lacks it.", mcpPaperDoc)
	mcpTool[mcpIDIn](s, g, "get_researcher",
		"A researcher profile by id, slug, ORCID or global id: figures, fields and most cited papers. "+
			"Null when there is none.", mcpResearcherDoc)
	mcpTool[mcpCoauthorsIn](s, g, "coauthor_network",
		"A researcher's co-authors and co-author network to a few hops, tied by shared papers.", mcpCoauthorsDoc)
	mcpTool[mcpPathIn](s, g, "collaboration_path",
		"A shortest chain of co-authors from one researcher to another, with the papers each pair shares. "+
			"Null when there is none within maxDepth hops.", mcpPathDoc)
	mcpTool[mcpCitationsIn](s, g, "citations",
		"The papers of the archive citing a paper and those it cites, most cited first.", mcpCitationsDoc)
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Description: "Ask the papers: the sentences of arXiv abstracts that answer a question " +
		"best, numbered, each with its paper, and, when the server has a language model, an answer citing them as [n]. " +
		"The model's tokens cost budget points."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in mcpAskIn) (*mcp.CallToolResult, any, error) {
			return askResult(g.run(ctx, mcpAskDoc, in))
		})
}

// askResult is the ask tool's answer: the passages stand when there is
// no answer (the model failed, LLM_UNAVAILABLE, or the budget could not
// pay for its tokens), with a second text that says why.
func askResult(a *gqlAnswer, err error) (*mcp.CallToolResult, any, error) {
	if err != nil || len(a.Errors) == 0 || string(a.Data) == "null" || len(a.Data) == 0 {
		return toolResult(a, err)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(a.Data)},
		&mcp.TextContent{Text: "No answer: " + a.errorText()}}}, nil, nil
}

// Command papergraph serves the papergraph GraphQL API and imports
// scholarly data into its database.
//
//	papergraph serve  [--db DSN] [--addr :8080] [--rate-limit N] [--redis URL] [--harvest-every 6h]
//	papergraph import [--db DSN] [--max-errors N] FORMAT PATH...
//	papergraph import [--db DSN] demo
//	papergraph harvest [--db DSN] [--oai-url URL] [--set SET]... [--from DATE] [--until DATE]
//	papergraph stats  [--db DSN] [--json]
//	papergraph embed  [--db DSN] [--retrain] [--embeddings-url URL --embeddings-model NAME]
//	papergraph analyse [--db DSN] --llm-url URL --llm-model NAME [--since DATE] [--limit N]
//	papergraph topics [--db DSN] [--rebuild]
//	papergraph migrate [--db DSN]
//	papergraph apikey create --name NAME [--db DSN]
//	papergraph apikey list [--db DSN]
//	papergraph apikey revoke [--db DSN] ID|PREFIX
//
// DSN is a SQLite file path (or sqlite:PATH) or a postgres:// URL; it
// defaults to $PAPERGRAPH_DB, then to papergraph.db in the working directory.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// exitUsage is the exit status for a command line that makes no sense;
// exitErrors says the command ran but met errors (bad records, say).
const (
	exitErrors = 1
	exitUsage  = 2
)

// errUsage marks errors that are the command line's fault.
var errUsage = errors.New("usage")

// errReported says the command already told the user what went wrong.
var errReported = errors.New("errors reported")

// errHelp says the user asked for a command's help, which has been printed.
var errHelp = errors.New("help printed")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case err == nil, errors.Is(err, errHelp):
	case errors.Is(err, errUsage):
		fmt.Fprintln(os.Stderr, err)
		os.Exit(exitUsage)
	case errors.Is(err, errReported):
		os.Exit(exitErrors)
	default:
		fmt.Fprintln(os.Stderr, "papergraph:", err)
		os.Exit(exitErrors)
	}
}

const usage = `papergraph — a GraphQL API over arXiv papers, researchers and their networks

Commands:
  serve    serve the GraphQL API (GraphiQL at /, API at /graphql)
  import   import data files: papergraph import [flags] FORMAT PATH...
  harvest  bring the papers up to date from arXiv's OAI-PMH interface
  stats    print row counts
  migrate  bring the schema up to date, and end an import that was stopped
  apikey   create, list and revoke the API keys users sign in with
  enrich   fill external ids and figures from the OpenAlex and Semantic Scholar APIs
  embed    bring the papers' embeddings (vectors for similarity search) up to date
  analyse  write the papers' analyses (summary, novelty, field...) with a language model
  topics   bring the papers' topics up to date, or build them afresh

Every command takes --db DSN: a SQLite file (default papergraph.db, or
$PAPERGRAPH_DB) or a postgres:// URL. Run "papergraph COMMAND -h" for more.`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: %s", errUsage, usage)
	}
	cmds := map[string]func(context.Context, []string, io.Writer, io.Writer) error{
		"serve":   cmdServe,
		"import":  cmdImport,
		"harvest": cmdHarvest,
		"stats":   cmdStats,
		"migrate": cmdMigrate,
		"apikey":  cmdAPIKey,
		"enrich":  cmdEnrich,
		"embed":   cmdEmbed,
		"analyse": cmdAnalyse,
		"topics":  cmdTopics,
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
			fmt.Fprintln(stdout, usage)
			return nil
		}
		return fmt.Errorf("%w: unknown command %q\n\n%s", errUsage, args[0], usage)
	}
	return cmd(ctx, args[1:], stdout, stderr)
}

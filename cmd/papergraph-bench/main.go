// Command papergraph-bench measures papergraph at scale: synth writes a
// synthetic corpus of any size modelled on the demo set, run drives a
// running server with a fixed mix of operations, plot draws the latencies
// of run's outputs against archive size, report renders them as the
// tables of docs/performance.md, and peer measures papergraph against
// PostGraphile on the README's first query; embed measures the
// built-in embedding model's cost, search-quality how often each search
// mode finds the paper a query looks for; probe asks a server started
// with its default flags whether one client can exhaust it.
//
//	papergraph-bench synth --papers N [--seed S] [--increment N --revised N] --out DIR
//	papergraph-bench run [--url URL] --corpus DIR [--clients 1,10] [--duration 10s] [--label NAME] [--one-client]
//	papergraph-bench plot [--clients 10] [--metric p50|p99] [--skip OP,...] --out FILE.svg RUN.json...
//	papergraph-bench report [--write FILE.md] RUN.json...
//	papergraph-bench peer [--pg DSN] [--duration 10s] [--rounds 3]
//	papergraph-bench embed --corpus DIR | --db DSN
//	papergraph-bench probe [--db DSN] [--only PROBE,...]
//	papergraph-bench adversarial [--pg DSN] [--db sqlite,postgres] [--duration 10s]
//	papergraph-bench search-quality --db DSN [--queries FILE,...] [--modes KEYWORD,SEMANTIC,HYBRID]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/db"
)

func main() {
	// An interrupt cancels the context, so that peer stops the servers it
	// started and drops its databases before it exits.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "papergraph-bench:", err)
		}
		os.Exit(2)
	}
}

const usage = `usage:
  papergraph-bench synth --papers N [--seed S] [--increment N --revised N] --out DIR
      writes a SYNTHETIC corpus of N papers into DIR and prints the commands that import it
  papergraph-bench run [--url URL] --corpus DIR [--clients 1,10] [--duration 10s] [--table] [--label NAME] [--one-client]
      drives the server at URL with the operation mix, prints p50/p99/throughput as JSON
      (with "label": NAME, naming what served it, such as SQLite or PostgreSQL)
  papergraph-bench plot [--clients 10] [--metric p50|p99] [--skip OP,...] --out FILE.svg|FILE.png RUN.json...
      draws the latency of run's JSON files against archive size (both axes log), at one concurrency:
      a line per label and operation
  papergraph-bench report [--write FILE.md] RUN.json...
      renders run's JSON files as Markdown tables, or writes them into FILE.md between its marker lines
  papergraph-bench peer [--pg DSN] [--duration 10s] [--rounds 3] [--papers 2000] [--peer-workers 1] [--one-client]
      builds papergraph, loads the demo set into PostgreSQL and SQLite, sets up PostGraphile 4.14.1
      on a copy of the PostgreSQL database, checks the servers answer alike, then measures the README's
      first query on all three and prints a table and JSON with the ratios
  papergraph-bench embed --corpus DIR | --db DSN
      imports synth's papers into a new SQLite database (or takes an imported one), learns the built-in
      embedding model and embeds every paper, and prints the time, peak heap and bytes per paper as JSON
  papergraph-bench vectors --papers N [--dim 256] [--scan N] [--lists N] [--queries 200] [--truth 50]
      builds the vector index of N SYNTHETIC clustered vectors and prints its build time, bytes per
      paper, p50/p99 latency of a top-100 search and recall@100 against brute force, as JSON
  papergraph-bench probe [--db DSN] [--only ws-idle,http-idle,follows,repeat-token,subscribers] [--conns 20000] [--parallel 32]
      [--records 20000] [--serve-flag F]...
      starts papergraph serve with its default flags on a fresh demo database (SQLite, and PostgreSQL
      under --db) and asks whether one client can exhaust it: idle WebSocket or keep-alive connections from
      one address (dialled by papergraph-bench flood, a process of its own),
      parallel aliased follows from one key, a repository repeating its resumption token, and a harvest
      with many subscribers; prints a table
  papergraph-bench adversarial [--pg DSN] [--db sqlite,postgres] [--duration 10s] [--papergraph BIN] [--serve-flag F]...
      imports the demo set into new SQLite and PostgreSQL databases and, for each probe (the answer bomb
      of 50 and 200 aliases four at once, floods of failing documents from 32 and 64 connections), starts
      papergraph serve with its default limits and runs the attack (from papergraph-bench attack, a process
      of its own) beside a client looping the README's first query; prints whether the server lived, its peak RSS, the client's p50/p99 and the attack's codes
  papergraph-bench search-quality --db DSN [--queries FILE,...] [--modes KEYWORD,SEMANTIC,HYBRID] [--misses]
      posts each query of the files (by default the repository's known-item, paraphrase and natural-language
      sets for the demo set) to searchPapers in each mode, with the archive's vector index, and prints how
      often its paper comes first and among the first ten, per set and mode (and per half of each file)
  papergraph-bench topics --db DSN [--increment 250]
      clusters an imported, embedded archive into topics (reading it only) and prints, as JSON, their
      agreement with the arXiv primary categories (NMI, purity) at each level, whether a rerun is
      identical, and how the newest papers land when filed into topics built from the others
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("a subcommand is needed: synth, run, plot, report, peer, embed, vectors, probe, adversarial, search-quality or topics")
	}
	switch args[0] {
	case "synth":
		return cmdSynth(args[1:], stdout, stderr)
	case "run":
		return cmdRun(ctx, args[1:], stdout, stderr)
	case "plot":
		return cmdPlot(args[1:], stderr)
	case "report":
		return cmdReport(args[1:], stdout, stderr)
	case "peer":
		return cmdPeer(ctx, args[1:], stdout, stderr)
	case "embed":
		return cmdEmbed(ctx, args[1:], stdout, stderr)
	case "vectors":
		return cmdVectors(ctx, args[1:], stdout, stderr)
	case "probe":
		return cmdProbe(ctx, args[1:], stdout, stderr)
	case "flood":
		return cmdFlood(ctx, args[1:], os.Stdin, stdout, stderr)
	case "attack":
		return cmdAttack(ctx, args[1:], os.Stdin, stdout, stderr)
	case "adversarial":
		return cmdAdversarial(ctx, args[1:], stdout, stderr)
	case "search-quality":
		return cmdSearchQuality(ctx, args[1:], stdout, stderr)
	case "topics":
		return cmdTopics(ctx, args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown subcommand %q", args[0])
}

// newFlags makes a subcommand's flag set, which reports its errors and
// its usage on stderr and leaves the exit to main.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// openArchive parses the args of a subcommand that takes --db DSN and
// no other arguments, and opens the archive DSN names.
func openArchive(fs *flag.FlagSet, args []string, dsn *string) (*bun.DB, error) {
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if *dsn == "" || fs.NArg() > 0 {
		return nil, fmt.Errorf("%s needs --db DSN and no other arguments", fs.Name())
	}
	return db.Open(*dsn)
}

func cmdSynth(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("synth", stderr)
	n := fs.Int("papers", 0, "papers to write (1 to 3,000,000 and more)")
	seed := fs.Uint64("seed", 1, "seed of the random draws: one seed, one corpus, byte for byte")
	out := fs.String("out", "", "directory to write the corpus into")
	var inc increment
	fs.IntVar(&inc.New, "increment", 0, "also write "+incrementFile+": a day's increment of `N` new papers after the corpus")
	fs.IntVar(&inc.Revised, "revised", 0, "and in it a second version of `N` of the corpus's recent papers")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() > 0 {
		return errors.New("synth needs --out DIR and no other arguments")
	}
	m, err := demoModel()
	if err != nil {
		return err
	}
	start := time.Now()
	man, err := synth(m, *n, *seed, *out, inc)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "# SYNTHETIC corpus: %d papers drawn with seed %d from distributions of papergraph's demo set, in %s; "+
		"no paper, person or citation in it is real.\n", man.Papers, man.Seed, time.Since(start).Round(time.Millisecond))
	fmt.Fprintf(stdout, "# Load it with:\n")
	for _, c := range importCommands(*out) {
		fmt.Fprintln(stdout, c)
	}
	if inc.New > 0 || inc.Revised > 0 {
		fmt.Fprintf(stdout, "# and then its increment (%d new papers, %d new versions) with:\n%s\n", inc.New, inc.Revised,
			"papergraph import kaggle "+quote(filepath.Join(*out, incrementFile)))
	}
	return nil
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("run", stderr)
	base := fs.String("url", "http://localhost:8080", "the server's base URL")
	corpus := fs.String("corpus", "", "the directory synth wrote (its bench.json names what to ask for)")
	clientsFlag := fs.String("clients", "1,10", "comma-separated concurrencies: clients that each send a request as soon as their last is answered")
	d := fs.Duration("duration", 10*time.Second, "how long each operation runs at each concurrency")
	tableToo := fs.Bool("table", true, "also write a table to standard error")
	oneClient := fs.Bool("one-client", false, "send every connection from one address, so that papergraph counts the clients as one\n(which shares the server's statement slots with no one else); default, for a loopback --url:\none loopback address per connection, as peer does")
	label := fs.String("label", "", "a name for what serves the corpus, such as SQLite or PostgreSQL, written into the JSON: plot draws a line per label")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *corpus == "" || fs.NArg() > 0 {
		return errors.New("run needs --corpus DIR and no other arguments")
	}
	clients, err := parseClients(*clientsFlag)
	if err != nil {
		return err
	}
	man, err := readManifest(*corpus)
	if err != nil {
		return err
	}
	// Each client its own loopback address (see benchClient), as many
	// clients as connections to papergraph's fair share of statement
	// slots. A server elsewhere is reached from the host's address.
	client := benchClient(*oneClient || !loopbackURL(*base))
	ops, err := mix(ctx, client, strings.TrimSuffix(*base, "/"), man, stderr)
	if err != nil {
		return err
	}
	rs := attack(ops, clients, *d, client)
	if *tableToo {
		if err := table(stderr, rs); err != nil {
			return err
		}
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(runReport{Synthetic: man.Synthetic, Papers: man.Papers, Seed: man.Seed, Label: *label,
		DurationS: d.Seconds(), Results: rs})
}

// loopbackURL reports whether u names a server on this host's IPv4
// loopback (localhost or 127.0.0.0/8), which the load can reach from any
// 127.0.0.x address; ::1 is not, being IPv6.
func loopbackURL(u string) bool {
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	if h := p.Hostname(); h == "localhost" {
		return true
	} else if ip := net.ParseIP(h); ip != nil {
		return ip.IsLoopback() && ip.To4() != nil
	}
	return false
}

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The floods of the ws-idle and http-idle probes run in a process of their
// own (papergraph-bench flood, which the probe starts): the client the
// probe times then shares no Go scheduler with the flood's dialers.

// floodKinds are what a flood holds open: initialised graphql-transport-ws
// connections, or keep-alive HTTP connections that asked one request.
var floodKinds = []string{"ws", "http"}

// floodReport is the line the flood writes once every connection was
// tried; it then holds those admitted until its standard input ends.
type floodReport struct {
	Tried    int            `json:"tried"`
	Seconds  float64        `json:"seconds"`
	Outcomes map[string]int `json:"outcomes"`
}

// cmdFlood opens --conns connections of --kind to --url from 127.0.0.1,
// --parallel at a time, reports them on stdout, and holds the admitted
// ones, answering the server's pings, until stdin ends.
func cmdFlood(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("flood", stderr)
	kind := fs.String("kind", "ws", "what to hold open: ws or http")
	u := fs.String("url", "", "the server's /graphql URL")
	conns := fs.Int("conns", 20000, "connections to try")
	parallel := fs.Int("parallel", defaultProbeParallel, "connections dialled at once")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !slices.Contains(floodKinds, *kind) || *u == "" || *parallel < 1 {
		return fmt.Errorf("flood: want --kind ws or http, a --url and --parallel of at least 1")
	}
	dial := func() (io.Closer, string, error) { return httpIdleDial(ctx, *u) }
	if *kind == "ws" {
		wsURL := "ws" + strings.TrimPrefix(*u, "http")
		dial = func() (io.Closer, string, error) {
			c, refused, err := wsDial(ctx, wsURL, net.IPv4(127, 0, 0, 1))
			if c == nil {
				return nil, refused, err
			}
			go answerPings(ctx, c)
			return closer(c.CloseNow), "", nil
		}
	}
	var (
		mu       sync.Mutex
		held     []io.Closer
		outcomes = map[string]int{}
		next     atomic.Int64
		workers  sync.WaitGroup
	)
	start := time.Now()
	for range *parallel {
		workers.Go(func() {
			for next.Add(1) <= int64(*conns) {
				c, refused, err := dial()
				mu.Lock()
				switch {
				case err != nil:
					outcomes["error: "+shortErr(err)]++
				case c != nil:
					outcomes["admitted"]++
					held = append(held, c)
				default:
					outcomes["refused, "+refused]++
				}
				mu.Unlock()
			}
		})
	}
	workers.Wait()
	if err := json.NewEncoder(stdout).Encode(floodReport{Tried: *conns, Seconds: time.Since(start).Seconds(), Outcomes: outcomes}); err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, stdin)
	for _, c := range held {
		c.Close()
	}
	return nil
}

type closer func() error

func (c closer) Close() error { return c() }

// httpIdleDial opens a TCP connection from 127.0.0.1 to the server of u,
// asks GET /healthz on it as a keep-alive client does, and returns it to
// be held idle when answered 200, or the status that refused it.
func httpIdleDial(ctx context.Context, u string) (io.Closer, string, error) {
	host := strings.TrimPrefix(strings.TrimPrefix(u, "http://"), "https://")
	host, _, _ = strings.Cut(host, "/")
	d := &net.Dialer{Timeout: 30 * time.Second, LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}}
	c, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, "", err
	}
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: "+host+"\r\n\r\n"); err != nil {
		c.Close()
		return nil, "", err
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		c.Close()
		return nil, "", err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	_ = c.SetDeadline(time.Time{})
	if res.StatusCode != http.StatusOK {
		c.Close()
		return nil, "HTTP " + strconv.Itoa(res.StatusCode), nil
	}
	return c, "", nil
}

// flood is a running papergraph-bench flood.
type flood struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	report chan floodReport
	err    chan error
}

// startFlood runs this program's flood subcommand against u.
func startFlood(ctx context.Context, kind, u string, conns, parallel int) (*flood, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, self, "flood", "--kind", kind, "--url", u,
		"--conns", strconv.Itoa(conns), "--parallel", strconv.Itoa(parallel))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	f := &flood{cmd: cmd, stdin: stdin, report: make(chan floodReport, 1), err: make(chan error, 1)}
	go func() {
		var r floodReport
		if err := json.NewDecoder(stdout).Decode(&r); err != nil {
			f.err <- fmt.Errorf("flood: %w", err)
			return
		}
		f.report <- r
	}()
	return f, nil
}

// wait waits for the flood's report.
func (f *flood) wait() (floodReport, error) {
	select {
	case r := <-f.report:
		return r, nil
	case err := <-f.err:
		f.stop()
		return floodReport{}, err
	}
}

// stop makes the flood close what it holds, and waits for it to end.
func (f *flood) stop() {
	f.stdin.Close()
	if err := f.cmd.Wait(); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "flood:", err)
	}
}

// probeIdleFlood runs a flood of kind (ws or http) of o.conns connections
// from 127.0.0.1 in a process of its own, and holds those admitted, while
// another client asks the README query from other addresses: before the
// flood, while it dials, and while it holds; the server's descriptors are
// sampled throughout.
func probeIdleFlood(ctx context.Context, o probeOptions, kind string, srv *target, client *http.Client, paper string) ([]probeRow, error) {
	pid := srv.cmd.Process.Pid
	var peakFDs atomic.Int64
	sampling := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() {
		for {
			if n := int64(procFDs(pid)); n > peakFDs.Load() {
				peakFDs.Store(n)
			}
			select {
			case <-sampling:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
	defer func() { close(sampling); sampler.Wait() }()
	ask := func(int) error {
		return graphQL(ctx, client, srv.url, "", readmeQuery, map[string]any{"paper": paper, "first": 10}, nil)
	}
	alone, stopAlone := meanwhile(ask)
	time.Sleep(15 * time.Second)
	stopAlone()
	readme, stopReadme := meanwhile(ask)
	f, err := startFlood(ctx, kind, srv.url, o.conns, o.parallel)
	if err != nil {
		stopReadme()
		return nil, err
	}
	report, err := f.wait()
	stopReadme()
	if err != nil {
		return nil, err
	}
	holding, stopHolding := meanwhile(ask)
	time.Sleep(5 * time.Second) // the held connections sit idle while the other client goes on
	heldFDs := procFDs(pid)
	stopHolding()
	f.stop()
	var kinds []string
	for k, n := range report.Outcomes {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	slices.Sort(kinds)
	return []probeRow{
		{Figure: "connections tried from 127.0.0.1 (another process)", Value: fmt.Sprintf("%d in %.1f s, %d at a time", report.Tried, report.Seconds, o.parallel)},
		{Figure: "outcomes", Value: strings.Join(kinds, "; ")},
		{Figure: "server descriptors (held / peak / limit)", Value: fmt.Sprintf("%d / %d / %s", heldFDs, peakFDs.Load(), fdLimit(fmt.Sprintf("/proc/%d", pid)))},
		{Figure: "README query from other addresses, before", Value: alone.summary()},
		{Figure: "README query from other addresses during the flood", Value: readme.summary()},
		{Figure: "README query from other addresses while those admitted are held", Value: holding.summary()},
	}, nil
}

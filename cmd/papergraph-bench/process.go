package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The processes the commands start: papergraph built from this source
// tree, servers under measure (a target) with their logs in the work
// directory, setup commands at low priority, this program's own
// subcommands as children (attack, flood), and what /proc says of them.

// target is one server under measure.
type target struct {
	name   string
	url    string // the GraphQL endpoint
	query  string
	cmd    *exec.Cmd
	pgDB   string // the database whose backends count in its CPU; "" for SQLite
	exited chan struct{}
}

// buildPapergraph builds ./cmd/papergraph of the module the working
// directory is in.
func buildPapergraph(ctx context.Context, out string) error {
	gomod := strings.TrimSpace(output(ctx, "go", "env", "GOMOD"))
	if gomod == "" || gomod == os.DevNull {
		return errors.New("run peer inside papergraph's source tree (it builds ./cmd/papergraph), or pass --papergraph BIN")
	}
	cmd := lowPriority(ctx, "go", "build", "-o", out, "./cmd/papergraph")
	cmd.Dir = filepath.Dir(gomod)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/papergraph: %w\n%s", err, b)
	}
	return nil
}

// lowPriority runs setup commands (builds, imports, npm ci) under nice
// where the machine has it, so that they disturb others less; the
// measured servers run at normal priority.
func lowPriority(ctx context.Context, name string, args ...string) *exec.Cmd {
	if nice, err := exec.LookPath("nice"); err == nil {
		return exec.CommandContext(ctx, nice, append([]string{"-n", "19", name}, args...)...)
	}
	return exec.CommandContext(ctx, name, args...)
}

// quiet runs a setup command with its output in a log file of the work
// directory, shown only if it fails.
func quiet(ctx context.Context, work, logName, name string, args ...string) error {
	cmd := lowPriority(ctx, name, args...)
	b, err := cmd.CombinedOutput()
	_ = os.WriteFile(filepath.Join(work, logName+".log"), b, 0o644)
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", filepath.Base(name), args[0], err, tail(b, 2000))
	}
	return nil
}

// tail is the last n bytes of b, all of it when shorter.
func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// output is what a command wrote on its standard output, "" when it
// could not run.
func output(ctx context.Context, name string, args ...string) string {
	b, _ := exec.CommandContext(ctx, name, args...).Output()
	return string(b)
}

// freePort is a loopback address with a port free at the time of asking.
func freePort() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "127.0.0.1:0"
	}
	defer l.Close()
	return l.Addr().String()
}

// start starts t's command with its output in t.name.log of the work
// directory; t.exited closes when it ends.
func start(work string, t *target) error {
	logFile, err := os.Create(filepath.Join(work, t.name+".log"))
	if err != nil {
		return err
	}
	t.cmd.Stdout, t.cmd.Stderr = logFile, logFile
	t.cmd.Env = append(os.Environ(), "NODE_ENV=production")
	if err := t.cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("starting %s: %w", t.name, err)
	}
	t.exited = make(chan struct{})
	go func() {
		_ = t.cmd.Wait()
		logFile.Close()
		close(t.exited)
	}()
	return nil
}

// stop ends a server: an interrupt, then a kill after ten seconds.
func stop(t *target) {
	if t.cmd.Process == nil {
		return
	}
	_ = t.cmd.Process.Signal(os.Interrupt)
	select {
	case <-t.exited:
	case <-time.After(10 * time.Second):
		_ = t.cmd.Process.Kill()
		<-t.exited
	}
}

// waitReady polls the server until it answers a GraphQL query.
func waitReady(ctx context.Context, client *http.Client, t *target, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		select {
		case <-t.exited:
			return fmt.Errorf("%s exited at start (%v); see its log", t.name, t.cmd.ProcessState)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		var r struct{ Data map[string]any }
		if err := post(ctx, client, t.url, []byte(`{"query":"{ __typename }"}`), &r); err == nil && r.Data != nil {
			return nil
		}
		time.Sleep(250 * time.Millisecond)
	}
	return fmt.Errorf("%s did not answer within %s", t.name, within)
}

// startSelf runs this program with args (a subcommand and its flags), its
// standard error this process's: the caller writes to its stdin and reads
// its report from its stdout, and waits for cmd.
func startSelf(ctx context.Context, args ...string) (cmd *exec.Cmd, stdin io.WriteCloser, stdout io.ReadCloser, err error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, nil, err
	}
	cmd = exec.CommandContext(ctx, self, args...)
	cmd.Stderr = os.Stderr
	if stdin, err = cmd.StdinPipe(); err != nil {
		return nil, nil, nil, err
	}
	if stdout, err = cmd.StdoutPipe(); err != nil {
		return nil, nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, nil, err
	}
	return cmd, stdin, stdout, nil
}

// procStatus reads a field of /proc/PID/status as it is written there,
// with its unit (kB for memory).
func procStatus(pid int, field string) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(string(b)) {
		if name, v, ok := strings.Cut(line, ":"); ok && name == field {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("/proc/%d/status has no %s", pid, field)
}

// statusOrUnknown is procStatus's field, or "unknown" when it cannot be read.
func statusOrUnknown(pid int, field string) string {
	v, err := procStatus(pid, field)
	if err != nil {
		return "unknown"
	}
	return v
}

// statusKB reads a field in kB of /proc/PID/status, such as VmHWM.
func statusKB(pid int, field string) (int64, error) {
	v, err := procStatus(pid, field)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSuffix(v, " kB"), 10, 64)
}

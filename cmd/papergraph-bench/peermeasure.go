package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	gqlmodel "github.com/papergraph/papergraph/graph/model"
)

// The parts of peer that need no server: the variable rotation, the
// normaliser that makes two servers' answers comparable, the CPU
// accounting read from /proc and the arithmetic of the report.

// minRotation is the fewest papers the variables rotate over, so that no
// cache holds the whole sequence.
const minRotation = 1000

// rotation draws n of papers in an order fixed by seed. Every server is
// sent the same sequence: the i-th request of a cell asks for paper i mod
// n.
func rotation(papers []string, n int, seed uint64) ([]string, error) {
	if n < minRotation {
		return nil, fmt.Errorf("--papers %d: the variables must rotate over at least %d papers", n, minRotation)
	}
	distinct := slices.Clone(papers)
	slices.Sort(distinct)
	distinct = slices.Compact(distinct)
	if len(distinct) < n {
		return nil, fmt.Errorf("the database has %d papers with an arXiv id, fewer than the %d to rotate over", len(distinct), n)
	}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	r.Shuffle(len(distinct), func(i, j int) { distinct[i], distinct[j] = distinct[j], distinct[i] })
	return distinct[:n], nil
}

// requestBodies are the GraphQL request bodies of query for each paper
// of the rotation, with $first set to first.
func requestBodies(query string, papers []string, first int) [][]byte {
	out := make([][]byte, len(papers))
	for i, p := range papers {
		out[i], _ = json.Marshal(map[string]any{"query": query, "variables": map[string]any{"paper": p, "first": first}})
	}
	return out
}

// rotatingTargeter sends bodies in turn to url, from the first, however
// many workers ask for targets.
func rotatingTargeter(url string, bodies [][]byte) vegeta.Targeter {
	var next atomic.Uint64
	hdr := http.Header{"Content-Type": {"application/json"}}
	return func(t *vegeta.Target) error {
		i := next.Add(1) - 1
		*t = vegeta.Target{Method: http.MethodPost, URL: url, Body: bodies[i%uint64(len(bodies))], Header: hdr}
		return nil
	}
}

// normalise rewrites a decoded GraphQL answer so that papergraph's and
// PostGraphile's compare equal when they hold the same rows: an id becomes
// the row's number (papergraph's Node ids are decoded; PostGraphile shows
// a bigint as a string of digits), a time is written in UTC, and a cursor,
// which each server makes its own way, is kept only as whether it is set.
func normalise(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			switch s, isString := e.(string); {
			case k == "id" && isString:
				if _, id, ok := gqlmodel.ParseGlobalID(s); ok {
					s = strconv.FormatInt(id, 10)
				}
				out[k] = s
			case k == "published" && isString:
				if t, err := time.Parse(time.RFC3339, s); err == nil {
					s = t.UTC().Format(time.RFC3339)
				}
				out[k] = s
			case k == "endCursor" || k == "startCursor":
				out[k] = e != nil
			default:
				out[k] = normalise(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalise(e)
		}
		return out
	}
	return v
}

// answerData decodes a GraphQL response and returns its normalised data;
// a response with errors or without data is an error.
func answerData(body []byte) (any, error) {
	var r struct {
		Data   any `json:"data"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("not a GraphQL response: %.200s", body)
	}
	if len(r.Errors) > 0 {
		return nil, fmt.Errorf("GraphQL errors: %s", r.Errors[0].Message)
	}
	if r.Data == nil {
		return nil, errors.New("no data")
	}
	return normalise(r.Data), nil
}

// firstDifference is the path of the first place where a and b differ
// (keys in sorted order), with both values, or "" when they are equal.
func firstDifference(a, b any, path string) string {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(x)+len(y))
		for k := range x {
			keys = append(keys, k)
		}
		for k := range y {
			if _, ok := x[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			if d := firstDifference(x[k], y[k], path+"."+k); d != "" {
				return d
			}
		}
		return ""
	case []any:
		y, ok := b.([]any)
		if !ok {
			break
		}
		for i := range min(len(x), len(y)) {
			if d := firstDifference(x[i], y[i], fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
		if len(x) != len(y) {
			return fmt.Sprintf("%s: %d items against %d", path, len(x), len(y))
		}
		return ""
	}
	if reflect.DeepEqual(a, b) {
		return ""
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return fmt.Sprintf("%s: %.200s against %.200s", path, ja, jb)
}

// clockTicks is the unit of the CPU times in /proc/PID/stat: USER_HZ,
// which Linux fixes at 100 for user space.
const clockTicks = 100

// procCPU is the CPU time in /proc/PID/stat content: user and system
// time, and with children the time of reaped children too.
func procCPU(stat []byte, children bool) (ppid int, cpu time.Duration, err error) {
	// The command name is in parentheses and may hold spaces and
	// parentheses itself: the fields start after the last ')'.
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, 0, errors.New("no command name")
	}
	f := strings.Fields(string(stat[end+1:]))
	// f[0] is field 3 (state): ppid is field 4, utime 14, stime 15,
	// cutime 16, cstime 17.
	if len(f) < 15 {
		return 0, 0, fmt.Errorf("%d fields", len(f))
	}
	ppid, err = strconv.Atoi(f[1])
	if err != nil {
		return 0, 0, err
	}
	fields := []int{11, 12}
	if children {
		fields = append(fields, 13, 14)
	}
	var ticks int64
	for _, i := range fields {
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return 0, 0, err
		}
		ticks += n
	}
	return ppid, time.Duration(ticks) * time.Second / clockTicks, nil
}

// treeCPU adds up the CPU time of process root and its descendants
// (children that have exited and been reaped count in their parent), as
// /proc under procDir shows them.
func treeCPU(procDir string, root int) (time.Duration, error) {
	entries, err := os.ReadDir(procDir)
	if err != nil {
		return 0, err
	}
	type proc struct {
		ppid int
		cpu  time.Duration
	}
	procs := map[int]proc{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(procDir, e.Name(), "stat"))
		if err != nil {
			continue // exited meanwhile
		}
		ppid, cpu, err := procCPU(b, true)
		if err != nil {
			return 0, fmt.Errorf("%s/%d/stat: %w", procDir, pid, err)
		}
		procs[pid] = proc{ppid, cpu}
	}
	if _, ok := procs[root]; !ok {
		return 0, fmt.Errorf("process %d is not running", root)
	}
	var total time.Duration
	for pid, p := range procs {
		for q, depth := pid, 0; depth < 64; depth++ {
			if q == root {
				total += p.cpu
				break
			}
			parent, ok := procs[q]
			if !ok || parent.ppid == q {
				break
			}
			q = parent.ppid
		}
	}
	return total, nil
}

// pidsCPU reads the CPU time of each of pids that is still running (the
// PostgreSQL backends of a database); pids that have gone are left out.
func pidsCPU(procDir string, pids []int) map[int]time.Duration {
	out := make(map[int]time.Duration, len(pids))
	for _, pid := range pids {
		b, err := os.ReadFile(filepath.Join(procDir, strconv.Itoa(pid), "stat"))
		if err != nil {
			continue
		}
		if _, cpu, err := procCPU(b, false); err == nil {
			out[pid] = cpu
		}
	}
	return out
}

// backendDelta is the CPU the backends spent between two readings: a
// backend that started meanwhile counts in full, one that ended meanwhile
// is lost (the report says so by counting them).
func backendDelta(before, after map[int]time.Duration) (cpu time.Duration, gone int) {
	for pid, a := range after {
		cpu += a - before[pid]
	}
	for pid := range before {
		if _, ok := after[pid]; !ok {
			gone++
		}
	}
	return cpu, gone
}

// percentile is the nearest-rank q-quantile of sorted latencies.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// ratio is a/b, 0 when b is 0 (JSON has no infinity).
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return math.Round(a/b*100) / 100
}

// loadAverage is the first three fields of /proc/loadavg.
func loadAverage(procDir string) string {
	b, err := os.ReadFile(filepath.Join(procDir, "loadavg"))
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// loopbackSource is the i-th source address of the load's connections:
// 127.0.0.2 to 127.0.0.251, round again.
func loopbackSource(i uint32) net.IP {
	return net.IPv4(127, 0, 0, byte(2+i%250))
}

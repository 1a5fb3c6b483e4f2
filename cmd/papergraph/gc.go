package main

import (
	"cmp"
	"os"
	"runtime/debug"

	"github.com/papergraph/papergraph/server"
)

// The garbage collector's settings for serve. A request of the README's
// first query allocates thousands of small objects and keeps none of
// them, while the server's live heap is small: at Go's
// default GOGC of 100 the collector then runs every few dozen requests,
// and its background marking and the allocations' assists become a
// large share of a busy server's CPU. At 400 it runs a quarter as often,
// for a heap a few times the live one.
// The soft memory limit keeps that from growing with a large live heap
// (an import or harvest run inside serve, many large answers at once):
// past it the collector runs as often as it must to stay under it. It is
// the server's answer memory (server.DefaultMaxAnswerMemory), which bounds
// what answers in flight hold, and a quarter as much again for the rest of
// the live heap and the garbage of answers stopped short: with every answer
// at its budget the live heap stays below it, while a limit far above it
// lets the garbage of a few answer bombs at once grow the process well
// past what it needs (the large answers' pace keeps the collector's extra
// work near the limit small).
const (
	servingGCPercent   = 400
	servingMemoryLimit = server.DefaultMaxAnswerMemory * 5 / 4
)

// tuneGC applies servingGCPercent and the soft memory limit, memoryLimit
// bytes or, when it is 0, servingMemoryLimit: each unless the environment
// sets it (GOGC, GOMEMLIMIT), which the runtime has read already and which
// then stands; a memoryLimit given stands over GOMEMLIMIT.
func tuneGC(memoryLimit int64) {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(servingGCPercent)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); memoryLimit > 0 || !set {
		debug.SetMemoryLimit(cmp.Or(memoryLimit, servingMemoryLimit))
	}
}

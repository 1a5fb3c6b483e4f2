// Package funclength holds the test that keeps the hand-written functions
// of papergraph at most MaxLines lines, so that each reads as one step;
// a longer one is split into named steps.
package funclength

// MaxLines is the most lines a hand-written function (or function
// literal) may span, from its func keyword to its closing brace.
const MaxLines = 80

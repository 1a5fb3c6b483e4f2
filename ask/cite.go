package ask

import (
	"slices"
	"strconv"
	"strings"
)

// maxCitationLen bounds a bracket read as a citation ("[1, 2, 3]"):
// a longer one is text.
const maxCitationLen = 32

// citer checks the citations of a streamed answer as its pieces arrive:
// text in brackets that is a list of numbers ("[2]", "[1, 3]") cites
// passages; the numbers outside 1..n are removed (and a bracket left with
// none is dropped) before the text is passed on. Text that may still be
// the start of a citation is held back until it is not.
type citer struct {
	n       int
	emit    func(string)
	pending strings.Builder // an open bracket and what followed it
	text    strings.Builder // everything passed on
	cited   []int
	removed []int
}

func newCiter(n int, emit func(string)) *citer { return &citer{n: n, emit: emit} }

// write takes the next piece of the answer.
func (c *citer) write(s string) {
	var out strings.Builder
	for _, r := range s {
		switch {
		case c.pending.Len() == 0 && r != '[':
			out.WriteRune(r)
		case c.pending.Len() == 0:
			c.pending.WriteRune(r)
		case r == ']':
			c.pending.WriteRune(r)
			out.WriteString(c.resolve(c.pending.String()))
			c.pending.Reset()
		case r == '[':
			out.WriteString(c.pending.String())
			c.pending.Reset()
			c.pending.WriteRune(r)
		case (r >= '0' && r <= '9' || r == ',' || r == ' ') && c.pending.Len() < maxCitationLen:
			c.pending.WriteRune(r)
		default:
			out.WriteString(c.pending.String())
			out.WriteRune(r)
			c.pending.Reset()
		}
	}
	c.pass(out.String())
}

// flush passes on what is held back at the end of the answer.
func (c *citer) flush() {
	c.pass(c.pending.String())
	c.pending.Reset()
}

func (c *citer) pass(s string) {
	if s == "" {
		return
	}
	c.text.WriteString(s)
	if c.emit != nil {
		c.emit(s)
	}
}

// resolve is a whole bracket as it is passed on: a citation with its
// valid numbers only, or the bracket as it came when it is no citation.
func (c *citer) resolve(bracket string) string {
	inner := strings.TrimSuffix(strings.TrimPrefix(bracket, "["), "]")
	var keep []string
	for _, f := range strings.Split(inner, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return bracket
		}
		if k < 1 || k > c.n {
			c.removed = append(c.removed, k)
			continue
		}
		if !slices.Contains(c.cited, k) {
			c.cited = append(c.cited, k)
		}
		keep = append(keep, strconv.Itoa(k))
	}
	if len(keep) == 0 {
		return ""
	}
	return "[" + strings.Join(keep, ", ") + "]"
}

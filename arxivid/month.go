package arxivid

import (
	"strconv"
	"strings"
	"time"
)

// Month returns the first day of the month an arXiv id was issued in, which
// the id itself encodes: hep-th/9112068 → 1991-12-01, 0704.0001 →
// 2007-04-01. It is the zero time for a string that is not a canonical id.
func Month(id string) time.Time {
	num := id
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		num = id[i+1:]
	}
	if len(num) < 4 {
		return time.Time{}
	}
	yy, err1 := strconv.Atoi(num[:2])
	mm, err2 := strconv.Atoi(num[2:4])
	if err1 != nil || err2 != nil || mm < 1 || mm > 12 {
		return time.Time{}
	}
	// arXiv began in 1991; two-digit years from 91 on are the 1990s.
	year := 2000 + yy
	if yy >= 91 {
		year = 1900 + yy
	}
	return time.Date(year, time.Month(mm), 1, 0, 0, 0, 0, time.UTC)
}

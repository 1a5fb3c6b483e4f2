package resolvers

import (
	"cmp"
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/graph/model"
)

// The fuzz targets below check the parsers of what clients send: none
// panics, an error is always a BAD_USER_INPUT naming the argument with a
// short message, and what a parser accepts it accepts again in the form
// the server prints. Run each briefly with
//
//	go test ./resolvers -run '^$' -fuzz '^FuzzParsePaperRef$' -fuzztime 10s

// refSeeds are inputs of every form the references take, and malformed
// ones.
var refSeeds = []string{
	"2111.04949", "2111.04949v2", "arXiv:hep-th/9407087", "math.CA/0611800", "https://arxiv.org/abs/0704.0001v1",
	"0704.0001-calculation-of-prompt-diphoton", "10.1103/PhysRevD.76.013009", "https://doi.org/10.1103/physrevd.76.013009",
	"5109050", "5109050-shuqing-lin", "0000-0002-1825-0097", "https://orcid.org/0000-0002-1825-0097", "A5023888391",
	"https://openalex.org/A5023888391", "s2:1741101", "https://www.semanticscholar.org/author/x/1741101",
	"05dxps055", "https://ror.org/05dxps055", "CERN", "Université Paris-Saclay", "42-cern",
	model.GlobalID(model.KindPaper, 1), model.GlobalID(model.KindResearcher, 12), model.GlobalID(model.KindInstitution, 42),
	"", " ", "x\x00y", "x\xffy", "a\u0301\u0301\u0301\u0301\u0301\u0301\u0301", "x\u202ey", strings.Repeat("9", 2000),
}

// checkInputError fails unless err is badInput naming arg with a message
// of at most a few hundred bytes.
func checkInputError(t *testing.T, arg, s string, err error) {
	t.Helper()
	var ge *gqlerror.Error
	var ie *InputError
	if !errors.As(err, &ge) || !errors.As(err, &ie) || ge.Extensions["code"] != CodeBadUserInput || ge.Extensions["argument"] != arg || ie.Arg != arg {
		t.Fatalf("%q: error %#v, want BAD_USER_INPUT naming %s", s, err, arg)
	}
	if len(ge.Message) > 300 || !utf8.ValidString(ge.Message) {
		t.Fatalf("%q: message of %d bytes %q", s, len(ge.Message), ge.Message)
	}
}

func FuzzParsePaperRef(f *testing.F) {
	for _, s := range refSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ref, err := parsePaperRef("id", s)
		if err != nil {
			checkInputError(t, "id", s, err)
			return
		}
		printed := cmp.Or(ref.arxivID, ref.doi)
		if ref.id != 0 {
			printed = model.GlobalID(model.KindPaper, ref.id)
		}
		if again, err := parsePaperRef("id", printed); err != nil || again != ref {
			t.Errorf("%q gave %+v, but %q gives %+v, %v", s, ref, printed, again, err)
		}
	})
}

func FuzzParseResearcherRef(f *testing.F) {
	for _, s := range refSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ref, err := parseResearcherRef("id", s)
		if err != nil {
			checkInputError(t, "id", s, err)
			return
		}
		if (ref.id == 0) == (ref.value == "") || ref.id < 0 {
			t.Fatalf("%q gave %+v, want an id or an external id", s, ref)
		}
		printed := ref.value
		switch {
		case ref.id != 0:
			printed = strconv.FormatInt(ref.id, 10)
		case ref.column == db.ByS2:
			printed = "s2:" + ref.value
		}
		if again, err := parseResearcherRef("id", printed); err != nil || again != ref {
			t.Errorf("%q gave %+v, but %q gives %+v, %v", s, ref, printed, again, err)
		}
	})
}

func FuzzParseInstitutionRef(f *testing.F) {
	for _, s := range refSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ref, err := parseInstitutionRef("id", s)
		if err != nil {
			checkInputError(t, "id", s, err)
			return
		}
		if ref.id < 0 || ref.id == 0 && ref.NameKey == "" {
			t.Fatalf("%q gave %+v, want an id or a name", s, ref)
		}
		if ref.id != 0 {
			if again, err := parseInstitutionRef("id", strconv.FormatInt(ref.id, 10)); err != nil || again != ref {
				t.Errorf("%q gave %+v, but its id gives %+v, %v", s, ref, again, err)
			}
		}
	})
}

func FuzzParseGlobalID(f *testing.F) {
	for _, s := range refSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ns, err := parseNodeIDs("id", []string{s})
		if err != nil {
			checkInputError(t, "id", s, err)
			return
		}
		// Not printed == s: model.ParseGlobalID accepts base64 whose
		// unused last bits are set ("UGFwZXI6M0" for "UGFwZXI6Mw").
		printed := model.GlobalID(ns[0].kind, ns[0].id)
		if again, err := parseNodeIDs("id", []string{printed}); err != nil || again[0] != ns[0] {
			t.Errorf("%q gave %+v, but %q gives %+v, %v", s, ns[0], printed, again, err)
		}
	})
}

// cursorTags are the tags of every list with cursors.
var cursorTags = []string{
	paperCursors.tag(db.Newest), paperCursors.tag(db.Oldest), paperCursors.tag(db.MostCited), paperCursors.tag(db.Relevance),
	coauthorCursors.tag(0), institutionResearcherCursors.tag(0),
}

func FuzzParseCursor(f *testing.F) {
	for _, tag := range cursorTags {
		f.Add(encodeCursor(tag, db.Cursor{Set: true, Key: 1_700_000_000, ID: 42}), uint8(0))
		f.Add(encodeCursor(tag, db.Cursor{Set: true, Null: true, ID: 7}), uint8(1))
		f.Add(encodeNameCursor(researcherSearchTag, db.NameCursor{Key: "balazs c", Count: 3, ID: 9}), uint8(2))
	}
	for _, s := range refSeeds {
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, s string, which uint8) {
		tag := cursorTags[int(which)%len(cursorTags)]
		c, err := decodeCursor("after", s, tag)
		if err != nil {
			checkInputError(t, "after", s, err)
		} else if again, err := decodeCursor("after", encodeCursor(tag, c), tag); err != nil || again != c {
			t.Errorf("%q gave %+v, but printed again it gives %+v, %v", s, c, again, err)
		}
		nc, err := decodeNameCursor("after", s, researcherSearchTag)
		if err != nil {
			checkInputError(t, "after", s, err)
		} else if again, err := decodeNameCursor("after", encodeNameCursor(researcherSearchTag, nc), researcherSearchTag); err != nil || again != nc {
			t.Errorf("%q gave %+v, but printed again it gives %+v, %v", s, nc, again, err)
		}
	})
}

func FuzzCheckText(f *testing.F) {
	for _, s := range refSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, k := range []textKind{idText, codeText, queryText, prefixText} {
			if err := checkText("x", s, k); err != nil {
				checkInputError(t, "x", s, err)
			} else if !utf8.ValidString(s) || strings.ContainsRune(s, 0) || strings.ContainsRune(s, utf8.RuneError) {
				t.Fatalf("%q passed as %+v", s, k)
			}
		}
		if q := QuoteInput(s); len(q) > 4*echoBytes+40 || !utf8.ValidString(q) {
			t.Errorf("QuoteInput(%q) = %q (%d bytes)", s, q, len(q))
		}
	})
}

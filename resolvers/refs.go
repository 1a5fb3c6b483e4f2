package resolvers

import (
	"context"
	"regexp"
	"strconv"
	"strings"

	"github.com/uptrace/bun"

	"github.com/papergraph/papergraph/arxivid"
	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/graph/model"
	"github.com/papergraph/papergraph/names"
)

// paperRef is a paper reference taken apart: an arXiv id, a DOI, or (from
// a global id) our id.
type paperRef struct {
	arxivID, doi string
	id           int64
}

// parsePaperRefs reads the ids of the argument arg, at most MaxIDs.
func parsePaperRefs(arg string, ids []string) ([]paperRef, error) {
	if len(ids) > MaxIDs {
		return nil, badInput(arg, "at most %d ids, got %d", MaxIDs, len(ids))
	}
	refs := make([]paperRef, len(ids))
	// A list may repeat an id up to MaxIDs times; each is parsed once,
	// since parsing (the arXiv forms' patterns) is most of a long list's
	// work.
	first := make(map[string]int, min(len(ids), 16))
	for i, s := range ids {
		if j, ok := first[s]; ok {
			refs[i] = refs[j]
			continue
		}
		var err error
		if refs[i], err = parsePaperRef(arg, s); err != nil {
			return nil, err
		}
		first[s] = i
	}
	return refs, nil
}

// parsePaperRef reads any form of arXiv id or DOI, or a paper's global id;
// arg names the argument in the error.
func parsePaperRef(arg, s string) (paperRef, error) {
	if err := checkText(arg, s, idText); err != nil {
		return paperRef{}, err
	}
	if id, _, err := arxivid.Parse(s); err == nil {
		return paperRef{arxivID: id}, nil
	}
	if doi, ok := arxivid.NormalizeDOI(s); ok {
		return paperRef{doi: doi}, nil
	}
	if kind, id, ok := model.ParseGlobalID(strings.TrimSpace(s)); ok && kind == model.KindPaper {
		return paperRef{id: id}, nil
	}
	return paperRef{}, badInput(arg, "not an arXiv id, DOI or paper global id: %s", QuoteInput(s))
}

// researcherRef is a researcher reference taken apart: our id, or an
// external id in the column it is stored in.
type researcherRef struct {
	id     int64
	column db.ResearcherIDColumn
	value  string
}

var (
	numericRef  = regexp.MustCompile(`^([1-9][0-9]{0,17})(?:-[a-z0-9-]*)?$`)
	orcidRef    = regexp.MustCompile(`^(?:https?://(?:www\.)?orcid\.org/)?(\d{4}-\d{4}-\d{4}-\d{3}[\dX])/?$`)
	openAlexRef = regexp.MustCompile(`^(?i:https?://(?:api\.)?openalex\.org/(?:authors/)?)?[Aa](\d+)$`)
	s2Ref       = regexp.MustCompile(`^(?:s2:|(?i:https?://(?:www\.)?semanticscholar\.org/author/(?:[^/]+/)?))(\d+)/?$`)
	rorRef      = regexp.MustCompile(`^(?i:https?://ror\.org/)?(0[a-hj-km-np-tv-z0-9]{6}[0-9]{2})/?$`)
)

// parseResearcherRef reads any researcher reference `researcher(id:)`
// takes; arg names the argument in the error.
func parseResearcherRef(arg, s string) (researcherRef, error) {
	if err := checkText(arg, s, idText); err != nil {
		return researcherRef{}, err
	}
	t := strings.TrimSpace(s)
	// An ORCID's shape, 1000-0000-0000-0000, would also read as our id
	// 1000 with a slug; no slug is four groups of digits.
	if m := orcidRef.FindStringSubmatch(t); m != nil {
		return researcherRef{column: db.ByORCID, value: m[1]}, nil
	}
	if m := numericRef.FindStringSubmatch(t); m != nil {
		id, _ := strconv.ParseInt(m[1], 10, 64)
		return researcherRef{id: id}, nil
	}
	if m := openAlexRef.FindStringSubmatch(t); m != nil {
		return researcherRef{column: db.ByOpenAlex, value: "A" + m[1]}, nil
	}
	if m := s2Ref.FindStringSubmatch(t); m != nil {
		return researcherRef{column: db.ByS2, value: m[1]}, nil
	}
	if kind, id, ok := model.ParseGlobalID(t); ok && kind == model.KindResearcher {
		return researcherRef{id: id}, nil
	}
	return researcherRef{}, badInput(arg, "not a researcher id, ORCID, OpenAlex author id or Semantic Scholar author id (\"s2:…\"): %s", QuoteInput(s))
}

// institutionRef is an institution reference taken apart: our id, or a
// ROR id and a name (as a name key, and as printed for acronyms).
type institutionRef struct {
	id int64
	db.InstitutionRef
}

// parseInstitutionRef reads any institution reference
// `institution(id:)` takes; arg names the argument in the error.
func parseInstitutionRef(arg, s string) (institutionRef, error) {
	if err := checkText(arg, s, idText); err != nil {
		return institutionRef{}, err
	}
	t := strings.TrimSpace(s)
	if m := numericRef.FindStringSubmatch(t); m != nil {
		id, _ := strconv.ParseInt(m[1], 10, 64)
		return institutionRef{id: id}, nil
	}
	if kind, id, ok := model.ParseGlobalID(t); ok && kind == model.KindInstitution {
		return institutionRef{id: id}, nil
	}
	ref := institutionRef{InstitutionRef: db.InstitutionRef{NameKey: strings.Join(names.Words(t), " "), Acronym: t}}
	if m := rorRef.FindStringSubmatch(t); m != nil {
		ref.ROR = m[1]
	}
	if ref.NameKey == "" {
		return institutionRef{}, badInput(arg, "not an institution id, ROR id or name: %s", QuoteInput(s))
	}
	return ref, nil
}

// researcherID resolves a reference in any form `researcher(id:)` takes
// (a statement for an external id) to an id, or to -1, which names
// nobody, when no researcher has the external id; arg names the argument
// in the error.
func (r *Resolver) researcherID(ctx context.Context, arg, s string) (int64, error) {
	ref, err := parseResearcherRef(arg, s)
	if err != nil || ref.id != 0 {
		return ref.id, err
	}
	x, err := db.ResearcherByExternalID(ctx, r.db, ref.column, ref.value)
	return foundID(x, func(x *db.Researcher) int64 { return x.ID }), err
}

// institutionID resolves a reference in any form `institution(id:)`
// takes (a statement for a ROR id or a name) to an id, or to -1, which
// names nothing, when no institution has it; arg names the argument in
// the error.
func (r *Resolver) institutionID(ctx context.Context, arg, s string) (int64, error) {
	ref, err := parseInstitutionRef(arg, s)
	if err != nil || ref.id != 0 {
		return ref.id, err
	}
	x, err := db.InstitutionByRef(ctx, r.db, ref.InstitutionRef)
	return foundID(x, func(x *db.Institution) int64 { return x.ID }), err
}

// foundID is x's id, or -1 (which names nobody, so that the filter
// matches no paper) when x was not found.
func foundID[T any](x *T, id func(*T) int64) int64 {
	if x == nil {
		return -1
	}
	return id(x)
}

// The references GraphQL takes are parsed here only; the HTTP exports
// resolve theirs through the three functions below, so that a path takes
// every form the matching GraphQL argument takes. A malformed reference is
// an error wrapping an *InputError.

// ResearcherByRef resolves s, in any form `researcher(id:)` takes, to a
// researcher id: 0 when no researcher has the external id (a statement
// for one).
func ResearcherByRef(ctx context.Context, idb bun.IDB, s string) (int64, error) {
	id, err := (&Resolver{db: idb}).researcherID(ctx, "id", s)
	return max(id, 0), err
}

// InstitutionByRef resolves s, in any form `institution(id:)` takes, to
// an institution id: 0 when no institution has the ROR id or name (a
// statement for one).
func InstitutionByRef(ctx context.Context, idb bun.IDB, s string) (int64, error) {
	id, err := (&Resolver{db: idb}).institutionID(ctx, "id", s)
	return max(id, 0), err
}

// PaperByRef reads the paper s names, in any form `paper(id:)` takes: nil
// when there is none.
func PaperByRef(ctx context.Context, idb bun.IDB, s string) (*db.Paper, error) {
	ref, err := parsePaperRef("id", s)
	if err != nil {
		return nil, err
	}
	if ref.id != 0 {
		byID, err := db.PapersByIDs(ctx, idb, []int64{ref.id})
		return byID[ref.id], err
	}
	byArxiv, byDOI, err := db.PapersByRefs(ctx, idb, nonEmpty(ref.arxivID), nonEmpty(ref.doi))
	if err != nil || ref.arxivID == "" {
		return byDOI[ref.doi], err
	}
	return byArxiv[ref.arxivID], nil
}

// nonEmpty is s as a list, empty when s is.
func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

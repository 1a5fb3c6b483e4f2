package ingest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ROR reads Research Organization Registry records. Dumps changed schema
// in 2024 and files mixing both exist, so the schema is told per record:
// v2 records have "names", v1 records "name".
var ROR = Format{
	Name:  "ror",
	Reads: "ROR organisation records, schema v1 or v2 (JSON lines, .gz or plain)",
	Read:  readROR,
}

const rorPrefix = "https://ror.org/"

// rorRecord holds the fields papergraph uses from both schemas.
type rorRecord struct {
	ID          string   `json:"id"`
	Types       []string `json:"types"`
	Status      string   `json:"status"`
	Established int      `json:"established"`

	// Schema v2.
	Names []struct {
		Value string   `json:"value"`
		Types []string `json:"types"`
	} `json:"names"`
	Locations []struct {
		Geonames struct {
			CountryCode string `json:"country_code"`
		} `json:"geonames_details"`
	} `json:"locations"`

	// Schema v1.
	Name     string   `json:"name"`
	Aliases  []string `json:"aliases"`
	Acronyms []string `json:"acronyms"`
	Labels   []struct {
		Label string `json:"label"`
	} `json:"labels"`
	Country struct {
		CountryCode string `json:"country_code"`
	} `json:"country"`
}

func readROR(ctx context.Context, e Entry, s Sink) error {
	return eachJSON(ctx, e, s, func(r *rorRecord, pos Position) error {
		in, err := r.institution()
		if err != nil {
			return s.Bad(&RecordError{Pos: pos, Reason: err.Error()})
		}
		return s.Record(in, pos)
	})
}

func (r *rorRecord) institution() (*Institution, error) {
	id, ok := strings.CutPrefix(r.ID, rorPrefix)
	if !ok || id == "" {
		return nil, fmt.Errorf("id %q is not a ROR id", r.ID)
	}
	in := &Institution{ROR: id, Status: r.Status, Established: r.Established}
	for _, t := range r.Types {
		// v1 capitalises types ("Education"), v2 does not.
		in.Types = append(in.Types, strings.ToLower(t))
	}
	switch {
	case r.Names != nil:
		for _, n := range r.Names {
			if slices.Contains(n.Types, "ror_display") {
				in.Name = n.Value
			}
		}
		if in.Name == "" {
			return nil, errors.New("no ror_display name")
		}
		for _, n := range r.Names {
			in.Names = addName(in.Names, in.Name, n.Value, rorNameKind(n.Types))
		}
		if len(r.Locations) > 0 {
			in.Country = r.Locations[0].Geonames.CountryCode
		}
	case r.Name != "":
		in.Name = r.Name
		for _, l := range r.Labels {
			in.Names = addName(in.Names, in.Name, l.Label, "label")
		}
		for _, a := range r.Aliases {
			in.Names = addName(in.Names, in.Name, a, "alias")
		}
		for _, a := range r.Acronyms {
			in.Names = addName(in.Names, in.Name, a, "acronym")
		}
		in.Country = r.Country.CountryCode
	default:
		return nil, errors.New("neither names (schema v2) nor name (schema v1)")
	}
	return in, nil
}

// rorNameKind picks one kind for a v2 name, which may carry several types:
// a label is an official name, so it wins; an acronym says more than alias.
// A name with none of the three (only ror_display) gets "".
func rorNameKind(types []string) string {
	for _, k := range []string{"label", "acronym", "alias"} {
		if slices.Contains(types, k) {
			return k
		}
	}
	return ""
}

// addName appends value to names as a name of the given kind, unless it is
// empty, has no kind, is the display name or is already listed.
func addName(names []InstitutionName, display, value, kind string) []InstitutionName {
	if value == "" || kind == "" || value == display {
		return names
	}
	for _, n := range names {
		if n.Value == value {
			return names
		}
	}
	return append(names, InstitutionName{Value: value, Kind: kind})
}

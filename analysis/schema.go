// Package analysis writes papers' analyses (db.PaperAnalysis): from a
// JSON-lines file of analyses computed elsewhere (Import), or by asking a
// language model behind an OpenAI-compatible chat-completions endpoint
// (Run). Both check what they write against one JSON schema, the one the
// model is asked to answer by, so no malformed analysis is stored.
package analysis

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/papergraph/papergraph/db"
)

// PromptVersion names the prompt and answer schema below; a change to
// either that changes what answers mean takes a new version.
const PromptVersion = "analysis-1"

// answerProperties are the fields of an analysis as the model gives them,
// each as the JSON schema states it.
func answerProperties() map[string]any {
	text := func(most int) map[string]any {
		return map[string]any{"type": "string", "minLength": 1, "maxLength": most}
	}
	types := make([]any, len(db.PaperTypes))
	for i, t := range db.PaperTypes {
		types[i] = t
	}
	return map[string]any{
		"summary":            text(1500),
		"novelty":            text(800),
		"paper_type":         map[string]any{"type": "string", "enum": types},
		"research_field":     text(120),
		"significance_score": map[string]any{"type": "integer", "minimum": 0, "maximum": 10},
		"keywords": map[string]any{"type": "array", "maxItems": db.MaxKeywords,
			"items": text(80)},
	}
}

// answerRequired lists the fields every analysis has.
var answerRequired = []any{"summary", "novelty", "paper_type", "research_field", "significance_score", "keywords"}

// AnswerSchema is the JSON schema of the model's answer, as the request
// sends it (strict structured output: every property required, no
// other).
func AnswerSchema() map[string]any {
	return map[string]any{"type": "object", "additionalProperties": false,
		"required": answerRequired, "properties": answerProperties()}
}

// recordSchema is the JSON schema of a line of an analysis file: an
// answer with the paper it is of and where it came from.
func recordSchema() map[string]any {
	props := answerProperties()
	maps.Copy(props, map[string]any{
		"arxiv_id":       map[string]any{"type": "string", "minLength": 1},
		"model":          map[string]any{"type": "string", "minLength": 1, "maxLength": 200},
		"prompt_version": map[string]any{"type": "string", "minLength": 1, "maxLength": 100},
		"analysed_at":    map[string]any{"type": "string"},
	})
	return map[string]any{"type": "object", "additionalProperties": false,
		"required": append([]any{"arxiv_id", "model", "prompt_version"}, answerRequired...), "properties": props}
}

// Answer is an analysis as the model gives it.
type Answer struct {
	Summary           string   `json:"summary"`
	Novelty           string   `json:"novelty"`
	PaperType         string   `json:"paper_type"`
	ResearchField     string   `json:"research_field"`
	SignificanceScore int      `json:"significance_score"`
	Keywords          []string `json:"keywords"`
}

// Record is a line of an analysis file: an answer with the paper it is
// of and where it came from.
type Record struct {
	Answer
	ArxivID       string `json:"arxiv_id"`
	Model         string `json:"model"`
	PromptVersion string `json:"prompt_version"`
	AnalysedAt    string `json:"analysed_at"`
}

// validator checks JSON documents against a schema.
type validator struct{ schema *jsonschema.Schema }

var answerValidator, recordValidator = compile("answer", AnswerSchema()), compile("record", recordSchema())

func compile(name string, schema map[string]any) validator {
	raw, err := json.Marshal(schema)
	if err != nil {
		panic(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		panic(err)
	}
	c := jsonschema.NewCompiler()
	url := "papergraph:" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		panic(err)
	}
	return validator{schema: c.MustCompile(url)}
}

// ErrMalformed marks an answer or record that is not JSON of its schema.
var ErrMalformed = errors.New("malformed analysis")

// decode checks raw against the schema and decodes it into v; an error
// says what is wrong in the terms of the JSON document.
func (v validator) decode(raw []byte, into any) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("%w: not JSON: %s", ErrMalformed, jsonProblem(err))
	}
	if err := v.schema.Validate(doc); err != nil {
		return fmt.Errorf("%w: %s", ErrMalformed, schemaProblems(err))
	}
	if err := json.Unmarshal(raw, into); err != nil {
		return fmt.Errorf("%w: %s", ErrMalformed, jsonProblem(err))
	}
	return nil
}

// schemaProblems is a validation error as one line: each problem with
// where in the document it is, without the schema's own address.
func schemaProblems(err error) string {
	lines := strings.Split(err.Error(), "\n")
	if len(lines) > 1 {
		lines = lines[1:]
	}
	for i, l := range lines {
		l = strings.TrimSpace(l)
		lines[i] = strings.TrimPrefix(l, "- ")
	}
	return strings.Join(lines, "; ")
}

// jsonProblem is a JSON syntax error, short.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s (at byte %d)", se.Error(), se.Offset)
	}
	return err.Error()
}

// row makes the analysis of paper (its id, title and abstract) out of an
// answer.
func (a Answer) row(paperID int64, title, abstract, model, prompt string, at time.Time) *db.PaperAnalysis {
	kw := make([]string, len(a.Keywords))
	for i, k := range a.Keywords {
		kw[i] = strings.TrimSpace(k)
	}
	return &db.PaperAnalysis{PaperID: paperID, Summary: strings.TrimSpace(a.Summary), Novelty: strings.TrimSpace(a.Novelty),
		PaperType: a.PaperType, ResearchField: strings.TrimSpace(a.ResearchField), SignificanceScore: a.SignificanceScore,
		Keywords: kw, Model: model, PromptVersion: prompt, AbstractHash: db.AbstractHash(title, abstract), AnalysedAt: at.UTC()}
}

package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Error codes of requests refused in trusted-documents mode.
const (
	codePersistedQueryRequired = "PERSISTED_QUERY_REQUIRED"
	codeDocumentNotFound       = "PERSISTED_DOCUMENT_NOT_FOUND"
)

// Both refusals come before execution, like a validation error: 400 for
// application/graphql-response+json clients, 200 for application/json ones.
func init() {
	errcode.RegisterErrorType(codePersistedQueryRequired, errcode.KindProtocol)
	errcode.RegisterErrorType(codeDocumentNotFound, errcode.KindProtocol)
}

// ReadTrustedDocuments reads a persisted-documents manifest: a JSON object
// mapping document ids to GraphQL documents, as GraphQL Codegen's
// persisted-documents.json and Relay's persisted queries are,
//
//	{"sha256:7dba…": "query Paper($id: String!) { paper(id: $id) { title } }"}
//
// or Apollo's persisted query manifest
// ({"format": "apollo-persisted-query-manifest", "operations": [{"id", "body", …}]}).
// An id is "sha256:HEX", a bare 64-digit HEX (taken as sha256), or an id
// of the manifest's own without a colon; sha256 ids must be the hash of
// their document.
func ReadTrustedDocuments(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var apollo struct {
		Format     string `json:"format"`
		Operations []struct {
			ID   string `json:"id"`
			Body string `json:"body"`
		} `json:"operations"`
	}
	if json.Unmarshal(b, &apollo) == nil && apollo.Format == "apollo-persisted-query-manifest" {
		docs := make(map[string]string, len(apollo.Operations))
		for _, op := range apollo.Operations {
			docs[op.ID] = op.Body
		}
		return docs, nil
	}
	var docs map[string]string
	if err := json.Unmarshal(b, &docs); err != nil {
		return nil, fmt.Errorf("%s: want a JSON object of document id → document: %w", path, err)
	}
	return docs, nil
}

// trustedDocuments is the allow-list of trusted-documents mode, keyed by
// normalised id (see documentKey).
type trustedDocuments struct {
	docs map[string]string
	// names are the operation names the documents define, the only ones
	// metrics label by.
	names map[string]bool
}

// newTrustedDocuments checks each document's id and validates it against
// schema, so that a stale manifest fails at start rather than per request.
func newTrustedDocuments(schema *ast.Schema, docs map[string]string) (*trustedDocuments, error) {
	t := &trustedDocuments{docs: make(map[string]string, len(docs)), names: map[string]bool{}}
	ids := make([]string, 0, len(docs))
	for id := range docs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		doc := docs[id]
		key, sha := documentKey(id)
		if key == "" {
			return nil, fmt.Errorf("trusted document id %q: want sha256:HEX or an id without a colon", id)
		}
		if sum := sha256.Sum256([]byte(doc)); sha && hex.EncodeToString(sum[:]) != key {
			return nil, fmt.Errorf("trusted document %s: id is not the document's sha256", id)
		}
		parsed, errs := gqlparser.LoadQuery(schema, doc)
		if len(errs) > 0 {
			return nil, fmt.Errorf("trusted document %s: %w", id, errs[0])
		}
		for _, op := range parsed.Operations {
			if op.Name != "" {
				t.names[op.Name] = true
			}
		}
		t.docs[key] = doc
	}
	return t, nil
}

// documentKey normalises a document id: "sha256:HEX" and a bare 64-digit
// HEX both become the lower-case HEX, with sha true; an id without a colon
// stays as it is. It returns "" for other prefixed ids.
func documentKey(id string) (key string, sha bool) {
	hexPart, prefixed := strings.CutPrefix(id, "sha256:")
	if len(hexPart) == sha256.Size*2 {
		if _, err := hex.DecodeString(hexPart); err == nil {
			return strings.ToLower(hexPart), true
		}
	}
	if prefixed || strings.Contains(id, ":") || id == "" {
		return "", false
	}
	return id, false
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = (*trustedDocuments)(nil)

func (*trustedDocuments) ExtensionName() string                   { return "TrustedDocuments" }
func (*trustedDocuments) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters replaces a request's document id, sent as
// documentId (the GraphQL-over-HTTP persisted documents draft) or as an
// APQ extensions.persistedQuery.sha256Hash (Apollo clients), with its
// trusted document, and refuses requests that bring their own document.
func (t *trustedDocuments) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	id, _ := ctx.Value(documentIDKey{}).(string)
	if pq, ok := p.Extensions["persistedQuery"].(map[string]any); ok && id == "" {
		id, _ = pq["sha256Hash"].(string)
	}
	if id == "" {
		err := gqlerror.Errorf("this server runs only its trusted documents: send documentId (or extensions.persistedQuery.sha256Hash) instead of query")
		errcode.Set(err, codePersistedQueryRequired)
		return err
	}
	key, _ := documentKey(id)
	doc, ok := t.docs[key]
	if !ok {
		err := gqlerror.Errorf("no trusted document has the id %q", id)
		errcode.Set(err, codeDocumentNotFound)
		return err
	}
	if p.Query != "" && p.Query != doc {
		err := gqlerror.Errorf("this server runs only its trusted documents: the query sent is not the document %q", id)
		errcode.Set(err, codePersistedQueryRequired)
		return err
	}
	p.Query = doc
	return nil
}

type documentIDKey struct{}

// withDocumentID puts a request's documentId parameter, which gqlgen's
// transports do not read, in its context for trustedDocuments. The body
// has been read whole by limitBody, so reading it again costs no I/O.
func withDocumentID(r *http.Request) *http.Request {
	id := r.URL.Query().Get("documentId")
	if r.Method == http.MethodPost {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return r
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var params struct {
			DocumentID string `json:"documentId"`
		}
		if json.Unmarshal(body, &params) == nil {
			id = params.DocumentID
		}
	}
	if id == "" {
		return r
	}
	return r.WithContext(context.WithValue(r.Context(), documentIDKey{}, id))
}

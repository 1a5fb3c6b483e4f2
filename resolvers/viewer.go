package resolvers

import (
	"context"
	"errors"
	"time"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/papergraph/papergraph/db"
	"github.com/papergraph/papergraph/graph/model"
)

// Error codes of signed-in users' requests.
const (
	// CodeUnauthenticated is a mutation sent without an API key.
	CodeUnauthenticated = "UNAUTHENTICATED"
	// CodeNotFound is a mutation naming something that does not exist.
	CodeNotFound = "NOT_FOUND"
	// CodeReadOnly is a mutation sent to a server of a read-only
	// database.
	CodeReadOnly = "READ_ONLY"
	// CodeFollowLimit is a follow past db.MaxFollows.
	CodeFollowLimit = "FOLLOW_LIMIT_EXCEEDED"
)

type viewerKey struct{}

// WithViewer makes key the signed-in user of ctx's request.
func WithViewer(ctx context.Context, key *db.APIKey) context.Context {
	return context.WithValue(ctx, viewerKey{}, key)
}

// SignedIn reports whether ctx's request signed a user in.
func SignedIn(ctx context.Context) bool { return viewerOf(ctx) != nil }

// viewerOf is the signed-in user's key, nil when the request sent none.
func viewerOf(ctx context.Context) *db.APIKey {
	k, _ := ctx.Value(viewerKey{}).(*db.APIKey)
	return k
}

func (r *Resolver) viewer(ctx context.Context) *model.Viewer {
	if k := viewerOf(ctx); k != nil {
		return &model.Viewer{Key: k}
	}
	return nil
}

// codedError is an error for the client with code, naming arg when it is
// not empty.
func codedError(code, arg, msg string) error {
	ext := map[string]any{"code": code}
	if arg != "" {
		ext["argument"] = arg
		msg = arg + ": " + msg
	}
	return &gqlerror.Error{Message: msg, Extensions: ext}
}

// writable is the signed-in user's key and the database to write to, or
// the error that refuses a mutation.
func (r *Resolver) writable(ctx context.Context) (*db.APIKey, error) {
	k := viewerOf(ctx)
	if k == nil {
		return nil, codedError(CodeUnauthenticated, "", "mutations need an API key: send Authorization: Bearer KEY (papergraph apikey create)")
	}
	if r.writer == nil {
		return nil, errReadOnly
	}
	return k, nil
}

var errReadOnly = codedError(CodeReadOnly, "", "this server serves a read-only database: mutations are off")

// written is err as the client should see it.
func written(err error) error {
	switch {
	case errors.Is(err, db.ErrReadOnly):
		return errReadOnly
	case errors.Is(err, db.ErrTooManyFollows):
		return codedError(CodeFollowLimit, "", db.ErrTooManyFollows.Error()+": unfollow some first")
	}
	return err
}

// followedResearcher is the researcher id names, for a (un)follow by the
// signed-in user.
func (r *Resolver) followedResearcher(ctx context.Context, id string) (*db.APIKey, *db.Researcher, error) {
	// Malformed input is refused first, before the key is looked at.
	if _, err := parseResearcherRef("id", id); err != nil {
		return nil, nil, err
	}
	k, err := r.writable(ctx)
	if err != nil {
		return nil, nil, err
	}
	rid, err := r.researcherID(ctx, "id", id)
	if err != nil {
		return nil, nil, err
	}
	var x *db.Researcher
	if rid > 0 {
		if x, err = loaders(ctx).researchers.load(ctx, rid); err != nil {
			return nil, nil, err
		}
	}
	if x == nil {
		return nil, nil, codedError(CodeNotFound, "id", "no researcher has this id: "+QuoteInput(id))
	}
	return k, x, nil
}

func (r *Resolver) followResearcher(ctx context.Context, id string, follow bool) (*model.Researcher, error) {
	k, x, err := r.followedResearcher(ctx, id)
	if err != nil {
		return nil, err
	}
	if follow {
		err = db.Follow(ctx, r.writer, k.ID, x.ID, "", time.Now())
	} else {
		err = db.Unfollow(ctx, r.writer, k.ID, x.ID, "")
	}
	if err != nil {
		return nil, written(err)
	}
	return wrapResearcher(x), lookAhead(ctx, "Researcher", []*db.Researcher{x})
}

func (r *Resolver) followCategory(ctx context.Context, code string, follow bool) (*db.Category, error) {
	if err := checkText("code", code, codeText); err != nil {
		return nil, err
	}
	k, err := r.writable(ctx)
	if err != nil {
		return nil, err
	}
	cs, err := db.CategoriesByCodes(ctx, r.db, []string{code})
	if err != nil {
		return nil, err
	}
	c := cs[code]
	if c == nil {
		return nil, codedError(CodeNotFound, "code", "no category has this code: "+QuoteInput(code))
	}
	if follow {
		err = db.Follow(ctx, r.writer, k.ID, 0, c.Code, time.Now())
	} else {
		err = db.Unfollow(ctx, r.writer, k.ID, 0, c.Code)
	}
	if err != nil {
		return nil, written(err)
	}
	return c, lookAhead(ctx, "Category", []*db.Category{c})
}

func followedResearchers(ctx context.Context, key int64) ([]*model.Researcher, error) {
	l := loaders(ctx)
	f, err := l.following.load(ctx, key)
	if err != nil || len(f.Researchers) == 0 {
		return []*model.Researcher{}, err
	}
	rs, err := found(ctx, l.researchers, f.Researchers)
	if err != nil {
		return nil, err
	}
	return wrapAll(rs, wrapResearcher), lookAhead(ctx, "Researcher", rs)
}

func (r *Resolver) followedCategories(ctx context.Context, key int64) ([]*db.Category, error) {
	f, err := loaders(ctx).following.load(ctx, key)
	if err != nil || len(f.Categories) == 0 {
		return []*db.Category{}, err
	}
	byCode, err := db.CategoriesByCodes(ctx, r.db, f.Categories)
	if err != nil {
		return nil, err
	}
	out := make([]*db.Category, 0, len(f.Categories))
	for _, code := range f.Categories {
		if c := byCode[code]; c != nil {
			out = append(out, c)
		}
	}
	return out, lookAhead(ctx, "Category", out)
}

// feed is the page of the signed-in user's feed, walked below here: its
// parent, the viewer, is no object the look-ahead walks.
func feed(ctx context.Context, key int64, first *int, after *string) (*model.PaperConnection, error) {
	conn, err := paperList(ctx, db.FeedPapers, paperParent{id: key}, first, after, nil, nil, nil, nil)
	if err != nil || len(conn.Nodes) == 0 {
		return conn, err
	}
	items := make([]*db.Paper, len(conn.Nodes))
	for i, n := range conn.Nodes {
		items[i] = n.Paper
	}
	return conn, lookAheadPage(ctx, "PaperConnection", "Paper", "PaperEdge", items)
}

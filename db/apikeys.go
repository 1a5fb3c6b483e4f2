package db

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// APIKeyPrefix starts every key CreateAPIKey makes, so that a key is
// recognisable (in a header, in a leaked file) and the server knows to
// look it up here rather than in serve's --api-keys file.
const APIKeyPrefix = "pg_"

// apiKeyBytes is the randomness of a key: 256 bits, beyond guessing, so
// one round of SHA-256 suffices to keep the stored hashes useless to a
// reader of the database.
const apiKeyBytes = 32

// displayPrefixLen is how much of a key listings show and revoke takes:
// APIKeyPrefix and 8 characters of the random part (48 bits).
const displayPrefixLen = len(APIKeyPrefix) + 8

// MaxKeyWeight bounds a key's weight (see Scheduler): enough to give a
// front end's server-side renderer many times an address's part, never so
// much that a key starves everyone else.
const MaxKeyWeight = 100

// MaxFollows is the most researchers and categories, together, one key
// follows.
const MaxFollows = 500

// APIKey is a signed-in user's key: its hash, never the key.
type APIKey struct {
	bun.BaseModel `bun:"table:api_keys"`

	ID         int64     `bun:"id,pk,autoincrement"`
	Name       string    `bun:"name,notnull"`
	Prefix     string    `bun:"prefix,notnull"`
	Hash       string    `bun:"hash,notnull"`
	CreatedAt  time.Time `bun:"created_at,notnull"`
	RevokedAt  time.Time `bun:"revoked_at,nullzero"`
	LastUsedAt time.Time `bun:"last_used_at,nullzero"`
	// Weight is the key's part in the statement slots while clients wait
	// for them (see Scheduler), 1 to MaxKeyWeight.
	Weight int `bun:"weight,notnull"`
}

// HashAPIKey is the hex SHA-256 of key, as api_keys.hash holds it.
func HashAPIKey(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:])
}

// CreateAPIKey makes a key named name, of DefaultClientWeight, and stores
// its hash; the key it returns is never stored and cannot be had again.
func CreateAPIKey(ctx context.Context, idb bun.IDB, name string, now time.Time) (string, *APIKey, error) {
	return CreateWeightedAPIKey(ctx, idb, name, DefaultClientWeight, now)
}

// ErrKeyWeight is a key weight outside 1 to MaxKeyWeight.
var ErrKeyWeight = fmt.Errorf("a key's weight is 1 to %d", MaxKeyWeight)

// CreateWeightedAPIKey is CreateAPIKey for a key of the given weight.
func CreateWeightedAPIKey(ctx context.Context, idb bun.IDB, name string, weight int, now time.Time) (string, *APIKey, error) {
	if weight < 1 || weight > MaxKeyWeight {
		return "", nil, ErrKeyWeight
	}
	var b [apiKeyBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", nil, err
	}
	key := APIKeyPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	k := &APIKey{Name: name, Prefix: key[:displayPrefixLen], Hash: HashAPIKey(key), CreatedAt: now.UTC(), Weight: weight}
	if _, err := idb.NewInsert().Model(k).Returning("id").Exec(ctx); err != nil {
		return "", nil, readOnly(err)
	}
	return key, k, nil
}

// APIKeys lists every key, revoked ones too, oldest first.
func APIKeys(ctx context.Context, idb bun.IDB) ([]*APIKey, error) {
	var ks []*APIKey
	err := idb.NewSelect().Model(&ks).Order("id").Scan(ctx)
	return ks, err
}

// ActiveAPIKey is the key whose hash is hash, nil when there is none or it
// was revoked.
func ActiveAPIKey(ctx context.Context, idb bun.IDB, hash string) (*APIKey, error) {
	ctx = Primary(ctx) // on a replicated reader: a key just revoked is refused
	k := new(APIKey)
	err := idb.NewSelect().Model(k).Where("hash = ?", hash).Where("revoked_at IS NULL").Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return k, err
}

// ErrNoSuchKey is a revoke that names no key; ErrAmbiguousKey one whose
// prefix names more than one.
var (
	ErrNoSuchKey    = errors.New("no such API key")
	ErrAmbiguousKey = errors.New("the prefix names more than one API key: give its id")
)

// RevokeAPIKey revokes the key ref names, its id or its prefix (as
// APIKeys lists them), and returns it; revoking a revoked key keeps its
// first revocation time.
func RevokeAPIKey(ctx context.Context, idb bun.IDB, ref string, now time.Time) (*APIKey, error) {
	var ks []*APIKey
	q := idb.NewSelect().Model(&ks)
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil {
		q = q.Where("id = ?", id)
	} else if strings.HasPrefix(ref, APIKeyPrefix) && len(ref) >= displayPrefixLen {
		// A whole key names its key too.
		q = q.Where("prefix = ?", ref[:displayPrefixLen])
		if len(ref) > displayPrefixLen {
			q = q.Where("hash = ?", HashAPIKey(ref))
		}
	} else {
		return nil, fmt.Errorf("%w: %q is neither an id nor a prefix like %s…", ErrNoSuchKey, ref, APIKeyPrefix)
	}
	if err := q.Limit(2).Scan(ctx); err != nil {
		return nil, err
	}
	switch len(ks) {
	case 0:
		return nil, fmt.Errorf("%w: %s", ErrNoSuchKey, ref)
	case 2:
		return nil, ErrAmbiguousKey
	}
	k := ks[0]
	if k.RevokedAt.IsZero() {
		k.RevokedAt = now.UTC()
		if _, err := idb.NewUpdate().Model(k).Column("revoked_at").WherePK().Exec(ctx); err != nil {
			return nil, readOnly(err)
		}
	}
	return k, nil
}

// TouchAPIKey records that key id was used at now.
func TouchAPIKey(ctx context.Context, idb bun.IDB, id int64, now time.Time) error {
	_, err := idb.NewUpdate().Model((*APIKey)(nil)).Set("last_used_at = ?", now.UTC()).Where("id = ?", id).Exec(ctx)
	return readOnly(err)
}

// ErrTooManyFollows is a follow past MaxFollows.
var ErrTooManyFollows = fmt.Errorf("a key follows at most %d researchers and categories together", MaxFollows)

// Follow makes key follow a researcher (researcher > 0) or a category
// (code, when researcher is 0). Following again changes nothing; a new
// follow past MaxFollows is ErrTooManyFollows.
func Follow(ctx context.Context, idb bun.IDB, key int64, researcher int64, code string, now time.Time) error {
	err := InTx(ctx, idb, func(ctx context.Context, tx bun.Tx) error {
		// Concurrent follows of one key take turns on its row, so that
		// each counts the others' follows.
		if _, err := tx.ExecContext(ctx, "UPDATE api_keys SET name = name WHERE id = ?", key); err != nil {
			return err
		}
		var res sql.Result
		var err error
		if researcher > 0 {
			res, err = tx.ExecContext(ctx, `INSERT INTO followed_researchers (api_key_id, researcher_id, created_at)
				VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, key, researcher, now.UTC())
		} else {
			res, err = tx.ExecContext(ctx, `INSERT INTO followed_categories (api_key_id, category, created_at)
				VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, key, code, now.UTC())
		}
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		var count int
		if err := tx.NewRaw(`SELECT (SELECT COUNT(*) FROM followed_researchers WHERE api_key_id = ?)
			+ (SELECT COUNT(*) FROM followed_categories WHERE api_key_id = ?)`, key, key).Scan(ctx, &count); err != nil {
			return err
		}
		if count > MaxFollows {
			return ErrTooManyFollows
		}
		return nil
	})
	return readOnly(err)
}

// Unfollow makes key stop following a researcher (researcher > 0) or a
// category (code, when researcher is 0); it is no error when key did not
// follow it.
func Unfollow(ctx context.Context, idb bun.IDB, key int64, researcher int64, code string) error {
	var err error
	if researcher > 0 {
		_, err = idb.ExecContext(ctx, "DELETE FROM followed_researchers WHERE api_key_id = ? AND researcher_id = ?", key, researcher)
	} else {
		_, err = idb.ExecContext(ctx, "DELETE FROM followed_categories WHERE api_key_id = ? AND category = ?", key, code)
	}
	return readOnly(err)
}

// Following is what a key follows, most recently followed first.
type Following struct {
	Researchers []int64
	Categories  []string
}

// FollowingByKeys reads what each key follows, in one statement: at most
// MaxFollows items each.
func FollowingByKeys(ctx context.Context, idb bun.IDB, keys []int64) (map[int64]*Following, error) {
	ctx = Primary(ctx) // on a replicated reader: a follow just made is seen
	var rows []struct {
		Key        int64  `bun:"key"`
		Researcher int64  `bun:"researcher"`
		Category   string `bun:"category"`
	}
	b := binding(idb)
	researchers, args := in(b, "api_key_id", keys)
	categories, a := in(b, "api_key_id", keys)
	err := idb.NewRaw(`SELECT t.key, t.researcher, t.category FROM (
		  SELECT api_key_id AS key, researcher_id AS researcher, '' AS category, created_at FROM followed_researchers WHERE `+researchers+`
		  UNION ALL
		  SELECT api_key_id, 0, category, created_at FROM followed_categories WHERE `+categories+`) AS t
		ORDER BY t.key, t.created_at DESC, t.researcher, t.category`, append(args, a...)...).Scan(b.ctx(ctx), &rows)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]*Following, len(keys))
	for _, k := range keys {
		out[k] = &Following{}
	}
	for _, r := range rows {
		f := out[r.Key]
		if r.Researcher > 0 {
			f.Researchers = append(f.Researchers, r.Researcher)
		} else {
			f.Categories = append(f.Categories, r.Category)
		}
	}
	return out, nil
}

package ratelimit

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Keys are the API keys an operator issued. A request that sends one
// spends that key's budget wherever it comes from; one that sends a key
// not among them is refused. Only the keys' SHA-256 hashes are kept.
type Keys struct {
	hashes map[[sha256.Size]byte]bool
}

// Key lengths LoadKeys accepts: long enough not to be guessed, short
// enough to bound what a request can make the server hash.
const (
	minKeyLen = 16
	maxKeyLen = 256
)

// ErrUnknownKey is a request that sent an API key the server does not
// know.
var ErrUnknownKey = errors.New("unknown API key")

// LoadKeys reads API keys, one a line: the key itself, or "sha256:" and
// the hex of its hash, so that the file need not hold secrets. Blank lines
// and lines starting with # are skipped.
func LoadKeys(r io.Reader) (*Keys, error) {
	k := &Keys{hashes: map[[sha256.Size]byte]bool{}}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if h, ok := strings.CutPrefix(line, "sha256:"); ok {
			b, err := hex.DecodeString(h)
			if err != nil || len(b) != sha256.Size {
				return nil, fmt.Errorf("line %d: sha256: wants 64 hex digits", n)
			}
			k.hashes[[sha256.Size]byte(b)] = true
			continue
		}
		if len(line) < minKeyLen || len(line) > maxKeyLen || strings.ContainsAny(line, " \t") {
			return nil, fmt.Errorf("line %d: a key has %d to %d characters and no spaces", n, minKeyLen, maxKeyLen)
		}
		k.hashes[sha256.Sum256([]byte(line))] = true
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(k.hashes) == 0 {
		return nil, errors.New("no keys")
	}
	return k, nil
}

// Client names the budget of a request that sends an API key
// (`Authorization: Bearer KEY` or `X-API-Key: KEY`), as KeyClient does.
// It returns "" when the request sends no key, and ErrUnknownKey when the
// key is not one of k.
func (k *Keys) Client(r *http.Request) (string, error) {
	key := PresentedKey(r)
	if key == "" {
		return "", nil
	}
	if len(key) > maxKeyLen || !k.hashes[sha256.Sum256([]byte(key))] {
		return "", ErrUnknownKey
	}
	return KeyClient(key), nil
}

// PresentedKey is the API key r sends, as `X-API-Key: KEY` or
// `Authorization: Bearer KEY`; "" when it sends none.
func PresentedKey(r *http.Request) string {
	key := r.Header.Get("X-API-Key")
	if key != "" {
		return key
	}
	// The scheme is case-insensitive (RFC 7235, section 2.1).
	scheme, credentials, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if ok && strings.EqualFold(scheme, "Bearer") {
		key = strings.TrimSpace(credentials)
	}
	return key
}

// KeyClient names the budget of key: "key:" and the first 16 hex digits
// of its SHA-256 hash, whichever list of keys issued it.
func KeyClient(key string) string {
	h := sha256.Sum256([]byte(key))
	return "key:" + hex.EncodeToString(h[:8])
}

package ratelimit_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/papergraph/papergraph/ratelimit"
)

func TestKeys(t *testing.T) {
	const plain, hashed = "notebook-0123456789abcdef", "front-end-fedcba9876543210"
	sum := sha256.Sum256([]byte(hashed))
	keys, err := ratelimit.LoadKeys(strings.NewReader("# issued 2026-12-01\n" + plain + "\n\nsha256:" + hex.EncodeToString(sum[:]) + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	sumPlain := sha256.Sum256([]byte(plain))
	tests := []struct {
		name, header, value string
		want                string
		wantErr             error
	}{
		{"none", "", "", "", nil},
		{"bearer", "Authorization", "Bearer " + plain, "key:" + hex.EncodeToString(sumPlain[:8]), nil},
		{"bearer in lower case", "Authorization", "bearer " + plain, "key:" + hex.EncodeToString(sumPlain[:8]), nil},
		{"BEARER, extra spaces", "Authorization", "BEARER   " + plain + " ", "key:" + hex.EncodeToString(sumPlain[:8]), nil},
		{"x-api-key, hashed in the file", "X-API-Key", hashed, "key:" + hex.EncodeToString(sum[:8]), nil},
		{"unknown", "X-API-Key", "guess-0123456789abcdef", "", ratelimit.ErrUnknownKey},
		{"too long", "X-API-Key", strings.Repeat("k", 10_000), "", ratelimit.ErrUnknownKey},
		{"basic auth is not a key", "Authorization", "Basic dXNlcjpwYXNz", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/graphql", nil)
			if tt.header != "" {
				r.Header.Set(tt.header, tt.value)
			}
			got, err := keys.Client(r)
			if got != tt.want || !errors.Is(err, tt.wantErr) {
				t.Errorf("Client = %q, %v; want %q, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestLoadKeysRefuses(t *testing.T) {
	for _, file := range []string{"", "# only a comment\n", "short\n", "sha256:abc\n", "has a space in it 0123456789\n"} {
		if _, err := ratelimit.LoadKeys(strings.NewReader(file)); err == nil {
			t.Errorf("LoadKeys(%q) = nil error, want one", file)
		}
	}
}

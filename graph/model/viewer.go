package model

import (
	"time"

	"github.com/papergraph/papergraph/db"
)

// Viewer is a signed-in user: the holder of an API key.
type Viewer struct {
	Key *db.APIKey
}

// Name is the key's name.
func (v *Viewer) Name() string { return v.Key.Name }

// KeyPrefix is the key's first characters.
func (v *Viewer) KeyPrefix() string { return v.Key.Prefix }

// CreatedAt is when the key was made.
func (v *Viewer) CreatedAt() time.Time { return v.Key.CreatedAt }

// Following is what the key KeyID follows.
type Following struct {
	KeyID int64
}

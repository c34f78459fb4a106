package snapshot

import (
	"context"
	"time"

	"gocloud.dev/blob"
)

// Info describes a stored snapshot without reading its document.
type Info struct {
	ID         string    `json:"id"`
	CreatedAt  time.Time `json:"created_at"`
	Reason     string    `json:"reason"`
	ClusterID  string    `json:"cluster_id"`
	Connectors int       `json:"connectors"`
	SourceKeys int       `json:"source_keys"`
	SinkGroups int       `json:"sink_groups"`
	Size       int64     `json:"size"`
	SHA256     string    `json:"sha256"`
}

// Store keeps snapshots in a blob bucket. STUB: being implemented.
type Store struct {
	bucket *blob.Bucket
}

// OpenStore opens the store at a gocloud.dev/blob URL or a local directory path.
func OpenStore(ctx context.Context, url string) (*Store, error) { panic("unimplemented") }

// NewStore wraps an open bucket. Close closes it.
func NewStore(b *blob.Bucket) *Store { return &Store{bucket: b} }

// Close closes the bucket.
func (s *Store) Close() error { return s.bucket.Close() }

// Put assigns s.ID if empty and writes the snapshot as one immutable object.
func (s *Store) Put(ctx context.Context, snap *Snapshot) (Info, error) { panic("unimplemented") }

// Get reads, verifies and decodes a snapshot; ref may be an ID or "latest".
func (s *Store) Get(ctx context.Context, ref string) (*Snapshot, Info, error) {
	panic("unimplemented")
}

// List returns every snapshot, oldest first.
func (s *Store) List(ctx context.Context) ([]Info, error) { panic("unimplemented") }

// Delete removes one snapshot.
func (s *Store) Delete(ctx context.Context, id string) error { panic("unimplemented") }

// Resolve turns "latest" or an ID (or unique ID prefix) into an ID.
func (s *Store) Resolve(ctx context.Context, ref string) (string, error) { panic("unimplemented") }

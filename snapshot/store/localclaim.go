package store

// This file makes a create-if-absent write (IfNotExist) on a local store
// atomic across processes. fileblob checks IfNotExist with a stat and a
// rename under a lock of its own process: six processes creating one key
// at once had more than one winner in 14 of 30 rounds, so two daemons on a
// shared directory (NFS, an RWX volume) were not fenced. gocloud offers no
// way to make fileblob's rename exclusive, so the claim is a sibling file,
// <object>.excl, created with O_EXCL before fileblob writes the object:
// the process that creates it is the only one that may write the object.
// It stays beside the object (so a claim cannot be made twice) and goes
// with it when the object is deleted; a write that fails removes it. A
// process killed between the two leaves a claim without an object: the
// key then counts as taken, as an S3 write whose answer was lost may.
// NFS gives O_EXCL its meaning from NFSv3 on.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"gocloud.dev/gcerrors"
)

// exclSuffix ends the claim file of a local object.
const exclSuffix = ".excl"

// errClaimed: another writer claimed the key (a local store's claim file
// exists).
var errClaimed = errors.New("object already claimed by another writer")

// alreadyExists reports whether a write with IfNotExist failed because
// the object is, or is being, written by another.
func alreadyExists(err error) bool {
	return gcerrors.Code(err) == gcerrors.FailedPrecondition || errors.Is(err, errClaimed)
}

// claimLocal claims key in a local store, atomically across processes.
// release drops the claim of a write that failed.
func (s *Store) claimLocal(key string) (release func(), err error) {
	p := filepath.Join(s.dir, filepath.FromSlash(key)) + exclSuffix
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, fmt.Errorf("claim %s: %w", key, err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("claim %s: %w", key, errClaimed)
	}
	if err != nil {
		return nil, fmt.Errorf("claim %s: %w", key, err)
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(p)
		return nil, fmt.Errorf("claim %s: %w", key, err)
	}
	return func() { _ = os.Remove(p) }, nil
}

// unclaimLocal removes the claim of a local object deleted.
func (s *Store) unclaimLocal(key string) {
	if s.dir != "" {
		_ = os.Remove(filepath.Join(s.dir, filepath.FromSlash(key)) + exclSuffix)
	}
}

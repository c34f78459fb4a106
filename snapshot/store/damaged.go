package store

import (
	"context"
	"errors"
	"io/fs"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// damage reports whether err, from reading an object named like a
// snapshot, says the object is damaged rather than the store unusable: a
// zero-byte or foreign object, a truncated one, one that does not verify.
// A store error, a denied read or a cancelled ctx is no damage: List fails
// on those as before.
func damage(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil {
		return false
	}
	return !errors.Is(err, ErrStore) && !errors.Is(err, fs.ErrPermission) &&
		!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) &&
		!errors.Is(err, snapshot.ErrNotFound)
}

// damagedInfo is what List knows of the damaged object of snapshot id:
// its ID, the time in it, and why it could not be read.
func damagedInfo(id string, err error) snapshot.Info {
	t, _ := snapshot.ParseID(id)
	return snapshot.Info{ID: id, CreatedAt: t, Damaged: err.Error()}
}

// Damaged splits infos, as List gives them, into the snapshots that can
// be read and the damaged objects; retention judges only the first.
func Damaged(infos []snapshot.Info) (ok, damaged []snapshot.Info) {
	for _, i := range infos {
		if i.Damaged != "" {
			damaged = append(damaged, i)
		} else {
			ok = append(ok, i)
		}
	}
	return ok, damaged
}

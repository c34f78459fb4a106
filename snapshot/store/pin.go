package store

// This file is the pins: a snapshot kept whatever the retention policy
// says. Snapshots are immutable objects, so a pin lives beside its
// snapshot, one small object per pinned ID:
//
//	pins/<ID>.json   {"format":"offsetkeeper-pin","version":1,"id":"<ID>","pinned_at":"...","note":"..."}
//
// Writing or deleting one object is atomic on every backend, so a pin is
// either there or not. The pin is plain JSON even in an encrypted store:
// it holds no offsets, only the ID, a time and the operator's note. List,
// Get and Verify of snapshots never see pins (they read snapshots/ only);
// a pin whose snapshot is gone keeps nothing and is listed by Pins.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

const (
	pinPrefix  = "pins/"
	pinSuffix  = ".json"
	pinFormat  = "offsetkeeper-pin"
	pinType    = "application/json"
	maxPinSize = 64 << 10
	// MaxPinNote bounds a pin's note, in bytes.
	MaxPinNote = 4096
)

// ErrNotPinned is Unpin of a snapshot that has no pin.
var ErrNotPinned = errors.New("snapshot not pinned")

// pinObject is a pin as stored.
type pinObject struct {
	Format   string    `json:"format"`
	Version  int       `json:"version"`
	ID       string    `json:"id"`
	PinnedAt time.Time `json:"pinned_at"`
	Note     string    `json:"note,omitempty"`
}

func pinKey(id string) string { return pinPrefix + id + pinSuffix }

// Pin pins the snapshot ref names (anything Resolve accepts) with note,
// replacing the note of a pin it already has, and returns its ID. A
// snapshot that is not stored is ErrNotFound and nothing is written; one
// removed while it is pinned (retention of another process) has its pin
// removed again and is ErrNotFound.
func (h Pins) Pin(ctx context.Context, ref, note string, now time.Time) (string, snapshot.Pin, error) {
	s := h.s
	if len(note) > MaxPinNote {
		return "", snapshot.Pin{}, fmt.Errorf("pin snapshot %s: note of %d bytes: at most %d", ref, len(note), MaxPinNote)
	}
	id, err := s.Snapshots().Resolve(ctx, ref)
	if err != nil {
		return "", snapshot.Pin{}, fmt.Errorf("pin snapshot: %w", err)
	}
	p := snapshot.Pin{PinnedAt: now.UTC(), Note: note}
	data, err := json.Marshal(pinObject{Format: pinFormat, Version: 1, ID: id, PinnedAt: p.PinnedAt, Note: note})
	if err != nil {
		return "", snapshot.Pin{}, fmt.Errorf("pin snapshot %s: %w", id, err)
	}
	if err := s.bucket.WriteAll(ctx, pinKey(id), append(data, '\n'), &blob.WriterOptions{ContentType: pinType}); err != nil {
		return "", snapshot.Pin{}, fmt.Errorf("pin snapshot %s%s: %w", id, s.in(), describeBucketError(err))
	}
	// Retention that listed before the pin was written may have removed
	// the snapshot since: a pin must never stand for a snapshot gone.
	ok, err := s.bucket.Exists(ctx, objectKey(id))
	if err == nil && !ok {
		_ = s.bucket.Delete(ctx, pinKey(id))
		return "", snapshot.Pin{}, fmt.Errorf("pin snapshot %s: %w: it was removed while being pinned%s", id, snapshot.ErrNotFound, s.in())
	}
	if err != nil {
		return "", snapshot.Pin{}, fmt.Errorf("pin snapshot %s: check it is still stored%s: %w", id, s.in(), err)
	}
	return id, p, nil
}

// Unpin removes the pin of the snapshot ref names and returns its ID. ref
// is anything Resolve accepts, or the exact ID of a pin whose snapshot is
// gone. A snapshot without a pin is ErrNotPinned.
func (h Pins) Unpin(ctx context.Context, ref string) (string, error) {
	s := h.s
	id, err := s.Snapshots().Resolve(ctx, ref)
	if errors.Is(err, snapshot.ErrNotFound) {
		if _, perr := snapshot.ParseID(ref); perr == nil {
			id, err = ref, nil // a pin left by a snapshot removed by hand
		}
	}
	if err != nil {
		return "", fmt.Errorf("unpin snapshot: %w", err)
	}
	ok, err := s.bucket.Exists(ctx, pinKey(id))
	if err != nil {
		return "", fmt.Errorf("unpin snapshot %s%s: %w", id, s.in(), err)
	}
	if !ok {
		return "", fmt.Errorf("unpin snapshot %s: %w", id, ErrNotPinned)
	}
	if err := s.bucket.Delete(ctx, pinKey(id)); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return "", fmt.Errorf("unpin snapshot %s%s: %w", id, s.in(), err)
	}
	return id, nil
}

// Pinned reports whether the snapshot with the exact ID id is pinned now.
// Retention asks it right before removing a snapshot, so that a pin
// written after its listing still keeps it.
func (h Pins) Pinned(ctx context.Context, id string) (bool, error) {
	s := h.s
	ok, err := s.bucket.Exists(ctx, pinKey(id))
	if err != nil {
		return false, fmt.Errorf("read pin of snapshot %s%s: %w", id, s.in(), err)
	}
	return ok, nil
}

// All returns every pin in the store by snapshot ID, with one LIST of
// pins/ and one read per pin. A pin object that does not read as one is
// an error naming it.
func (h Pins) All(ctx context.Context) (map[string]snapshot.Pin, error) {
	s := h.s
	out := map[string]snapshot.Pin{}
	var keys []string
	err := s.listKeys(ctx, &blob.ListOptions{Prefix: pinPrefix}, func(obj *blob.ListObject) {
		if !obj.IsDir {
			keys = append(keys, obj.Key)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("list pins%s: %w", s.in(), err)
	}
	slices.Sort(keys)
	for _, key := range keys {
		id, ok := strings.CutSuffix(strings.TrimPrefix(key, pinPrefix), pinSuffix)
		if !ok {
			continue
		}
		if _, err := snapshot.ParseID(id); err != nil {
			continue // not a pin (another tool's object)
		}
		p, err := s.readPin(ctx, key, id)
		if errors.Is(err, snapshot.ErrNotFound) {
			continue // unpinned since listed
		}
		if err != nil {
			return nil, err
		}
		out[id] = p
	}
	return out, nil
}

func (s *Store) readPin(ctx context.Context, key, id string) (snapshot.Pin, error) {
	r, err := s.bucket.NewReader(ctx, key, nil)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return snapshot.Pin{}, snapshot.ErrNotFound
	}
	if err != nil {
		return snapshot.Pin{}, fmt.Errorf("read pin %s%s: %w", key, s.in(), err)
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, maxPinSize))
	if err != nil {
		return snapshot.Pin{}, fmt.Errorf("read pin %s%s: %w", key, s.in(), err)
	}
	var o pinObject
	if err := json.Unmarshal(data, &o); err != nil || o.Format != pinFormat || o.ID != id {
		return snapshot.Pin{}, fmt.Errorf("read pin %s%s: %w: not a pin of snapshot %s; remove it with unpin %s", key, s.in(), snapshot.ErrCorrupt, id, id)
	}
	return snapshot.Pin{PinnedAt: o.PinnedAt, Note: o.Note}, nil
}

// WithPins returns infos with the Pin of each pinned snapshot set.
func WithPins(infos []snapshot.Info, pins map[string]snapshot.Pin) []snapshot.Info {
	out := slices.Clone(infos)
	for i := range out {
		if p, ok := pins[out[i].ID]; ok {
			out[i].Pin = &p
		}
	}
	return out
}

// Snapshots is Snapshots.List with the pins of the snapshots set (see
// WithPins).
func (h Pins) Snapshots(ctx context.Context) ([]snapshot.Info, error) {
	s := h.s
	infos, err := s.Snapshots().List(ctx)
	if err != nil {
		return nil, err
	}
	pins, err := s.Pins().All(ctx)
	if err != nil {
		return nil, err
	}
	return WithPins(infos, pins), nil
}

package store

// This file is the drill reports (offsetkeeper drill, restore/drill): each
// one an immutable object beside the snapshots,
//
//	drills/<ID>.json   the report, or its DSSE envelope when signed
//
// written once with IfNotExist and never changed. The store does not read
// what a report says: restore/drill owns the format. Snapshot listing,
// retention and Verify read snapshots/ only and never see drills/.

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

const (
	drillPrefix = "drills/"
	drillSuffix = ".json"
	drillType   = "application/json"
	// MaxDrillReport bounds a drill report object, in bytes.
	MaxDrillReport = 16 << 20
)

func drillKey(id string) string { return drillPrefix + id + drillSuffix }

// Put stores the drill report data under id (a snapshot-style ID:
// snapshot.NewID), once: a report already stored under id is
// snapshot.ErrExists and is left as it is.
func (h Drills) Put(ctx context.Context, id string, data []byte) error {
	s := h.s
	if _, err := snapshot.ParseID(id); err != nil {
		return fmt.Errorf("store drill report %q: %w", id, err)
	}
	if len(data) > MaxDrillReport {
		return fmt.Errorf("store drill report %s: %d bytes: at most %d", id, len(data), MaxDrillReport)
	}
	return s.putOnce(ctx, drillKey(id), drillType, data)
}

// List returns the IDs of the stored drill reports, oldest first, with
// one LIST of drills/.
func (h Drills) List(ctx context.Context) ([]string, error) {
	s := h.s
	var ids []string
	err := s.listKeys(ctx, &blob.ListOptions{Prefix: drillPrefix}, func(obj *blob.ListObject) {
		id, ok := strings.CutSuffix(strings.TrimPrefix(obj.Key, drillPrefix), drillSuffix)
		if obj.IsDir || !ok {
			return
		}
		if _, err := snapshot.ParseID(id); err == nil {
			ids = append(ids, id)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("list drill reports%s: %w", s.in(), err)
	}
	slices.Sort(ids) // IDs sort by time
	return ids, nil
}

// Get reads the drill report stored under id; one that is not stored
// is snapshot.ErrNotFound.
func (h Drills) Get(ctx context.Context, id string) ([]byte, error) {
	s := h.s
	r, err := s.bucket.NewReader(ctx, drillKey(id), nil)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, fmt.Errorf("read drill report %s: %w", id, snapshot.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read drill report %s%s: %w", id, s.in(), err)
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, MaxDrillReport+1))
	if err != nil {
		return nil, fmt.Errorf("read drill report %s%s: %w", id, s.in(), err)
	}
	if len(data) > MaxDrillReport {
		return nil, fmt.Errorf("read drill report %s%s: %w: larger than %d bytes", id, s.in(), snapshot.ErrCorrupt, MaxDrillReport)
	}
	return data, nil
}

package store

import (
	"context"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// RestoreRead says what Store.GetForRestore leaves out.
type RestoreRead struct {
	// NoSinkOffsets leaves out the sink groups' committed offsets (each
	// SinkGroup's Offsets is nil; the groups, their connectors and states
	// stay): a restore of source offsets only never reads them, and a
	// snapshot of thousands of groups holds many of them.
	NoSinkOffsets bool
}

// GetForRestore is GetFor for a restore: the snapshot's source offsets are
// decoded into a compact SourceTable (see Snapshot.SourceTable), which
// keeps their topics, partitions, keys, values and connectors only, and
// its SourceOffsets stay nil. Such a snapshot cannot be encoded, and
// SourceOffsets-based helpers (SourceOffsetsOf, Index.SourceOffsetsOf) see
// no offsets; Filter, NewIndex, Unparsed and SourceKeys work on it. A
// document the streamed decoder does not take is decoded whole, as Get
// does, and its table is a view of its SourceOffsets. The Info is Get's.
func (s *Store) GetForRestore(ctx context.Context, ref string, connectors []string, how RestoreRead) (*snapshot.Snapshot, snapshot.Info, error) {
	id := ref
	if _, err := snapshot.ParseID(ref); err != nil {
		if id, err = s.ResolveFor(ctx, ref, connectors); err != nil {
			return nil, snapshot.Info{}, err
		}
	}
	snap, info, err := s.getAs(ctx, id, &snapshot.TableSink{T: new(snapshot.SourceTable)})
	if err == nil && how.NoSinkOffsets {
		for i := range snap.SinkGroups {
			snap.SinkGroups[i].Offsets = nil
		}
	}
	return snap, info, err
}

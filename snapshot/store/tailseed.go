package store

import (
	"context"
	"fmt"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// GetForTail reads the snapshot with ID id for a new journal epoch: its
// source offsets are decoded straight into what NewTail keeps of them (the
// last value of every key, see snapshot.LastValues), and SourceOffsets stays nil,
// so the epoch's start never holds them. Everything else (topics,
// connectors, sink groups) is Get's, in the snapshot returned beside the
// seed. A document the streamed decoder does not take is decoded whole, as
// Get does, and its source offsets are then put into the seed.
func (s *Store) GetForTail(ctx context.Context, id string) (*snapshot.Snapshot, *snapshot.TailSeed, error) {
	if _, err := snapshot.ParseID(id); err != nil {
		return nil, nil, fmt.Errorf("read snapshot %q for the journal: %w", id, err)
	}
	sink := &snapshot.SeedSink{S: snapshot.NewTailSeed()}
	snap, _, err := s.getAs(ctx, id, sink)
	if err != nil {
		return nil, nil, err
	}
	if !sink.Done {
		seed := snapshot.SeedOf(snap)
		snap.SourceOffsets = nil
		return snap, seed, nil
	}
	return snap, sink.S, nil
}

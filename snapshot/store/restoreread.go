package store

import (
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// RestoreRead says what a read with RestoreSink leaves out.
type RestoreRead struct {
	// NoSinkOffsets leaves out the sink groups' committed offsets (each
	// SinkGroup's Offsets is nil; the groups, their connectors and states
	// stay): a restore of source offsets only never reads them, and a
	// snapshot of thousands of groups holds many of them.
	NoSinkOffsets bool
}

// RestoreSink returns the sink of Snapshots.GetWith for a restore: the
// snapshot's source offsets are decoded into a compact SourceTable (see
// Snapshot.SourceTable), which keeps their topics, partitions, keys,
// values and connectors only. Such a snapshot cannot be encoded, and the
// helpers that give SourceOffset values (SourceTable.At and All,
// SourceOffsetsOf, Index.SourceOffsetsOf) give those fields only (Offset
// -1); Filter, NewIndex, Unparsed and SourceKeys work on it. A document
// the streamed decoder does not take is decoded whole, into a full
// table. Use a sink for one read.
func RestoreSink(how RestoreRead) snapshot.OffsetSink {
	return &restoreSink{TableSink: snapshot.TableSink{T: new(snapshot.SourceTable)}, how: how}
}

// restoreSink is RestoreSink's sink.
type restoreSink struct {
	snapshot.TableSink
	how RestoreRead
}

// Decoded leaves out of snap what the restore does not read.
func (r *restoreSink) Decoded(snap *snapshot.Snapshot) {
	if r.how.NoSinkOffsets {
		for i := range snap.SinkGroups {
			snap.SinkGroups[i].Offsets = nil
		}
	}
}

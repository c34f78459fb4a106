// Package capture reads a Kafka Connect cluster into snapshots: the
// offsets topics to their end (read_committed, the last write of each exact
// key wins, tombstones remove), the config topic replayed as the worker
// replays it, the status topic, and every sink connector's consumer group.
//
// The types to know are [Capturer], which captures once or again and again
// (incremental, reading only what was written since), [Options], and
// [Tail], which follows the same topics and groups from exact positions and
// turns every change into the journal's entries (snapshot.Entry).
// [Capturer.CaptureStreamed] makes a snapshot whose source offsets are a
// snapshot.OffsetStream over what was read: Store.Put encodes them without
// a SourceOffset ever being built. [ReadStatuses], [ReadGroup] and
// [ReadPartitions] read one thing each, for restore's checks.
//
// Capture imports snapshot (the format) and never the store: the daemon and
// the commands join a capture to a store.
package capture

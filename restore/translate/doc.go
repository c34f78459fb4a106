// Package translate moves a snapshot to another Kafka cluster for
// `restore --translate`: [Translate] returns the snapshot with its sink
// offsets translated into the new cluster's copies of the topics (by
// MirrorMaker 2's checkpoints or offset syncs, or by the last consumed
// record's timestamp), topics and connectors renamed, and a
// [Translation] saying, per partition, what the restore re-delivers or
// skips. restore.Run then restores that snapshot like any other.
//
// The MirrorMaker 2 records it reads are [Checkpoint] (the checkpoints
// topic, [ReadCheckpoints]) and [OffsetSync] (the offset-syncs topic,
// [ReadOffsetSyncs], [OffsetSyncStore.Translate]).
package translate

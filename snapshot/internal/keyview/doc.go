// Package keyview holds what a read keeps of a compacted topic: for each
// partition, the live keys with the last value and offset of each, the
// state a Connect worker would restore from the topic. It speaks to no
// Kafka cluster and opens no bucket; the readers (capture's reader and the
// journal's tail) fill views from fetched records, and the journal's replay
// fills them from entries.
//
// The types to know:
//
//   - TopicView is one topic: its partitions' views, and, for a topic that
//     is a state machine rather than a map (the config topic), OnRecord.
//   - PartView is one partition: Set and Remove apply writes in log order,
//     Lookup and All read the live keys. Keys and values live in an Arena,
//     found through a key index; a view compacts itself (MaybeCompact) when
//     its arena holds mostly dead bytes.
//
// Bytes handed out of a view are never written again, so snapshots may
// alias them (see PartView).
package keyview

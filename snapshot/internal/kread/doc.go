// Package kread reads compacted topics to a fixed end, read_committed,
// keeping the last value of every key per partition in keyview views. It
// speaks the Fetch API itself rather than running a kgo consumer: a
// read_committed consumer cannot tell that it has reached the last stable
// offset when the records just below it are aborted, while the Fetch
// response gives the exact next offset after every fetch.
//
// The calls to know:
//
//   - ListBounds returns each partition's log start and last stable
//     offset: the Bounds a read runs over.
//   - ReadTopics (and ReadTopicsNotify, which reports each partition as it
//     finishes) brings every view up to its bounds, refreshing leaders on
//     leadership errors and reading a partition again from its start when
//     it moved under the view (the resets it returns).
//   - Apply applies one fetched record to a view in log order.
//
// Most partitions of a fetch are applied from their record batches
// directly (batches.go); kgo.ProcessFetchPartition takes the rest.
package kread

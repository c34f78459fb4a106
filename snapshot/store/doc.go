// Package store keeps snapshots and the journal in a gocloud.dev/blob
// bucket: each snapshot one compressed, checksummed object written with
// IfNotExist, each journal flush one immutable, chained segment, and pins
// beside them.
//
// The type to know is [Store]: Put, Get (GetFor, GetForRestore and
// GetForTail read less of a document for those who need less), List,
// Resolve and Delete for snapshots; PutSegment, ListJournal, StateAt,
// Events and CompactEpoch for the journal (docs/journal.md); Pin and
// Unpin. [OpenStore] opens one from a URL (file://, s3://, gs://,
// azblob://, mem://), with the cloud credentials and the encryption
// keeper the URL names.
//
// Guarantees:
//   - A snapshot is listed only once it is whole: it is written with
//     IfNotExist in one object, and a failed write leaves nothing behind.
//   - Every read verifies the object's checksum; readers accept format
//     versions snapshot.MinVersion..snapshot.Version and name the version
//     they found otherwise.
//
// The store never imports snapshot/capture, nor capture the store: the
// daemon and the commands join them.
package store

// Package store keeps snapshots and the journal in a gocloud.dev/blob
// bucket: each snapshot one compressed, checksummed object written with
// IfNotExist, each journal flush one immutable, chained segment, and pins
// beside them.
//
// The type to know is [Store], opened once with [OpenStore] from a URL
// (file://, mem://, or s3://, gs://, azblob:// in a program that imports
// internal/storedrivers), with the cloud credentials and the encryption
// [Keeper] the URL names, and closed once. Its objects are reached
// through small handles, each stating its not-found behaviour:
//
//   - [Snapshots] (st.Snapshots()): Put, GetWith (one read: the sink
//     says what to keep of the source offsets; nil keeps them all,
//     [RestoreSink] what a restore reads, capture.SeedSink what a
//     journal tail reads), Verify, List, Resolve, Delete, and For (a
//     command limited to some connectors);
//   - [Journal] (st.Journal()): epochs and segments, StateAt, Events
//     (docs/journal.md); [Levels] (st.Levels()) compacts it;
//   - [Pins], [Drills] and [Restores]: the small records beside them.
//
// Every object is one envelope (envelope.go): a JSON header line, then
// the body, encrypted by one path when the Store has a Keeper.
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

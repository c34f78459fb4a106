// Package layering holds only a test: TestLayering fails when an import
// runs the wrong way between the module's packages. The layers, top down:
//
//	cmd/...      the CLI: may import everything below
//	daemon       the scheduler and HTTP server
//	restore      plan, safety checks, apply, verify
//	snapshot     the format, capture from Kafka, the store
//	internal/... helpers of the layers above
//
// A package imports only packages of layers below its own (internal/...
// packages may import each other). Nothing under internal/ imports
// snapshot, restore or daemon, except the demo's stand-ins internal/connectsim
// and internal/connectdemo, which may import snapshot and snapshot/capture
// and say so in their package doc. Packages outside these layers (bench/..., deploy,
// reliability) may import any of them; nothing imports cmd/....
//
// Inside the snapshot layer the rooms are ranked too (snapshotRooms): the
// views of a compacted topic (snapshot/internal/keyview) and the zstd
// frames (snapshot/internal/frames) under the reader
// (snapshot/internal/kread), under the format (snapshot), under the
// building of a snapshot's entries (snapshot/internal/build), under the
// journal's entries, segments and replay (snapshot/journal), under capture
// (reading a cluster) and store (keeping snapshots and the journal in a
// bucket), which never import each other: the daemon and the commands join
// them. snapshot's internal packages are its own. The pure packages
// (snapshot, snapshot/internal/build, snapshot/journal, keyview, frames, internal/connectjson,
// internal/english, internal/retry) import no Kafka client and no bucket.
package layering

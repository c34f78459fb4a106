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
// snapshot, restore or daemon, except the test helpers internal/connecttest
// and internal/connectdemo, which may import snapshot and say so in their
// package doc. Packages outside these layers (bench/..., deploy,
// reliability) may import any of them; nothing imports cmd/....
package layering

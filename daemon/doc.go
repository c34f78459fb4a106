// Package daemon runs offsetkeeper as a service: it takes snapshots on a
// cron schedule, prunes the store with a retention policy after each one,
// serves health, readiness, Prometheus metrics and the snapshot list over
// HTTP, and elects one leader among replicas through Kafka.
//
// The two things to know are [Daemon], configured by a [Config] and started
// with Run, and its Config.Policy, a [snapshot.Policy] applied with
// [snapshot.ApplyPolicy], the pure function that decides which snapshots
// are kept and why (the prune command uses it too).
//
// # Runs
//
// Each tick of the schedule starts a run: take a snapshot (Daemon.Snapshot,
// normally one long-lived snapshot.Capturer so runs read only what is new),
// store it, compare its sink offsets with the previous snapshot, apply the
// policy. Guarantees:
//   - Runs never overlap. A tick that finds the previous run going is
//     counted as skipped and logged.
//   - A panicking run is recovered, logged with its stack and counted as a
//     failure; later ticks run as usual.
//   - Each run has a timeout (Config.RunTimeout). A snapshot is stored only
//     if it was taken with time to spare: a capture that returns after its
//     context ended is discarded, and an aborted write leaves no object
//     (snapshot.Store writes are all-or-nothing).
//   - Retention runs only after a successful store, never removes the
//     snapshot just stored, and, through snapshot.ApplyPolicy, always keeps
//     each cluster's newest full snapshot.
//   - One INFO (or ERROR) summary line per run.
//
// # Shutdown
//
// When Run's context is canceled the daemon stops scheduling, lets a running
// snapshot finish for up to Config.ShutdownTimeout, aborts it after that
// (nothing is stored), leaves the leader group so another replica takes
// over without waiting for the session timeout, stops the HTTP server and
// returns nil. Run returns at once when no run is going, and within
// ShutdownTimeout plus 12 seconds in the worst case (a run that ignores
// its aborted context, a group leave or an HTTP client that hangs).
//
// # Leader election
//
// With Config.Leader.Enabled, replicas join one consumer group subscribed to
// a one-partition topic (DefaultLeaderTopic, created if missing). Kafka
// assigns partition 0 to exactly one member per generation: that member
// leads and takes the snapshots; the others stand by, serving HTTP with
// offsetkeeper_leader 0. The cooperative-sticky balancer keeps partition 0
// with its owner when replicas join, so a restarted standby never steals
// the lead.
//
// Handover. A leader that shuts down cleanly leaves the group; partition 0
// moves at the standby's next heartbeat (a third of the session timeout,
// at most 3s) and the rebalance after it. A leader that
// dies (or is cut off from Kafka) stops heartbeating; the coordinator
// evicts it after the session timeout (LeaderConfig.SessionTimeout, default
// 10s) and another member takes over. Shorter timeouts hand over faster but
// make a long GC pause or network blip cost the lead.
//
// Fencing, and its limits. Each term of leadership has a context: when
// partition 0 is revoked or lost, the running snapshot's context is
// canceled, the revocation waits (up to 10s) for the run to stop, and the
// run checks its term again before it writes and before it prunes. After a
// clean handover the new leader therefore never overlaps with the old one.
// After an unclean one, a leader cut off from Kafka learns it lost the lead
// only when its own heartbeats fail, at about the session timeout, which
// is also when the coordinator moves the lead: for a moment two replicas
// may both snapshot. The cost is one extra snapshot, never a damaged one:
// snapshots are immutable objects with unique IDs, and a deletion of a
// snapshot another replica already removed counts as done. Kafka, not the
// store, is the arbiter, so a replica that can reach the store but not
// Kafka cannot lead; it could not capture anyway.
//
// Replicas elect one leader only if they use the same group; the CLI
// derives it from the store URL (DefaultLeaderGroup), so spell the URL
// identically or set the group explicitly.
//
// # Journal
//
// With Config.Journal.Interval set and a [Tailer], the leader also keeps
// the journal (journal.go, docs/journal.md): every interval it polls a
// snapshot.Tail and writes what changed as one segment; every snapshot it
// stores starts a new epoch; a snapshot.TailBreak (a record needed is
// gone, a topic recreated or repartitioned) ends the epoch and asks the
// schedule loop for a full snapshot at once. A new term continues the
// newest epoch from the store, never from memory, so a standby that takes
// over (or a restarted daemon) goes on without a gap. Two leaders in an
// unclean handover cannot damage it: segments are written with
// IfNotExist, and the one that loses the race continues from the store.
// After retention the journal of epochs whose base snapshot is gone is
// deleted, and ended epochs older than Journal.KeepWithin are merged.
package daemon

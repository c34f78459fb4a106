package daemon

// This file is the journal: while it leads, the daemon tails the offsets
// and config topics and reads the sink groups every Journal.Interval, and
// writes what changed as one segment (see snapshot/journal, capture.Tail and
// docs/journal.md). Each stored full snapshot starts a new epoch; so does
// anything that breaks continuity, after a full snapshot the journal asks
// the schedule loop for.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/memlimit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// Journal defaults.
const (
	// DefaultJournalInterval is how often the journal flushes a segment.
	DefaultJournalInterval = 10 * time.Second
	// DefaultJournalKeepWithin is how long raw segments are kept.
	DefaultJournalKeepWithin = 7 * 24 * time.Hour
)

// JournalConfig configures the journal. The zero value turns it off.
type JournalConfig struct {
	// Interval is how often the journal flushes; 0 turns it off.
	Interval time.Duration
	// KeepWithin is how long raw (level 0) segments are kept once a merged
	// level holds them (restore --at to any moment); after it, a moment is
	// restored as of the last minute boundary before it. 0 keeps them as
	// long as their epoch.
	KeepWithin time.Duration
}

// Tailer opens the journal's reads of the cluster; the CLI builds it over
// its Kafka client and snapshot options.
type Tailer struct {
	// New returns a Tail continuing from state at the positions given,
	// seeded with seed when state was read with a capture.SeedSink (nil: from
	// state's source offsets).
	New func(state *snapshot.Snapshot, seed *capture.TailSeed, positions []journal.EpochTopic, observed time.Time) *capture.Tail
	// Topics returns the topics an epoch based on snap tails.
	Topics func(ctx context.Context, snap *snapshot.Snapshot) ([]journal.EpochTopic, error)
}

// journalWriter is the state of the journal loop. It is used by the loop's
// goroutine only, except for based and the fields under mu.
type journalWriter struct {
	d     *Daemon
	based chan snapshot.Info // snapshots stored, to start an epoch from

	tail *capture.Tail
	term uint64
	// chain is where the epoch's chain of segments stands (its Epoch is
	// the epoch journaled).
	chain     journal.ChainWriter
	lastWrite time.Time
	// gapFrom, when set, starts the first segment after a resume with a
	// gap marker: the sink groups were not observed since then.
	gapFrom time.Time
	// reason is why the next epoch starts; wanted says a snapshot was
	// asked for it.
	reason string
	wanted bool
	// askAt is when tick asks again for the snapshot wanted; startFails
	// counts the epoch starts that failed in a row (see epochRetry).
	askAt      time.Time
	startFails int
	// quiet makes want record the reason only (a snapshot is coming).
	quiet bool
	// pending is a segment whose write failed: the next flush writes it
	// again, the same bytes under the same name, before anything new (a
	// write whose reply was lost may be stored: see Store.PutSegment).
	pending        *journal.Segment
	pendingChanged bool
	// fenced is the lead term in which another writer was found writing
	// the epoch: the journal writes nothing more in it.
	fenced   uint64
	fencedAt time.Time
	// brokenc gets the epochs the compaction loop found broken.
	brokenc chan string
	// expiry is the sink offsets expiry guard (sinkexpiry.go).
	expiry sinkExpiry

	// changes counts the segments written that hold changes (not only
	// positions: a heartbeat), for the compaction loop.
	changes atomic.Uint64
	// now, when set, is the clock of the heartbeat and of the compaction
	// loop (tests).
	now func() time.Time

	mu      sync.Mutex
	covered time.Time // the journal is in the store up to here
	// since is when this daemon began to lead with no flush yet: the lag
	// counts from it until the first flush.
	since time.Time
	// trouble says why the journal does not journal while it leads, ""
	// when it does (see journal_health.go).
	trouble string
	// resets counts the offsets of the resets written since the last
	// snapshot run took them (takeResets): by connector, then kind.
	resets map[string]map[string]int
}

func newJournal(d *Daemon) *journalWriter {
	return &journalWriter{d: d, based: make(chan snapshot.Info, 1), brokenc: make(chan string, 1)}
}

// stored hands a snapshot just stored to the journal (lossy: the newest wins).
func (j *journalWriter) stored(info snapshot.Info) {
	for {
		select {
		case j.based <- info:
			return
		default:
			select {
			case <-j.based:
			default:
			}
		}
	}
}

// run flushes every interval until ctx ends.
func (j *journalWriter) run(ctx context.Context) {
	t := time.NewTicker(j.d.Config.Journal.Interval)
	defer t.Stop()
	go j.compactLoop(ctx)
	for {
		select {
		case <-ctx.Done():
			j.finalFlush(ctx)
			return
		case <-t.C:
			j.tick(ctx)
		case id := <-j.brokenc:
			j.epochBroken(id)
		case info := <-j.based:
			if j.fenced != 0 && j.d.lead.holds(j.fenced) && !j.fencedRetryDue(j.fenced) {
				continue // another writer journals: this daemon starts no epoch
			}
			// The epoch going on ends with a last flush (one continued
			// from the store covers the time the daemon was down); then
			// the snapshot starts the next.
			j.flushBeforeEpoch(ctx)
			j.startEpoch(ctx, info)
		}
	}
}

// finalFlush writes what the tail holds when the daemon stops (SIGTERM),
// so that a clean stop loses nothing: up to the shutdown timeout, past
// ctx's end, while the lead is still held. A journal not running (no
// tail) has nothing to flush and is not resumed now.
func (j *journalWriter) finalFlush(ctx context.Context) {
	if j.tail == nil {
		return
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), j.d.shutdownTimeout())
	defer cancel()
	j.tick(fctx)
	j.log().Info("journal flushed before stopping", "epoch", j.chain.Epoch, "seq", j.chain.Seq)
}

// stopped reports whether err is only the daemon stopping or losing the
// lead (its context canceled, not timed out) rather than a failure: the
// journal goes on from the store when it leads again, so it is no error.
func stopped(ctx context.Context) bool {
	return ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded)
}

func (j *journalWriter) log() *slog.Logger { return j.d.log().With("component", "journal") }

// tick is one flush: resume if needed, poll, write.
func (j *journalWriter) tick(ctx context.Context) {
	lctx, term, done, ok := j.d.lead.start()
	if !ok {
		j.drop()
		j.standBy()
		return
	}
	defer done()
	j.leading()
	ctx, cancel := context.WithTimeout(ctx, j.d.runTimeout())
	defer cancel()
	stop := context.AfterFunc(lctx, cancel)
	defer stop()
	if j.tail != nil && j.term != term {
		j.drop() // a new term: continue from the store, not from memory
	}
	if j.fenced == term && !j.fencedRetryDue(term) {
		return // another writer journals in this term
	}
	j.term = term
	if j.pending != nil && !j.flushPending(ctx) {
		return
	}
	if j.tail == nil && !j.wanted {
		j.resume(ctx)
	}
	if j.tail == nil {
		if j.wanted && !j.clock().Before(j.askAt) {
			// The snapshot asked for failed, or the epoch it started
			// did not: ask again, after a backoff (see epochRetry).
			j.ask()
		}
		return
	}
	entries, observed, err := j.tail.Poll(ctx)
	if err != nil {
		if stopped(ctx) {
			// What was read stays pending for the next flush.
			j.log().Info("journal flush interrupted: the daemon is stopping or lost the lead", "epoch", j.chain.Epoch, "error", err)
			return
		}
		j.broken(ctx, err)
		return
	}
	entries = j.expiry.observe(ctx, j, entries, observed)
	j.write(ctx, entries, observed)
	// What the flush decoded is garbage now: the daemon between runs
	// holds what the next flush and run reuse, no more.
	memlimit.Trim()
}

// flushBeforeEpoch is tick for the end of an epoch, when a snapshot has
// just been stored: a journal not running continues from the store first
// (to cover the time it was down), and nothing asks for a snapshot (a
// break found now is the next epoch's reason). An epoch known to be
// broken has nothing to flush.
func (j *journalWriter) flushBeforeEpoch(ctx context.Context) {
	if j.wanted {
		return
	}
	j.quiet = true
	defer func() { j.quiet = false }()
	if j.tail == nil {
		lctx, _, done, ok := j.d.lead.start()
		if !ok {
			return
		}
		rctx, cancel := context.WithTimeout(ctx, j.d.runTimeout())
		stop := context.AfterFunc(lctx, cancel)
		j.resume(rctx)
		stop()
		cancel()
		done()
	}
	if j.tail != nil {
		j.tick(ctx)
	}
}

// drop forgets the tail (and a segment not written); the next tick
// continues from the store.
func (j *journalWriter) drop() { j.tail, j.pending = nil, nil }

// epochBroken handles an epoch the compaction loop found broken: when it
// is the one being written, the journal ends it and a full snapshot starts
// the next at once.
func (j *journalWriter) epochBroken(id string) {
	if id != j.chain.Epoch || j.tail == nil {
		return
	}
	j.drop()
	j.d.m.journalErrors.Inc()
	j.log().Error("journal epoch broken: a full snapshot starts a new epoch now", "epoch", id)
	j.want(journal.EpochBroken)
}

// broken handles a Poll error: a break ends the epoch and asks for a
// snapshot; anything else (a broker or group read failing) keeps the tail,
// whose next Poll goes on from where this one stopped.
func (j *journalWriter) broken(ctx context.Context, err error) {
	var tb *capture.TailBreak
	if errors.As(err, &tb) {
		j.topicLost(ctx, tb)
		j.drop()
		j.log().Warn("journal epoch ends: a full snapshot starts the next", "epoch", j.chain.Epoch, "reason", tb.Reason, "error", err)
		j.want(tb.Reason)
		return
	}
	j.d.m.journalErrors.Inc()
	j.log().Error("journal flush", "epoch", j.chain.Epoch, "error", err)
}

// want asks the schedule loop for a snapshot that starts a new epoch.
func (j *journalWriter) want(reason string) {
	j.reason = reason
	if j.quiet {
		return
	}
	j.wanted = true
	if j.startFails > 0 {
		// The last epoch start failed: a snapshot now would fail the same
		// way. tick asks once the backoff has passed.
		j.askAt = j.clock().Add(epochRetry(j.startFails))
		return
	}
	j.ask()
}

// resume continues the newest epoch of the store, or asks for a snapshot.
func (j *journalWriter) resume(ctx context.Context) {
	l, err := j.d.Store.Journal().List(ctx)
	if err != nil {
		j.log().Error("list journal", "error", err)
		return
	}
	newest := j.ownNewest(ctx, l) // journal_cluster.go
	if newest == nil {
		j.want(journal.EpochFirstRun)
		return
	}
	head, err := j.d.Store.Journal().Head(ctx, newest.ID)
	if err != nil && stopped(ctx) {
		return
	}
	if errors.Is(err, journal.ErrJournalBroken) {
		j.d.m.journalErrors.Inc()
		j.log().Error("journal epoch broken: a full snapshot starts a new epoch now", "epoch", newest.ID, "error", err)
		j.want(journal.EpochBroken)
		return
	}
	if errors.Is(err, store.ErrStore) {
		j.d.m.journalErrors.Inc()
		j.log().Error("continue the journal from the store; the next flush retries", "epoch", newest.ID, "error", err)
		return
	}
	if err != nil {
		j.log().Warn("cannot continue the journal from the store: a full snapshot starts a new epoch", "epoch", newest.ID, "error", err)
		j.want(journal.EpochNoContinue)
		return
	}
	last := head.State.CreatedAt
	if head.Last != nil {
		last = head.Last.LastTime
	}
	tail := j.d.Tail.New(head.State, nil, head.Positions, last)
	// The epoch's state (its base snapshot decoded whole, the segments
	// replayed onto it) is garbage once resume returns: the tail keeps
	// what it needs of it.
	defer memlimit.Release()
	if err := tail.Start(ctx); err != nil {
		var tb *capture.TailBreak
		if errors.As(err, &tb) {
			j.log().Warn("cannot continue the journal: a full snapshot starts a new epoch", "epoch", newest.ID, "error", err)
			j.want(tb.Reason)
			return
		}
		j.log().Error("resume journal", "epoch", newest.ID, "error", err)
		return
	}
	j.tail, j.reason = tail, ""
	j.started()
	j.chain = journal.ChainWriter{Epoch: newest.ID, Last: last}
	if head.Last != nil {
		j.chain.Seq, j.chain.Digest = head.Last.LastSeq, head.Last.LastDigest
	}
	if time.Since(last) > 2*j.d.Config.Journal.Interval+snapshot.JournalHeartbeat {
		j.gapFrom = last
	}
	j.log().Info("journal continues from the store", "epoch", j.chain.Epoch, "seq", j.chain.Seq, "since", last)
}

// startEpoch starts a new epoch from the snapshot just stored.
func (j *journalWriter) startEpoch(ctx context.Context, info snapshot.Info) {
	lctx, term, done, ok := j.d.lead.start()
	if !ok {
		return
	}
	defer done()
	ctx, cancel := context.WithTimeout(ctx, j.d.runTimeout())
	defer cancel()
	stop := context.AfterFunc(lctx, cancel)
	defer stop()
	reason := journal.EpochSnapshot
	if j.reason != "" {
		reason = j.reason
	}
	// The snapshot's source offsets are decoded straight into what the
	// tail keeps of them, never into SourceOffsets; what the epoch's start
	// freed (the document's buffers, the old tail once replaced) goes back
	// to the operating system, as after a run (see Daemon.run).
	seed := &capture.SeedSink{S: capture.NewTailSeed()}
	snap, _, err := j.d.Store.Snapshots().GetWith(ctx, info.ID, seed)
	if err == nil {
		err = j.begin(ctx, snap, seed.S, reason, term)
	}
	memlimit.Release()
	if err != nil && stopped(ctx) {
		// The snapshot is stored; the journal continues the epoch before
		// it when it runs again.
		j.log().Info("journal epoch not started: the daemon is stopping or lost the lead", "snapshot_id", info.ID, "error", err)
		return
	}
	if err != nil {
		j.d.m.journalErrors.Inc()
		if j.tail == nil {
			j.startFailed(info.ID, err)
			j.log().Error("start journal epoch; a full snapshot is asked for again after a backoff", "snapshot_id", info.ID,
				"failures_in_a_row", j.startFails, "retry_in", epochRetry(j.startFails), "error", err)
			j.want(reason)
			return
		}
		j.log().Error("start journal epoch; the epoch before goes on", "snapshot_id", info.ID, "error", err)
		return
	}
	j.wanted, j.reason = false, ""
	j.started()
	j.log().Info("journal epoch started", "epoch", j.chain.Epoch, "reason", reason)
}

func (j *journalWriter) begin(ctx context.Context, snap *snapshot.Snapshot, seed *capture.TailSeed, reason string, term uint64) error {
	topics, err := j.d.Tail.Topics(ctx, snap)
	if err != nil {
		return err
	}
	ep := &journal.Epoch{ID: snap.ID, Reason: reason, StartedAt: time.Now().UTC(), Topics: topics}
	if err := j.d.Store.Journal().PutEpoch(ctx, ep); err != nil && !errors.Is(err, snapshot.ErrExists) {
		return err
	}
	tail := j.d.Tail.New(snap, seed, topics, snap.CreatedAt)
	if err := tail.Start(ctx); err != nil {
		return err
	}
	j.tail, j.term = tail, term
	j.chain, j.gapFrom = journal.ChainWriter{Epoch: snap.ID, Last: snap.CreatedAt}, time.Time{}
	j.lastWrite = time.Time{}
	return nil
}

// write stores entries as the next segment, or nothing when nothing
// changed and a segment was written less than a heartbeat ago. It reports
// whether the segment (or the flush mark) is stored.
func (j *journalWriter) write(ctx context.Context, entries []journal.Entry, observed time.Time) bool {
	if len(entries) == 0 && j.gapFrom.IsZero() && j.clock().Sub(j.lastWrite) < snapshot.JournalHeartbeat && !j.lastWrite.IsZero() {
		j.setCovered(observed)
		// For readers to tell a journal that flushes from one that stopped.
		if err := j.d.Store.Journal().PutFlushMark(ctx, j.chain.Epoch, j.chain.Seq, observed, j.d.Config.Journal.Interval); err != nil && !stopped(ctx) {
			j.log().Warn("write journal flush mark", "epoch", j.chain.Epoch, "error", err)
		}
		return true
	}
	if !j.gapFrom.IsZero() {
		entries = append([]journal.Entry{{Kind: journal.EntryGap, Time: j.gapFrom.UnixMilli(), Until: observed.UnixMilli(), Reason: "the daemon was not journaling"}}, entries...)
	}
	seg := j.chain.Next(append(entries, j.tail.Positions()...), observed)
	seg.Interval = j.d.Config.Journal.Interval
	if !j.put(ctx, seg, len(entries) > 0) {
		return false
	}
	j.setCovered(observed)
	events := 0
	own := j.ownRestores(ctx, entries)
	for _, e := range entries {
		if id := own[e.Connector+" "+e.Reason]; e.Kind == journal.EntryEvent && id != "" {
			j.log().Info("restore seen: offsetkeeper's own, no reset", "connector", e.Connector, "kind", e.Reason, "undo_snapshot_id", id)
			continue
		}
		if e.Kind == journal.EntryEvent && e.Reason != snapshot.EventSinkExpiring && e.Reason != snapshot.EventSinkOrphanExpiring { // a warning, logged by the guard
			events++
			j.d.m.resetEvents.WithLabelValues(e.Reason).Inc()
			j.noteReset(e.Connector, e.Reason, int(e.Count))
			cmds := j.d.commands(ctx)
			before := journal.UndoMoment(j.chain.Epoch, time.UnixMilli(e.Before), time.UnixMilli(e.Time))
			undo, note := cmds.Undo(e.Reason, before, e.Connector), undoNote(cmds, e.Reason, e.Connector)
			attrs := []any{"connector", e.Connector, "kind", e.Reason, "count", e.Count}
			if o, ok := j.expiry.orphanUndo(cmds, e, before); ok { // no connector to resume
				undo, note = o.Commands, o.Note
				attrs = append(attrs, "orphaned", true, "delete", o.Delete)
			}
			attrs = append(attrs, "check", undo.DryRun, "undo", undo.Run)
			if note != "" {
				attrs = append(attrs, "note", note)
			}
			j.log().Warn("reset seen", attrs...)
		}
	}
	j.log().Debug("journal segment written", "epoch", j.chain.Epoch, "seq", j.chain.Seq, "entries", len(entries), "events", events)
	return true
}

// put writes seg, the next segment, and reports whether it is stored. A
// write that failed stays pending (see flushPending); a sequence number
// another writer claimed stops the journal (fenced) or, when that write
// never finished, ends the epoch.
func (j *journalWriter) put(ctx context.Context, seg *journal.Segment, changed bool) bool {
	si, err := j.d.Store.Journal().PutSegment(ctx, seg)
	var fe *journal.FencedError
	switch {
	case err == nil:
		j.pending = nil
		j.chain.Wrote(seg)
		j.lastWrite, j.gapFrom = j.clock(), time.Time{}
		if changed {
			j.changes.Add(1)
		}
		j.d.m.journalFlush.Set(float64(time.Now().UnixNano()) / 1e9)
		j.d.m.journalBytes.Add(float64(si.Size))
		return true
	case errors.As(err, &fe) && fe.Stored:
		j.drop()
		j.fenced, j.fencedAt = j.term, j.clock()
		j.d.m.journalErrors.Inc()
		j.d.m.journalNotRunning.Set(1)
		j.setTrouble(fmt.Sprintf("not journaling: another writer writes epoch %s (check that two daemons do not lead at once)", fe.Epoch))
		j.log().Error("journal stopped: another writer writes this epoch; this daemon journals again once it leads a new term (check leader election: two daemons must not both lead)", "epoch", fe.Epoch, "seq", fe.Seq, "error", err)
		return false
	case errors.As(err, &fe):
		j.drop()
		j.d.m.journalErrors.Inc()
		j.log().Error("journal epoch cannot go on: a full snapshot starts a new epoch now", "epoch", fe.Epoch, "seq", fe.Seq, "error", err)
		j.want(journal.EpochNoContinue)
		return false
	case errors.Is(err, snapshot.ErrExists):
		j.drop()
		j.log().Warn("journal segment already written: another daemon writes this epoch; continuing from the store", "epoch", j.chain.Epoch, "seq", seg.FirstSeq)
		return false
	}
	// Perhaps stored, perhaps not: the next flush writes the same segment
	// again, and finds it if it was.
	j.pending, j.pendingChanged = seg, changed
	if stopped(ctx) {
		j.log().Info("journal segment not written: the daemon is stopping or lost the lead; the next flush writes it", "epoch", j.chain.Epoch, "seq", seg.FirstSeq, "error", err)
		return false
	}
	j.d.m.journalErrors.Inc()
	j.log().Error("write journal segment; the next flush retries it", "epoch", j.chain.Epoch, "seq", seg.FirstSeq, "error", err)
	return false
}

// flushPending writes the pending segment again; it reports whether the
// flush goes on.
func (j *journalWriter) flushPending(ctx context.Context) bool {
	seg := j.pending
	if !j.put(ctx, seg, j.pendingChanged) {
		return false
	}
	j.setCovered(seg.LastTime)
	return true
}

// noteReset counts a reset written, for the next snapshot run's line.
func (j *journalWriter) noteReset(connector, kind string, n int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.resets == nil {
		j.resets = map[string]map[string]int{}
	}
	if j.resets[connector] == nil {
		j.resets[connector] = map[string]int{}
	}
	j.resets[connector][kind] += n
}

// takeResets returns the resets counted since the last call, by connector
// then kind, and starts counting again.
func (j *journalWriter) takeResets() map[string]map[string]int {
	j.mu.Lock()
	defer j.mu.Unlock()
	r := j.resets
	j.resets = nil
	return r
}

func (j *journalWriter) setCovered(t time.Time) {
	j.mu.Lock()
	j.covered = t
	j.mu.Unlock()
}

// lag is how far the journal in the store is behind now, in seconds; 0
// before the first flush.
func (j *journalWriter) lag() float64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.covered.IsZero() {
		if j.since.IsZero() {
			return 0
		}
		// Leading, and nothing flushed yet: the journal is behind since
		// the daemon began to lead (flushes that all fail, an epoch that
		// never starts, are not a lag of 0).
		return time.Since(j.since).Seconds()
	}
	return time.Since(j.covered).Seconds()
}

// leading notes that a flush runs while this daemon leads, for lag.
func (j *journalWriter) leading() {
	j.mu.Lock()
	if j.since.IsZero() {
		j.since = time.Now()
	}
	j.mu.Unlock()
}

// standBy resets what the journal reports while this daemon does not
// lead: its lag and its trouble are the leader's to report.
func (j *journalWriter) standBy() {
	j.mu.Lock()
	j.covered, j.since, j.trouble = time.Time{}, time.Time{}, ""
	j.mu.Unlock()
	j.d.m.journalNotRunning.Set(0)
}

// retainJournal deletes the journal of epochs whose base snapshot
// retention removed (see store.Journal.Prune), and applies
// Journal.KeepWithin to every epoch (see retainEpoch).
func (d *Daemon) retainJournal(ctx context.Context) error {
	removed, err := d.Store.Journal().Prune(ctx)
	for _, id := range removed {
		d.log().Debug("journal epoch removed with its base snapshot", "epoch", id)
	}
	if err != nil || d.Config.Journal.KeepWithin <= 0 {
		return err
	}
	l, err := d.Store.Journal().List(ctx)
	if err != nil {
		return err
	}
	for _, e := range l.Epochs {
		if err := d.retainEpoch(ctx, e, time.Now()); err != nil {
			return err
		}
	}
	return nil
}

// retainEpoch deletes the raw segments of e that a merged level holds and
// that are older than Journal.KeepWithin, and the level 1 segments that
// no restore within it reads (see snapshot.Store.ThinMinutes).
func (d *Daemon) retainEpoch(ctx context.Context, e journal.EpochInfo, now time.Time) error {
	keep := d.Config.Journal.KeepWithin
	if keep <= 0 || d.ret.resetHeld(e.ID) {
		// An epoch kept for a young reset keeps its raw segments:
		// restore --at the moment before the reset stays exact.
		return nil
	}
	n, err := d.Store.Levels().DropRaw(ctx, e, keep, now)
	if err != nil {
		return err
	}
	if n > 0 {
		d.log().Debug("raw journal segments held by merged levels deleted", "epoch", e.ID, "segments", n)
	}
	n, err = d.Store.Levels().ThinMinutes(ctx, e, keep, now)
	if n > 0 {
		d.log().Debug("level 1 journal segments superseded deleted", "epoch", e.ID, "segments", n)
	}
	return err
}

// compactEvery is how often the compaction loop looks for a level's
// boundary that has passed.
const compactEvery = 15 * time.Second

// compactLoop writes the journal's merged levels (see
// store.Levels.Compact) while the daemon leads, on a goroutine of
// its own so a merge never delays a flush.
func (j *journalWriter) compactLoop(ctx context.Context) {
	t := time.NewTicker(compactEvery)
	defer t.Stop()
	c := compactor{j: j}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.tick(ctx, j.clock())
		}
	}
}

// clock is the journal's time: time.Now unless a test set now.
func (j *journalWriter) clock() time.Time {
	if j.now != nil {
		return j.now()
	}
	return time.Now()
}

// compactor is the state of the compaction loop between ticks.
type compactor struct {
	j *journalWriter
	// minute and hour are the boundaries compacted last; changes is the
	// journal's count of segments with changes then.
	minute, hour time.Time
	changes      uint64
	runs         int // compactions started
}

// tick compacts at now once per minute boundary, and only when the
// journal wrote changes since the last compaction (an idle journal's
// heartbeats are merged once an hour): an idle daemon lists nothing and
// merges nothing. The first tick always compacts (epochs the store held
// before). A failed compaction is tried again at the next tick.
func (c *compactor) tick(ctx context.Context, now time.Time) {
	m, h := now.UTC().Truncate(time.Minute), now.UTC().Truncate(time.Hour)
	if m.Equal(c.minute) {
		return
	}
	changes := c.j.changes.Load()
	if !c.minute.IsZero() && changes == c.changes && h.Equal(c.hour) {
		c.minute = m
		return
	}
	c.runs++
	if c.j.compact(ctx, now) {
		c.minute, c.hour, c.changes = m, h, changes
	}
}

// compact writes the merged segments every epoch lacks at now and applies
// --journal-keep-within, with one LIST of the journal; it reports whether
// it finished.
func (j *journalWriter) compact(ctx context.Context, now time.Time) bool {
	lctx, _, done, ok := j.d.lead.start()
	if !ok {
		return false
	}
	defer done()
	ctx, cancel := context.WithTimeout(ctx, j.d.runTimeout())
	defer cancel()
	stop := context.AfterFunc(lctx, cancel)
	defer stop()
	var failed string
	l, err := j.d.Store.Journal().List(ctx)
	if err == nil {
		for _, e := range l.Epochs {
			if !e.HasFile {
				continue
			}
			var segs []journal.SegmentInfo
			failed = e.ID
			if segs, err = j.d.Store.Levels().Compact(ctx, e, now); err != nil {
				break
			}
			for _, si := range segs {
				j.log().Debug("journal segments merged", "epoch", e.ID, "level", si.Level, "first_seq", si.FirstSeq, "last_seq", si.LastSeq, "size", si.Size)
			}
			e.Segments = append(e.Segments, segs...)
			if err = j.d.retainEpoch(ctx, e, now); err != nil {
				break
			}
		}
	}
	if err != nil && stopped(ctx) {
		j.log().Info("journal compaction interrupted: the daemon is stopping or lost the lead", "error", err)
		return false
	}
	if err != nil {
		j.d.m.journalErrors.Inc()
		j.log().Error("compact journal", "error", err)
		if errors.Is(err, journal.ErrJournalBroken) && len(l.Epochs) > 0 {
			// The epoch compacted last when it failed: the journal ends it if
			// it is the one being written.
			select {
			case j.brokenc <- failed:
			default:
			}
		}
		return false
	}
	return true
}

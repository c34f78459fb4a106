package daemon

// This file is the daemon's expiry guard (issue 37): it knows, per sink
// group without members, when Kafka deletes its committed offsets under
// Kafka's rule (snapshot.ExpiryRule), warns ahead (log, metric, a
// sink-expiring event), and records a group that vanishes at its expiry
// as sink-expired instead of sink-deleted. A group whose connector has
// no config (deleted, or its config topic lost) is watched too: nothing
// commits to it again, so it is the one sure to expire; its advice
// creates the connector again instead of resuming it (restore.Orphaned).

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
)

// retentionReread is how often the brokers' offsets.retention.minutes is
// read again.
const retentionReread = time.Hour

// sinkExpiry is the expiry guard's state, used by the journal loop only.
type sinkExpiry struct {
	retention time.Duration
	readAt    time.Time
	gauge     *prometheus.GaugeVec
	// groups are the sink groups without members seen at the last flush.
	groups map[string]*expiring
	// state is every sink group's state at the last flush, and observed
	// when it was read.
	state    map[string]string
	observed time.Time

	// mu guards since, when each group without members became Empty as
	// far as the guard knows: the snapshot runs record it (stamp).
	mu    sync.Mutex
	since map[string]time.Time

	// gone is, per connector, the event that took its config as the
	// journal saw it, for the advice of an orphaned group.
	gone map[string]restore.ConfigGone
	// orphansExpired are the orphaned groups the last poll saw expire,
	// for the reset seen line (orphanUndo).
	orphansExpired map[string]bool
}

// expiring is one sink group without members.
type expiring struct {
	connector string
	rule      string
	// orphan says the connector has no config: nothing commits to the
	// group again, and there is no connector to resume.
	orphan bool
	// since is when it became Empty, the observation before the first
	// that saw it Empty (it may have become Empty any time after); nil
	// when it was Empty at the first observation.
	since *time.Time
	// seen is when each partition's offset was first seen as it is.
	seen map[string]time.Time
	// at is when its offsets expire; exact says at is Kafka's time (else
	// the latest it can be).
	at     time.Time
	exact  bool
	warned bool
	// firstLook is the observation that began watching the group;
	// watched says each of its offsets was first seen at a later one, so
	// that it was committed at most one interval before it was seen.
	firstLook time.Time
	watched   bool
}

// warnAhead is how long before the expiry the guard warns: a day, or
// half the retention when that is shorter.
func warnAhead(retention time.Duration) time.Duration { return min(24*time.Hour, retention/2) }

// observe runs after each journal poll: entries are the poll's, observed
// its time. It returns entries with the expiry guard's events.
func (x *sinkExpiry) observe(ctx context.Context, j *journalWriter, entries []journal.Entry, observed time.Time) []journal.Entry {
	x.readRetention(ctx, j)
	groups := j.tail.SinkGroups()
	x.noteGone(j, entries)
	entries = x.classifyVanished(ctx, j, entries, groups, observed)
	next := map[string]*expiring{}
	for name, g := range groups {
		rule := snapshot.ExpiryRule(g, g.Type == capture.GroupTypeConsumer)
		if g.Connector == "" || len(g.Offsets) == 0 || rule == snapshot.RuleNone || x.retention <= 0 {
			continue
		}
		e := x.groups[name]
		if e == nil || e.rule != rule {
			e = &expiring{connector: g.Connector, rule: rule, seen: map[string]time.Time{}}
			if was, ok := x.state[name]; ok && was != snapshot.GroupStateEmpty && !x.observed.IsZero() {
				since := x.observed
				e.since = &since
			}
		}
		if orphan := !j.tail.HasConfig(g.Connector); orphan != e.orphan {
			// Warned as a stopped sink, then deleted: warned again, with
			// the advice for a connector that is not there.
			e.orphan, e.warned = orphan, false
		}
		x.update(e, g, observed)
		next[name] = e
		x.gauge.WithLabelValues(name).Set(time.Until(e.at).Seconds())
		if !e.warned && e.at.Sub(observed) <= warnAhead(x.retention) {
			e.warned = true
			kind := snapshot.EventSinkExpiring
			if e.orphan {
				kind = snapshot.EventSinkOrphanExpiring
			}
			entries = append(entries, journal.Entry{Kind: journal.EntryEvent, Time: journal.Ms(observed), Connector: g.Connector, Group: name,
				Reason: kind, Count: int32(len(g.Offsets)), Before: journal.Ms(e.at)})
			x.warn(ctx, j, name, e, observed)
		}
	}
	for name := range x.groups {
		if next[name] == nil {
			x.gauge.DeleteLabelValues(name)
		}
	}
	x.groups, x.observed = next, observed
	since := map[string]time.Time{}
	for name, e := range next {
		if e.since != nil && e.rule == snapshot.RuleEmptySince {
			since[name] = *e.since
		}
	}
	x.mu.Lock()
	x.since = since
	x.mu.Unlock()
	x.state = make(map[string]string, len(groups))
	for name, g := range groups {
		x.state[name] = g.State
	}
	return entries
}

// warn logs the warning ahead of group name's expiry, observed now: for
// a stopped sink, resume it before then; for an orphaned group, what
// restore.Orphaned says (no connector to resume).
func (x *sinkExpiry) warn(ctx context.Context, j *journalWriter, name string, e *expiring, observed time.Time) {
	cs := j.d.commands(ctx)
	attrs := []any{"group", name, "connector", e.connector, "expires_at", e.at.UTC(), "exact", e.exact, "rule", e.rule}
	if e.orphan {
		o := cs.Orphaned(name, e.connector, x.goneOf(e.connector), observed)
		j.log().Warn("sink offsets expire", append(attrs, "orphaned", true, "note", o.Note, "delete", o.Delete,
			"check", o.Commands.DryRun, "undo", o.Commands.Run)...)
		return
	}
	after := cs.At(observed, e.connector)
	j.log().Warn("sink offsets expire", append(attrs, "resume", "resume the connector before then", "after", cs.WithStart(after.Run))...)
}

// noteGone keeps, per connector, the newest event of entries that took
// its config.
func (x *sinkExpiry) noteGone(j *journalWriter, entries []journal.Entry) {
	for _, e := range entries {
		if e.Kind != journal.EntryEvent || !snapshot.ConfigLost(e.Reason) {
			continue
		}
		if x.gone == nil {
			x.gone = map[string]restore.ConfigGone{}
		}
		before := journal.UndoMoment(j.chain.Epoch, time.UnixMilli(e.Before), time.UnixMilli(e.Time))
		x.gone[e.Connector] = restore.ConfigGone{Kind: e.Reason, Before: before}
	}
}

// orphanUndo is the advice for e, a sink-expired event of the last poll
// whose connector has no config (restore.Orphaned), before its moment
// just before; ok is false for any other event.
func (x *sinkExpiry) orphanUndo(cs restore.CommandSettings, e journal.Entry, before time.Time) (o restore.Orphan, ok bool) {
	if e.Kind != journal.EntryEvent || e.Reason != snapshot.EventSinkExpired || !x.orphansExpired[e.Group] {
		return restore.Orphan{}, false
	}
	return cs.Orphaned(e.Group, e.Connector, x.goneOf(e.Connector), before), true
}

// goneOf is the event that took connector's config, nil when the journal
// did not see it go.
func (x *sinkExpiry) goneOf(connector string) *restore.ConfigGone {
	if g, ok := x.gone[connector]; ok {
		return &g
	}
	return nil
}

// update sets e's expiry from g, observed now.
func (x *sinkExpiry) update(e *expiring, g snapshot.SinkGroup, observed time.Time) {
	committed := map[string]time.Time{}
	if e.firstLook.IsZero() {
		e.firstLook = observed
	}
	e.watched = len(g.Offsets) > 0
	for _, o := range g.Offsets {
		tp := o.Topic + "/" + strconv.Itoa(int(o.Partition))
		k := tp + "@" + strconv.FormatInt(o.Offset, 10)
		if _, ok := e.seen[k]; !ok {
			e.seen[k] = observed
		}
		committed[tp] = e.seen[k]
		e.watched = e.watched && e.seen[k].After(e.firstLook)
	}
	g.EmptySince = e.since
	if at, ok := snapshot.ExpiresAt(g, e.rule, x.retention, committed); ok {
		// Exact for an Empty group seen becoming Empty (up to one
		// interval early); a commit seen is the latest it was made.
		e.at, e.exact = at, e.rule == snapshot.RuleEmptySince
		return
	}
	if e.at.IsZero() {
		e.at = observed.Add(x.retention) // Empty at the first look: at the latest then
	}
}

// classifyVanished turns the sink-deleted event of a group that vanished
// at or after its expiry into sink-expired. Under the empty-since rule
// that is its exact expiry. Under the commit-time rule (a
// consumer-protocol group on Kafka 4.x, a group without a protocol type)
// the journal saw each offset at most one interval after its commit, so
// Kafka deletes the last of them no earlier than the expiry it predicts
// less one interval. Such a group vanishing at its expiry was reported as
// deleted, with an undo that left the connector stopped, where the
// offsets restored expire again. A group already Empty at the daemon's
// first look may have been committed long before: its vanishing stays a
// deletion.
func (x *sinkExpiry) classifyVanished(ctx context.Context, j *journalWriter, entries []journal.Entry, groups map[string]snapshot.SinkGroup, observed time.Time) []journal.Entry {
	x.orphansExpired = nil
	for i := range entries {
		e := &entries[i]
		if e.Kind != journal.EntryEvent || e.Reason != snapshot.EventSinkDeleted {
			continue
		}
		if sg, still := groups[e.Group]; still && len(sg.Offsets) > 0 {
			continue // a group kept without offsets has lost them all too
		}
		g := x.groups[e.Group]
		if g == nil {
			continue
		}
		due := g.exact && !observed.Before(g.at)
		if g.rule == snapshot.RuleCommitTime && g.watched {
			due = !observed.Before(g.at.Add(-j.d.Config.Journal.Interval))
		}
		if due {
			e.Reason = snapshot.EventSinkExpired
			cmds := j.d.commands(ctx)
			before := journal.UndoMoment(j.chain.Epoch, time.UnixMilli(e.Before), time.UnixMilli(e.Time))
			if g.orphan {
				if x.orphansExpired == nil {
					x.orphansExpired = map[string]bool{}
				}
				x.orphansExpired[e.Group] = true
				o := cmds.Orphaned(e.Group, e.Connector, x.goneOf(e.Connector), before)
				j.log().Warn("sink offsets expired", "group", e.Group, "connector", e.Connector, "expired_at", g.at.UTC(), "orphaned", true,
					"note", o.Note, "delete", o.Delete, "restore", o.Commands.Run)
				continue
			}
			after := cmds.At(before, e.Connector)
			j.log().Warn("sink offsets expired", "group", e.Group, "connector", e.Connector, "expired_at", g.at.UTC(),
				"restore", j.d.Config.Commands.WithStart(after.Run))
		}
	}
	return entries
}

// readRetention reads offsets.retention.minutes when it is not known or
// was read long ago; a failure is logged and leaves the guard off.
func (x *sinkExpiry) readRetention(ctx context.Context, j *journalWriter) {
	if x.gauge == nil {
		x.gauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "offsetkeeper_sink_offsets_expire_seconds",
			Help: "Seconds until Kafka deletes the committed offsets of a sink group without members (offsets.retention.minutes after it became Empty), unless its connector resumes; negative once due.",
		}, []string{"group"})
		j.d.m.reg.MustRegister(x.gauge)
	}
	if j.d.Kafka == nil || (!x.readAt.IsZero() && time.Since(x.readAt) < retentionReread) {
		return
	}
	r, err := capture.ReadOffsetsRetention(ctx, kadm.NewClient(j.d.Kafka))
	x.readAt = time.Now()
	if err != nil {
		j.log().Warn("read offsets.retention.minutes: sink offsets expiry is not watched", "error", err)
		return
	}
	x.retention = r
}

// stamp sets EmptySince on snap's sink groups that are Empty and that
// the guard saw become Empty. Safe for use by the snapshot runs while the
// journal loop runs.
func (x *sinkExpiry) stamp(snap *snapshot.Snapshot) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for i := range snap.SinkGroups {
		g := &snap.SinkGroups[i]
		if t, ok := x.since[g.Group]; ok && g.State == snapshot.GroupStateEmpty && g.EmptySince == nil {
			g.EmptySince = &t
		}
	}
}

// stampEmptySince records in snap when its sink groups became Empty, as
// far as the journal's expiry guard knows (nothing without a journal).
func (d *Daemon) stampEmptySince(snap *snapshot.Snapshot) {
	if d.jr != nil {
		d.jr.expiry.stamp(snap)
	}
}

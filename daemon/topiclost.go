package daemon

// This file is the journal's answer to an offsets or config topic deleted,
// or deleted and created again under a new topic ID: what it held is gone
// as surely as after a reset, so the journal records it as one event per
// connector whose keys (or config) it held, in a last segment of the epoch
// that ends. events, the plans of later states and retention then treat it
// as they treat a reset: each event names the restore --at the moment
// before, never "latest" (which is the empty topic by then).

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
)

// topicLost writes, as the last segment of the epoch, an event per
// connector that topic tb names held, from the state the journal reached
// (Journal.Head): the state before the topic went. It reports
// whether it wrote them; a failure is logged and the epoch ends anyway.
func (j *journalWriter) topicLost(ctx context.Context, tb *capture.TailBreak) bool {
	kind := lostKind(tb)
	if kind == "" || j.tail == nil {
		return false
	}
	head, err := j.d.Store.Journal().Head(ctx, j.chain.Epoch)
	if err != nil {
		j.log().Error("read the journal's state before the topic went (its connectors get no event)", "epoch", j.chain.Epoch, "topic", tb.Topic, "error", err)
		return false
	}
	before := head.State.CreatedAt
	if head.Last != nil {
		before = head.Last.LastTime
	}
	counts := lostCounts(head.State, tb.Topic, tb.Role)
	if len(counts) == 0 {
		j.log().Warn("journaled topic gone; it held no connector's offsets or config", "topic", tb.Topic, "reason", tb.Reason)
		return false
	}
	now := j.clock()
	at := journal.Ms(now)
	var entries []journal.Entry
	for _, name := range slices.Sorted(maps.Keys(counts)) {
		entries = append(entries, journal.Entry{Kind: journal.EntryEvent, Time: at, Connector: name, Reason: kind,
			Count: int32(counts[name]), Before: min(journal.Ms(before), at-1)})
	}
	j.log().Warn("journaled topic gone: an event per connector it held; each names the restore that brings it back",
		"topic", tb.Topic, "reason", tb.Reason, "connectors", len(entries), "before", before)
	return j.write(ctx, entries, now)
}

// lostKind is the event kind of tb, "" when tb is no topic deleted or
// re-created.
func lostKind(tb *capture.TailBreak) string {
	if tb.Topic == "" || tb.Reason != journal.EpochTopicDeleted && tb.Reason != journal.EpochTopicRecreated {
		return ""
	}
	switch tb.Role {
	case snapshot.RoleOffsets:
		return snapshot.EventOffsetsTopicDeleted
	case snapshot.RoleConfig:
		return snapshot.EventConfigTopicDeleted
	}
	return ""
}

// lostCounts counts, per connector, what topic held in state: its source
// keys for an offsets topic, its config for the config topic (every
// connector with a config: under a layout's several config topics, that
// names more connectors than the one topic held, which errs on the side
// of an undo too many).
func lostCounts(state *snapshot.Snapshot, topic, role string) map[string]int {
	counts := map[string]int{}
	switch role {
	case snapshot.RoleOffsets:
		names := map[string]string{}
		for _, o := range state.SourceTable().All() {
			if o.Topic != topic {
				continue
			}
			name := o.Connector
			if name == "" {
				if n, _, err := snapshot.ParseSourceKey(o.Key, names); err == nil {
					name = n
				}
			}
			if name != "" {
				counts[name]++
			}
		}
	case snapshot.RoleConfig:
		for _, c := range state.Connectors {
			if c.HasConfig {
				counts[c.Name] = 1
			}
		}
	}
	return counts
}

// ownRestores returns, by "connector kind", the undo snapshot of the restore
// whose writes a sink event of entries is (snapshot.OwnRestore): no reset,
// no alert. Source offsets a restore writes are never events (their
// header). A store that cannot be listed leaves every event a reset.
func (j *journalWriter) ownRestores(ctx context.Context, entries []journal.Entry) map[string]string {
	var infos []snapshot.Info
	out := map[string]string{}
	for _, e := range entries {
		if e.Kind != journal.EntryEvent || e.Reason != snapshot.EventSinkRewound && e.Reason != snapshot.EventSinkDeleted {
			continue
		}
		if infos == nil {
			l, err := j.d.Store.Snapshots().List(ctx)
			if err != nil {
				j.log().Warn("list snapshots to tell a restore's own writes from a reset", "error", err)
				return out
			}
			infos = l
		}
		if id := snapshot.OwnRestore(infos, e.Reason, e.Connector, time.UnixMilli(e.Before), time.UnixMilli(e.Time)); id != "" {
			out[e.Connector+" "+e.Reason] = id
		}
	}
	return out
}

// ownRestores zeroes the moved-backwards counts of connectors a restore
// wrote since prev (restoredSince), logging each.
func (d *Daemon) ownRestores(ctx context.Context, counts map[string]int, prev, cur *sinkState) {
	if prev == nil || !slices.ContainsFunc(slices.Collect(maps.Values(counts)), func(n int) bool { return n > 0 }) {
		return
	}
	infos, err := d.Store.Snapshots().List(ctx)
	if err != nil {
		d.log().Warn("list snapshots to tell a restore's rollback from a reset", "error", err)
		return
	}
	for conn, id := range restoredSince(counts, infos, prev.at, cur.at) {
		d.log().Info("sink offsets moved backwards by offsetkeeper's own restore: no reset", "connector", conn, "undo_snapshot_id", id)
	}
}

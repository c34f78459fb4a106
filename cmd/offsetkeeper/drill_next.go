package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/english"
	"github.com/offsetkeeper/offsetkeeper/restore/drill"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// printed is a command for a person to paste: args run with the settings
// this run was given on its command line that restore and the command of
// info also take (those from the environment the shell still has; secrets
// never), named as this program was run.
func (c *drillCmd) printed(info commandInfo, args ...string) string {
	return pasteable(append(args, c.g.settingFlags(restoreFlags(), flagsOf(info))...))
}

// absentCauses are the completeness failures of something Connect has and
// the state lacks.
var absentCauses = []string{drill.CauseConnectorAbsent, drill.CauseGroupAbsent, drill.CausePartitionAbsent}

// nextAfterAbsent is what to do when a drill of a stored snapshot found
// connectors, groups or partitions Connect has and the snapshot lacks: made
// after the snapshot, a capture made now holds them, and a drill of such a
// capture (which stores nothing) tells whether the capture sees them before
// a snapshot is taken. It returns the advice (one line, each command in it
// whole) and its commands; "" when the drill found none, or drilled
// something else (a capture made now that misses them is the capture's
// fault: its topics, group prefix or ACLs, as docs/drills.md says).
func (c *drillCmd) nextAfterAbsent(rep *drill.Report) (string, []string) {
	if rep.State.Kind != "snapshot" {
		return "", nil
	}
	var names []string
	for _, ch := range rep.Checks {
		for _, f := range ch.Failures {
			if slices.Contains(absentCauses, f.Cause) && f.Connector != "" && !slices.Contains(names, f.Connector) {
				names = append(names, f.Connector)
			}
		}
	}
	if len(names) == 0 {
		return "", nil
	}
	shown := names[:min(len(names), 5)]
	list := strings.Join(shown, ", ")
	if len(names) > len(shown) {
		list += fmt.Sprintf(" and %d more", len(names)-len(shown))
	}
	check, take := c.printed(drillCommand, "drill"), c.printed(snapshotCommand, "snapshot")
	age := time.Since(rep.State.At).Round(time.Second)
	return fmt.Sprintf("Connect has %s that snapshot %s (taken %s ago) lacks in whole or in part (%s). "+
		"If they were made after it, a capture made now holds them: a drill of one tells whether the capture sees them "+
		"(it stores no snapshot): %s and once it passes, take a snapshot that holds them: %s",
		english.Count(len(names), "connector", "connectors"), rep.State.SnapshotID, age, list, check, take), []string{check, take}
}

// nextAfterUnreadable is what to do when the snapshot drilled cannot be
// read (a checksum that does not match, a damaged object): restore nothing
// from it; take a snapshot now and drill it; and drill the newest full
// snapshot before it, the one a restore would fall back on. "" when the
// drill read its state.
func (c *drillCmd) nextAfterUnreadable(ctx context.Context, st *store.Store, rep *drill.Report) (string, []string) {
	if rep.State.Kind != "snapshot" || rep.Check(drill.CheckRestorable) == nil ||
		!slices.ContainsFunc(rep.Check(drill.CheckRestorable).Failures, func(f drill.Failure) bool { return f.Cause == drill.CauseUnreadable }) {
		return "", nil
	}
	take, check := c.printed(snapshotCommand, "snapshot"), c.printed(drillCommand, "drill", "latest")
	text := fmt.Sprintf("Snapshot %s cannot be read: restore nothing from it.", rep.State.SnapshotID)
	var cmds []string
	if prev := c.fullBefore(ctx, st, rep.State.SnapshotID); prev != nil {
		older := c.printed(drillCommand, "drill", prev.ID)
		text += fmt.Sprintf(" Until a new snapshot is taken, the newest full snapshot before it, %s (taken %s), is the one "+
			"to restore (by its ID: latest names the unreadable one): drill it: %s", prev.ID, prev.CreatedAt.UTC().Format(time.RFC3339), older)
		cmds = append(cmds, older)
	} else {
		text += " The store holds no full snapshot before it."
	}
	return text + fmt.Sprintf(" Take a snapshot now: %s and drill it: %s", take, check), append(cmds, take, check)
}

// fullBefore is the newest full snapshot stored before snapshot id, nil
// when there is none (or the store cannot be listed).
func (c *drillCmd) fullBefore(ctx context.Context, st *store.Store, id string) *snapshot.Info {
	infos, err := st.Snapshots().List(ctx)
	if err != nil {
		return nil
	}
	var at time.Time
	for _, in := range infos {
		if in.ID == id {
			at = in.CreatedAt
		}
	}
	var prev *snapshot.Info
	for i := range infos {
		in := &infos[i]
		if in.ID == id || in.EffectiveKind() != snapshot.KindFull || (!at.IsZero() && !in.CreatedAt.Before(at)) {
			continue
		}
		if prev == nil || in.CreatedAt.After(prev.CreatedAt) {
			prev = in
		}
	}
	return prev
}

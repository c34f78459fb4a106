package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/english"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/restore/drill"
)

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
	s := c.g.commandSettings()
	program := s.Program
	if program == "" {
		program = "offsetkeeper"
	}
	command := func(args ...string) string {
		q := make([]string, 0, len(args)+len(s.Flags))
		for _, a := range append(args, s.Flags...) {
			q = append(q, restore.ShellQuote(a))
		}
		return program + " " + strings.Join(q, " ")
	}
	shown := names[:min(len(names), 5)]
	list := strings.Join(shown, ", ")
	if len(names) > len(shown) {
		list += fmt.Sprintf(" and %d more", len(names)-len(shown))
	}
	check, take := command("drill"), command("snapshot")
	age := time.Since(rep.State.At).Round(time.Second)
	return fmt.Sprintf("Connect has %s that snapshot %s (taken %s ago) lacks in whole or in part (%s). "+
		"If they were made after it, a capture made now holds them: a drill of one tells whether the capture sees them "+
		"(it stores no snapshot): %s and once it passes, take a snapshot that holds them: %s",
		english.Count(len(names), "connector", "connectors"), rep.State.SnapshotID, age, list, check, take), []string{check, take}
}

package main

// This file is events' warning about a journal epoch broken within the
// span it lists: a segment missing from the store (a lifecycle rule, a
// restore of the bucket from a backup, a hand deletion). The resets the
// epoch recorded from the hole on cannot be read, and events used to
// answer "no resets since ..." with nothing said about them.

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/english"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
)

// brokenEpoch is one epoch broken within the span events lists: the
// warning, and the commands it holds.
type brokenEpoch struct {
	text string
	cmds []string
}

// brokenEpochs are the epochs of l broken after since: each names the last
// moment its events are complete up to and the hole, with the diff that
// shows what changed across it (its base snapshot against the next epoch's,
// or the live cluster when it is the newest) and the verify that names
// every segment missing.
func (c *eventsCmd) brokenEpochs(l *journal.JournalListing, since time.Time) []brokenEpoch {
	var out []brokenEpoch
	for i := range l.Epochs {
		e := &l.Epochs[i]
		chain, hole := e.Chain()
		if hole == nil {
			continue
		}
		var last time.Time
		for _, si := range e.Segments {
			if si.LastTime.After(last) {
				last = si.LastTime
			}
		}
		if last.Before(since) {
			continue // broken before the span listed
		}
		from := "from its start"
		if len(chain) > 0 {
			from = "after " + restore.FormatMoment(chain[len(chain)-1].LastTime)
		}
		diff := []string{"diff", e.ID, "--live"}
		if i+1 < len(l.Epochs) {
			diff = []string{"diff", e.ID, l.Epochs[i+1].ID}
		}
		for _, n := range c.connectors {
			diff = append(diff, "--connector", n)
		}
		diffCmd := c.command(diff, flagsOf(diffCommand))
		verify := c.command([]string{"verify"}, flagsOf(verifyCommand))
		text := fmt.Sprintf("warning: journal epoch %s is broken %s, up to %s (%v): the resets it recorded then are not listed. "+
			"What changed across it: %s and every segment missing: %s", e.ID, from, restore.FormatMoment(last), hole, diffCmd, verify)
		out = append(out, brokenEpoch{text: text, cmds: []string{diffCmd, verify}})
	}
	return out
}

// command is the offsetkeeper command of args with this command line's
// settings that fs (the command's flag set) takes.
func (c *eventsCmd) command(args []string, fs *flag.FlagSet) string {
	return strings.Join(quoteEach(append(append([]string{programName}, args...), c.g.settingFlags(fs)...)), " ")
}

func quoteEach(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = restore.ShellQuote(a)
	}
	return out
}

// warnBroken writes the warnings of brokenEpochs to w, each wrapped, its
// commands on lines of their own.
func warnBroken(w io.Writer, broken []brokenEpoch) {
	for _, b := range broken {
		fmt.Fprintln(w, english.Advice(b.text, lineWidth, b.cmds))
	}
}

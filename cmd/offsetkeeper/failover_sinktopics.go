package main

// This file is failover before a sink connector whose topics.regex does
// not match the standby's copies of its topics: the translation moved its
// offsets to the copies (MirrorMaker 2's ALIAS.<topic>) and rewrites a
// topics list, but a pattern cannot be rewritten. Resumed so, the sink
// would not read the records its offsets were translated to.

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/restore/standby"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// failoverHeld is a sink connector failover did not resume (or pause):
// its config on the standby does not read the copies its offsets were
// translated to.
type failoverHeld struct {
	Connector string   `json:"connector"`
	Regex     string   `json:"topics_regex"`
	Unread    []string `json:"unread_topics"`
	// Command resumes (or pauses) it, once its topics.regex is changed.
	Command string `json:"command"`
	// Stopped: it was STOPPED in the primary's state (a switchover stops
	// them there), left so as any; named so that whoever starts it
	// changes the pattern first.
	Stopped bool `json:"stopped_on_primary,omitempty"`
}

// unreadCopies returns the standby's copies of sink connector name's
// topics (its offsets as translated, renamed by the translation) that its
// config does not read, and its topics.regex; nil when the primary's
// config names no topics.regex, or when it reads them all. The standby's
// Connect is asked for the config it holds (an operator may have changed
// the pattern there); the translated state's config without it.
func unreadCopies(ctx context.Context, rc *connectrest.Client, state *snapshot.Snapshot, rep *standby.Report, name string) ([]string, string) {
	if rep.State == nil {
		return nil, ""
	}
	sc, ok := rep.State.Connector(name)
	if !ok || sc.Type != snapshot.TypeSink || sc.Config["topics.regex"] == "" || strings.TrimSpace(sc.Config["topics"]) != "" {
		return nil, ""
	}
	config := sc.Config
	if rc != nil {
		if live, err := rc.Config(ctx, name); err == nil {
			config = live
		}
	}
	var before, unread []string
	for _, g := range state.SinkGroups {
		for _, o := range g.Offsets {
			if g.Connector == name {
				before = append(before, o.Topic)
			}
		}
	}
	for _, g := range rep.State.SinkGroups {
		for _, o := range g.Offsets {
			if g.Connector != name || slices.Contains(before, o.Topic) || slices.Contains(unread, o.Topic) || configReads(config, o.Topic) {
				continue
			}
			unread = append(unread, o.Topic)
		}
	}
	slices.Sort(unread)
	return unread, config["topics.regex"]
}

// configReads reports whether a sink connector with config reads topic:
// its topics list names it, or its topics.regex matches it (a config
// with neither cannot be told, and is taken to read it).
func configReads(config map[string]string, topic string) bool {
	if v := config["topics"]; strings.TrimSpace(v) != "" {
		return slices.Contains(restore.SplitTopics(v), topic)
	}
	if re := config["topics.regex"]; re != "" {
		return restore.RegexReads(re, topic)
	}
	return true
}

// hold checks sink connector name before failover resumes (or pauses,
// verb) it: one whose topics.regex does not match the copies its offsets
// were translated to is held STOPPED, named in doc.Held with the command
// that resumes it once the pattern is changed; it reports whether it
// held it.
func (c *failoverCmd) hold(ctx context.Context, rc *connectrest.Client, state *snapshot.Snapshot, rep *standby.Report,
	name, verb string, doc *failoverDocument) bool {
	unread, re := unreadCopies(ctx, rc, state, rep, name)
	if len(unread) == 0 {
		return false
	}
	cmd := fmt.Sprintf(`%s -X PUT "$STANDBY_CONNECT_URL/connectors/%s/%s"`, restore.Curl, restSegment(name), verb)
	if len(c.standby.connectURLs) > 0 {
		base := strings.TrimRight(splitList(c.standby.connectURLs[0])[0], "/")
		cmd = restore.Curl + " -X PUT " + restore.ShellQuote(base+"/connectors/"+restSegment(name)+"/"+verb)
	}
	doc.Held = append(doc.Held, failoverHeld{Connector: name, Regex: re, Unread: unread, Command: cmd})
	return true
}

// holdStopped names a sink connector left STOPPED as the primary had it
// (a planned switchover stops them all there, and the operator resumes
// them on the standby afterwards) whose topics.regex does not match the
// copies its offsets were translated to, as hold does.
func (c *failoverCmd) holdStopped(ctx context.Context, rc *connectrest.Client, state *snapshot.Snapshot, rep *standby.Report,
	name string, doc *failoverDocument) {
	if c.hold(ctx, rc, state, rep, name, "resume", doc) {
		doc.Held[len(doc.Held)-1].Stopped = true
	}
}

// noteHeld says which sink connectors failover held STOPPED, why, and
// what starts them.
func (c *failoverCmd) noteHeld(doc *failoverDocument, out io.Writer) {
	would := "not resumed"
	if c.dryRun {
		would = "would not resume"
	}
	for _, h := range doc.Held {
		head := fmt.Sprintf("%s: sink connector %s, left STOPPED", would, h.Connector)
		if h.Stopped {
			head = fmt.Sprintf("note: sink connector %s, left STOPPED as on the primary", h.Connector)
		}
		fmt.Fprintln(out, wrapNote(fmt.Sprintf("%s: its topics.regex %q does not match %s, "+
			"the standby's copies its offsets were translated to, so it would not read them; change its topics.regex "+
			"on the standby's Connect (PUT /connectors/%s/config) to match them, then start it:",
			head, h.Regex, strings.Join(h.Unread, ", "), restSegment(h.Connector))))
		fmt.Fprintf(out, "    %s\n", h.Command)
	}
}

// countStopped is how many of held were STOPPED on the primary.
func countStopped(held []failoverHeld) int {
	n := 0
	for _, h := range held {
		if h.Stopped {
			n++
		}
	}
	return n
}

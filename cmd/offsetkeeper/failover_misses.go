package main

// This file is what failover says of the sink partitions its translation
// could not carry to the standby: which, and why. They are left as the
// standby has them, and their connectors start from there once resumed.

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/offsetkeeper/offsetkeeper/internal/english"
	"github.com/offsetkeeper/offsetkeeper/restore/standby"
)

// failoverMiss is one group's topic whose partitions failover could not
// translate (failover --output json's untranslated).
type failoverMiss struct {
	Connector  string  `json:"connector"`
	Group      string  `json:"group"`
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
	Why        string  `json:"why"`
}

// missWhy is a translation miss's reason without restore's advice
// (--map-topic, --topic-prefix are restore's flags, not failover's).
func missWhy(why string) string {
	i := strings.Index(why, "--map-topic")
	if i < 0 {
		return why
	}
	if j := strings.LastIndex(why[:i], "; "); j >= 0 {
		return why[:j]
	}
	return why
}

// noteMisses names the sink partitions of rep the translation missed, by
// group and topic, and says what that leaves (would: a dry run).
func (c *failoverCmd) noteMisses(rep *standby.Report, doc *failoverDocument, out io.Writer) {
	if len(rep.Misses) == 0 {
		return
	}
	doc.Untranslated = nil
	for _, m := range rep.Misses {
		why := missWhy(m.Why)
		k := slices.IndexFunc(doc.Untranslated, func(f failoverMiss) bool { return f.Group == m.Group && f.Topic == m.Topic && f.Why == why })
		if k < 0 {
			doc.Untranslated = append(doc.Untranslated, failoverMiss{Connector: m.Connector, Group: m.Group, Topic: m.Topic, Why: why})
			k = len(doc.Untranslated) - 1
		}
		doc.Untranslated[k].Partitions = append(doc.Untranslated[k].Partitions, m.Partition)
	}
	left := "were left"
	if c.dryRun {
		left = "would be left"
	}
	fmt.Fprintln(out, wrapNote(fmt.Sprintf("note: %s could not be translated and %s as the standby has them "+
		"(their connectors start from there once resumed):", plural(len(rep.Misses), "sink partition", "sink partitions"), left)))
	for i, m := range doc.Untranslated {
		if i == 10 {
			fmt.Fprintf(out, "  ... and %d more (--output json has each)\n", len(doc.Untranslated)-i)
			break
		}
		parts := make([]string, len(m.Partitions))
		for j, p := range m.Partitions {
			parts[j] = fmt.Sprint(p)
		}
		line := fmt.Sprintf("%s (connector %s) %s partitions %s: %s", m.Group, m.Connector, m.Topic, strings.Join(parts, ","), m.Why)
		for _, l := range strings.Split(english.Fit(english.Wrap(line, lineWidth-2, "  "), lineWidth-2), "\n") {
			fmt.Fprintf(out, "  %s\n", l)
		}
	}
}

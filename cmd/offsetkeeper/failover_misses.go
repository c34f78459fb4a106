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
	// Fix is the flag that translates them (--map-topic SRC=DST,
	// --topic-prefix P), when the standby holds their copy under another
	// name.
	Fix string `json:"fix,omitempty"`
}

// missWhy is a translation miss's reason without restore's advice (its
// flag, failover's too, goes in the command printed below the misses).
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
			doc.Untranslated = append(doc.Untranslated, failoverMiss{Connector: m.Connector, Group: m.Group, Topic: m.Topic, Why: why, Fix: m.Fix})
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
	c.noteMissFix(doc, out)
}

// missFixes are the flags that translate the misses of doc, each once.
func missFixes(doc *failoverDocument) []string {
	var fixes []string
	for _, m := range doc.Untranslated {
		if m.Fix != "" && !slices.Contains(fixes, m.Fix) {
			fixes = append(fixes, m.Fix)
		}
	}
	return fixes
}

// noteMissFix prints the command that translates the misses a flag
// translates: this failover with the flags added (a run again writes the
// offsets of the sinks it held STOPPED for them, and resumes them).
func (c *failoverCmd) noteMissFix(doc *failoverDocument, out io.Writer) {
	fixes := missFixes(doc)
	if len(fixes) == 0 {
		return
	}
	var sinks []string
	for _, m := range doc.Untranslated {
		if m.Fix != "" && !slices.Contains(sinks, m.Connector) {
			sinks = append(sinks, m.Connector)
		}
	}
	then := "run it so to translate them"
	if !c.dryRun {
		// Stopped as on the primary (a switchover), they are not held:
		// resumed by hand before this runs, they would read from where
		// the standby's groups stand.
		then = fmt.Sprintf("run it again to translate them and write their offsets; resume none of %s before it "+
			"(held STOPPED, or STOPPED as on the primary): it resumes those that ran", strings.Join(sinks, ", "))
	}
	words := c.againCommand(fixes...)
	if words == nil {
		fmt.Fprintln(out, wrapNote(fmt.Sprintf("note: the standby holds their copies under other names: give %s %s (with this run's settings); %s",
			c.by, strings.Join(fixes, " "), then)))
		return
	}
	doc.FixCommand = strings.Join(words, " ")
	fmt.Fprintln(out, wrapNote(fmt.Sprintf("note: the standby holds their copies under other names (%s; --standby-map-topic and "+
		"--standby-topic-prefix are the settings, OFFSETKEEPER_STANDBY_MAP_TOPIC in a daemon's environment); %s:", strings.Join(fixes, " "), then)))
	fmt.Fprintln(out, wrapCommand(words))
}

// holdUntranslated holds sink connector name STOPPED when partitions of
// its translation missed that a flag translates (missFixes): resumed, it
// would read them from where the standby's group stands, not from the
// state's position; it reports whether it held it. The fix command runs
// the failover again, which writes them and resumes it.
func (c *failoverCmd) holdUntranslated(rep *standby.Report, name string, doc *failoverDocument) bool {
	for _, m := range rep.Misses {
		if m.Connector == name && m.Fix != "" {
			doc.HeldUntranslated = append(doc.HeldUntranslated, name)
			return true
		}
	}
	return false
}

// noteHeldUntranslated names the sinks holdUntranslated held.
func (c *failoverCmd) noteHeldUntranslated(doc *failoverDocument, out io.Writer) {
	if len(doc.HeldUntranslated) == 0 {
		return
	}
	would := "not resumed"
	if c.dryRun {
		would = "would not resume"
	}
	fmt.Fprintln(out, wrapNote(fmt.Sprintf("%s: %s, left STOPPED: partitions of their topics could not be translated "+
		"(above), and a flag translates them: resumed, they would read those from where the standby's groups stand",
		would, plural(len(doc.HeldUntranslated), "sink connector", "sink connectors")+" "+strings.Join(doc.HeldUntranslated, ", "))))
}

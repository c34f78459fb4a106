package restore

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"

	"github.com/offsetkeeper/offsetkeeper/internal/connectjson"

	"github.com/offsetkeeper/offsetkeeper/internal/english"
)

// Print writes the plan for a person to read: a header, then per connector
// a line "connector <name> (<type>, <state>)" (with "; REST <state>" when
// ConnectorPlan.REST is set, and ": unchanged, running, left alone" for a
// busy connector it writes nothing for, see ConnectorPlan.LeftAlone) and
// one line per offset that changes, with old -> new values; unchanged
// offsets are counted, not listed. Warnings and the totals line
// "plan: N source writes, M tombstones, K sink commits, J sink deletions"
// (singular for 1) end it.
func (p *Plan) Print(w io.Writer) error {
	// Buffered: a plan can list hundreds of thousands of keys.
	bw := bufio.NewWriterSize(w, 64<<10)
	ew := &errWriter{w: bw}
	s := p.Snapshot
	// Within 120 columns: the ID is the time the snapshot was taken, and
	// the state at a moment is said on the line before (its moment).
	what := "snapshot " + s.ID
	if s.Reason == journal.ReasonAt {
		what = "the state at " + s.CreatedAt.UTC().Format("2006-01-02T15:04:05.000Z07:00")
	}
	into := "into its cluster " + p.ClusterID
	if s.ClusterID != p.ClusterID {
		into = "of cluster " + orNone(s.ClusterID) + " into cluster " + p.ClusterID
	}
	ew.printf("%s\n", english.Wrap("restore plan: "+what+" "+into+", "+plural(len(p.Connectors), "connector", "connectors"), 120, "  "))
	for _, cp := range p.Connectors {
		rest, alone := "", ""
		if cp.REST != "" {
			rest = "; REST " + cp.REST
		}
		if a := cp.LeftAlone(); a != "" {
			alone = ": " + a
		}
		ew.printf("connector %s (%s, %s%s)%s\n", cp.Name, cp.Type, cp.State(), rest, alone)
		if sp := cp.Source; sp != nil {
			unchanged := 0
			var line []byte
			for i := range sp.changes {
				c := &sp.changes[i]
				if c.action == actUnchanged {
					unchanged++
					continue
				}
				// One line per key written, appended in place.
				line = appendSourceLine(line[:0], sp.change(c))
				line = append(line, '\n')
				ew.write(line)
			}
			switch {
			case sp.Len() == 0:
				ew.printf("  source  no keys, here or in the snapshot (target %s)\n", sp.Target)
			case unchanged > 0:
				ew.printf("  source  unchanged %s\n", plural(unchanged, "key", "keys"))
			}
		}
		if sp := cp.Sink; sp != nil {
			unchanged, writes := 0, 0
			for _, ch := range sp.Changes() {
				where := fmt.Sprintf("%s/%d", ch.Topic, ch.Partition)
				switch ch.Action {
				case Unchanged:
					unchanged++
				case Changed:
					writes++
					ew.printf("  sink  %s  %s  changed %d -> %d (%s)\n", sp.Group, where, ch.Old, ch.New, direction(ch.Old, ch.New))
				case Added:
					writes++
					ew.printf("  sink  %s  %s  added %d\n", sp.Group, where, ch.New)
				case Removed:
					writes++
					ew.printf("  sink  %s  %s  removed %d (offset deleted)\n", sp.Group, where, ch.Old)
				case Skipped:
					ew.printf("  sink  %s  %s  skipped %d (%s)\n", sp.Group, where, ch.New, ch.Reason)
				}
			}
			switch {
			case sp.Len() == 0:
				ew.printf("  sink  %s  no offsets, here or in the snapshot\n", sp.Group)
			case unchanged > 0:
				ew.printf("  sink  %s  unchanged %s\n", sp.Group, plural(unchanged, "offset", "offsets"))
			}
			if !sp.Exists && writes > 0 {
				ew.printf("  sink  %s  the group does not exist here: the commit creates it\n", sp.Group)
			}
		}
	}
	// Notes and warnings are wrapped to fit 120 columns.
	for _, n := range p.Notes {
		ew.printf("%s\n", english.Wrap("note: "+n, 120, "  "))
	}
	for _, warn := range p.Warnings {
		if cmds := p.warnCmds[warn]; len(cmds) > 0 {
			ew.printf("%s\n", english.Advice("warning: "+warn, 120, cmds))
			continue
		}
		ew.printf("%s\n", english.Wrap("warning: "+warn, 120, "  "))
	}
	for _, o := range p.OpenRestores {
		if !o.Written {
			ew.printf("%s\n", english.Wrap("warning: "+openRestoreWarning(o), 120, "  "))
		}
	}
	c := p.Counts()
	ew.printf("plan: %s", c)
	if c.SinkSkipped > 0 {
		ew.printf(", %s skipped", plural(c.SinkSkipped, "sink offset", "sink offsets"))
	}
	ew.printf("\n")
	if ew.err == nil {
		ew.err = bw.Flush()
	}
	return ew.err
}

// openRestoreWarning warns of another restore's transaction on a topic the
// plan does not write.
func openRestoreWarning(o OpenRestore) string {
	return fmt.Sprintf("another restore's transaction %q is %s on offsets topic %q, which this restore does not write: left alone (restore --force fences it)", o.TxnID, o.State, o.Topic)
}

// String is "N source writes, M tombstones, K sink commits, J sink
// deletions", singular for 1.
func (c Counts) String() string {
	return plural(c.SourceWrites, "source write", "source writes") + ", " + plural(c.Tombstones, "tombstone", "tombstones") + ", " +
		plural(c.SinkCommits, "sink commit", "sink commits") + ", " + plural(c.SinkDeletions, "sink deletion", "sink deletions")
}

// plural returns "1 key" or "2 keys".
func plural(n int, one, many string) string { return english.Count(n, one, many) }

func direction(old, new int64) string {
	if new > old {
		return "forward"
	}
	return "backward"
}

func orNone(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

// DisplayKey shows a source key by its partition object, exactly as its
// bytes hold it; a key that does not parse is quoted.
func DisplayKey(key []byte) string {
	if _, raw, ok := connectjson.PlainKey(key); ok {
		return string(raw) // printable ASCII: displayValue would return it as it is
	}
	if _, _, raw, err := connectjson.ParseKey(key); err == nil {
		return displayValue(raw)
	}
	return strconv.Quote(string(key))
}

// appendKey appends DisplayKey(key) to dst.
func appendKey(dst, key []byte) []byte {
	if _, raw, ok := connectjson.PlainKey(key); ok {
		return append(dst, raw...)
	}
	return append(dst, DisplayKey(key)...)
}

// appendValue appends displayValue(b) to dst.
func appendValue(dst, b []byte) []byte {
	if !connectjson.PrintableASCII(b) {
		return append(dst, displayValue(b)...)
	}
	if b == nil {
		return append(dst, "null"...)
	}
	return append(dst, b...) // printable ASCII
}

// displayValue shows bytes as they are when they are printable UTF-8,
// quoted otherwise; nil is "null" (a tombstone).
func displayValue(b []byte) string {
	if b == nil {
		return "null"
	}
	if !utf8.Valid(b) {
		return strconv.Quote(string(b))
	}
	for _, r := range string(b) {
		if !unicode.IsPrint(r) && r != ' ' {
			return strconv.Quote(string(b))
		}
	}
	return string(b)
}

// errWriter keeps the first write error. What it writes is text for a
// person: each line wider than 120 columns is broken (english.Fit), as a
// JDBC or S3 source's offset makes a plan's or a diff's line; the whole
// value is in the JSON output.
type errWriter struct {
	w   io.Writer
	err error
	fit []byte // a wide line broken, reused: a plan can have a wide line per key
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		e.write(fmt.Appendf(nil, format, args...))
	}
}

func (e *errWriter) write(b []byte) {
	if e.err != nil {
		return
	}
	if len(b) > lineWidth+1 {
		e.fit = english.AppendFit(e.fit[:0], b, lineWidth)
		b = e.fit
	}
	_, e.err = e.w.Write(b)
}

// lineWidth is the width of the text output.
const lineWidth = 120

// appendSourceLine appends the plan's line for one source key written:
// "  source  <topic>/<partition>  <key>  <action>  ...", without its
// newline.
func appendSourceLine(line []byte, ch SourceChange) []byte {
	line = append(line, "  source  "...)
	if ch.Partition == snapshot.NoPartition {
		line = append(line, snapshot.Where(ch.Topic, ch.Partition)...) // captured through REST
	} else {
		line = append(line, ch.Topic...)
		line = append(line, '/')
		line = strconv.AppendInt(line, int64(ch.Partition), 10)
	}
	line = append(line, "  "...)
	line = appendKey(line, ch.Key)
	switch ch.Action {
	case Changed:
		line = append(line, "  changed  "...)
		line = appendValue(line, ch.Old)
		line = append(line, " -> "...)
		line = appendValue(line, ch.New)
		if ch.Stray {
			line = append(line, " (the snapshot's copy off its murmur2 partition: restored on this partition too)"...)
		}
	case Added:
		line = append(line, "  added  "...)
		line = appendValue(line, ch.New)
	case Removed:
		line = append(line, "  removed  "...)
		line = appendValue(line, ch.Old)
		line = append(line, " -> tombstone"...)
		if ch.Stray {
			line = append(line, " (a copy off its murmur2 partition, not in the snapshot: tombstoned on this partition)"...)
		}
	}
	if ch.From != "" && ch.Action != Removed {
		line = append(line, "  (from "...)
		line = append(line, ch.From...)
		line = append(line, " in the snapshot)"...)
	}
	return line
}

package drill

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// textWidth is the most columns a line of the text report takes; the
// whole of each value is in the JSON report.
const textWidth = 120

// shownFailures is how many failures per check the text report lists.
const shownFailures = 10

// PrintText writes the report as text, one screen for a passing drill:
// what was drilled, one line per check, RTO and RPO, and each failure.
func PrintText(w io.Writer, r *Report) {
	line := func(format string, args ...any) { fmt.Fprintln(w, clip(fmt.Sprintf(format, args...))) }
	state := describeState(r.State)
	if r.State.SHA256 != "" {
		state += " (sha256 " + r.State.SHA256[:min(16, len(r.State.SHA256))] + "…)"
	}
	line("drill %s: %s", r.ID, strings.ToUpper(r.Result))
	if r.ClusterID != "" {
		state += ", cluster " + r.ClusterID
	}
	line("  state:   %s", state)
	if r.State.Description != "" {
		line("           %s", r.State.Description)
	}
	c := r.Counts
	line("  holds:   %d connectors, %d source keys, %d tombstones, %d unowned keys, %d sink groups (%d offsets)",
		c.Connectors, c.SourceKeys, c.Tombstones, c.Unowned, c.SinkGroups, c.SinkOffsets)
	for _, ch := range r.Checks {
		mark := map[string]string{Passed: "ok  ", Failed: "FAIL", Skipped: "skip"}[ch.Result]
		line("  %s %-11s %6s  %s", mark, ch.Name, ch.Duration, ch.Summary)
		for i, f := range ch.Failures {
			if i == shownFailures {
				line("         ... and %d more (--output json lists them)", len(ch.Failures)-shownFailures)
				break
			}
			line("       - %s", f)
		}
		for _, n := range ch.Notes {
			line("       note: %s", n)
		}
	}
	line("  RTO:     %s to restore %d records and %d groups (%s)", r.RTO.Restore, r.RTO.Records, r.RTO.Groups, "restore.Run: plan, write, verify")
	rpo := "  RPO:     "
	if r.RPO.JournalLag != nil {
		rpo += "journal lag " + r.RPO.JournalLag.String() + "; "
	} else {
		rpo += "no journal; "
	}
	if r.RPO.NewestFullAge != nil {
		rpo += fmt.Sprintf("newest full snapshot %s is %s old", r.RPO.NewestFull, time.Duration(*r.RPO.NewestFullAge).Round(time.Second))
	} else {
		rpo += "no full snapshot stored"
	}
	line("%s", rpo)
	scratch := "scratch cluster " + r.Scratch
	if r.Scratch == "" {
		scratch = "no scratch cluster started"
	}
	line("  took %s; %s, %s", r.Duration, r.ToolVersion, scratch)
}

// clip cuts s to textWidth columns.
func clip(s string) string {
	if utf8.RuneCountInString(s) <= textWidth {
		return s
	}
	r := []rune(s)
	return string(r[:textWidth-1]) + "…"
}

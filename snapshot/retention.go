package snapshot

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultUndoWithin is how long retention keeps scoped and undo snapshots
// unless told otherwise (Policy.UndoWithin): 30 days.
const DefaultUndoWithin = 30 * 24 * time.Hour

// Policy says which snapshots retention keeps. A snapshot kept by any rule
// stays. The zero Policy has no rules and keeps everything.
//
// The count and age rules (Last, Hourly, Daily, Weekly, Monthly, Within)
// judge full snapshots only (KindFull): a scoped or undo snapshot holds some
// connectors, not the cluster, and must never stand in for a backup of the
// whole cluster nor push one out. Scoped and undo snapshots follow
// UndoWithin alone.
//
// The count rules are 0 when unset and negative for "unlimited". Hourly to
// Monthly keep the newest full snapshot of each of the N most recent UTC
// hours, days, ISO 8601 weeks and months that have one.
type Policy struct {
	// Last keeps the N newest full snapshots.
	Last int
	// Hourly, Daily, Weekly and Monthly keep the newest full snapshot in
	// each of the N most recent UTC hours, days, ISO 8601 weeks and months
	// that hold one.
	Hourly, Daily, Weekly, Monthly int
	// Within keeps every full snapshot created less than Within before
	// now. Zero disables the rule.
	Within time.Duration
	// UndoWithin keeps every scoped and undo snapshot created less than
	// UndoWithin before now; older ones are removed. Zero keeps none (when
	// the policy has another rule). The CLI's default is DefaultUndoWithin.
	UndoWithin time.Duration
}

// fullRules reports whether p has a rule for full snapshots.
func (p Policy) fullRules() bool {
	return p.Last != 0 || p.Hourly != 0 || p.Daily != 0 || p.Weekly != 0 || p.Monthly != 0 || p.Within > 0
}

// Empty reports whether p has no rules, in which case it keeps everything.
func (p Policy) Empty() bool { return !p.fullRules() && p.UndoWithin <= 0 }

// String describes the policy, e.g. "last 3, daily 7, within 2d, undo
// within 30d"; "none" for the empty policy.
func (p Policy) String() string {
	var parts []string
	for _, r := range []struct {
		name string
		n    int
	}{{"last", p.Last}, {"hourly", p.Hourly}, {"daily", p.Daily}, {"weekly", p.Weekly}, {"monthly", p.Monthly}} {
		switch {
		case r.n < 0:
			parts = append(parts, r.name+" unlimited")
		case r.n > 0:
			parts = append(parts, r.name+" "+strconv.Itoa(r.n))
		}
	}
	if p.Within > 0 {
		parts = append(parts, "within "+FormatDuration(p.Within))
	}
	if p.UndoWithin > 0 {
		parts = append(parts, "undo within "+FormatDuration(p.UndoWithin))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// Reasons given by ApplyPolicy.
const (
	reasonNoPolicy     = "no retention policy"
	reasonNewestFull   = "newest full snapshot"
	reasonNoFull       = "newest snapshot, and the cluster has no full one"
	reasonNoFullRule   = "no rule for full snapshots"
	reasonNoRule       = "no rule keeps it"
	reasonUndoDisabled = "scoped and undo snapshots are not kept (keep-undo-within 0)"
)

// ApplyPolicy decides which snapshots p keeps and which it removes, as of
// now. It is a pure function: it reads nothing but its arguments and
// changes none of them. A snapshot's kind is its Info.Kind, or, when that
// is empty, what its Reason and Scope say (see Info.Kind).
//
// Snapshots are judged per ClusterID, as if each cluster had a store of its
// own: the rules of one cluster never remove another's snapshots. Within a
// cluster the newest full snapshot is always kept, whatever p says, so
// retention never leaves a cluster without a backup of all of it; a
// cluster that has no full snapshot keeps its newest snapshot.
//
// keep and remove are sorted oldest first, like [Store.List];
// reasons maps every snapshot ID, kept or removed, to why. With an empty
// Policy everything is kept.
func ApplyPolicy(snaps []Info, p Policy, now time.Time) (keep, remove []Info, reasons map[string][]string) {
	sorted := slices.Clone(snaps)
	slices.SortStableFunc(sorted, func(a, b Info) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	reasons = make(map[string][]string, len(sorted))
	if p.Empty() {
		for _, s := range sorted {
			reasons[s.ID] = []string{reasonNoPolicy}
		}
		return sorted, nil, reasons
	}

	// Newest first, per cluster.
	byCluster := map[string][]int{}
	var clusters []string
	for i := len(sorted) - 1; i >= 0; i-- {
		c := sorted[i].ClusterID
		if _, ok := byCluster[c]; !ok {
			clusters = append(clusters, c)
		}
		byCluster[c] = append(byCluster[c], i)
	}
	kept := make([]bool, len(sorted))
	for _, c := range clusters {
		applyCluster(sorted, byCluster[c], p, now, kept, reasons)
	}
	for i, s := range sorted {
		if kept[i] {
			keep = append(keep, s)
		} else {
			remove = append(remove, s)
		}
	}
	return keep, remove, reasons
}

// bucket is one counting rule: it keeps the newest full snapshot of each
// of its next count distinct keys.
type bucket struct {
	count  int // remaining; negative is unlimited
	reason string
	key    func(t time.Time, n int) int
	last   int
	seen   bool
}

// fullBuckets returns the counting rules of p, in the order their reasons
// are given.
func fullBuckets(p Policy) []bucket {
	return []bucket{
		{count: p.Last, reason: "last snapshot", key: func(_ time.Time, n int) int { return n }},
		{count: p.Hourly, reason: "hourly snapshot", key: func(t time.Time, _ int) int {
			return t.Year()*1_000_000 + int(t.Month())*10_000 + t.Day()*100 + t.Hour()
		}},
		{count: p.Daily, reason: "daily snapshot", key: func(t time.Time, _ int) int {
			return t.Year()*10_000 + int(t.Month())*100 + t.Day()
		}},
		{count: p.Weekly, reason: "weekly snapshot", key: func(t time.Time, _ int) int {
			y, w := t.ISOWeek()
			return y*100 + w
		}},
		{count: p.Monthly, reason: "monthly snapshot", key: func(t time.Time, _ int) int {
			return t.Year()*100 + int(t.Month())
		}},
	}
}

// applyCluster applies p to the snapshots sorted[idx...], given newest
// first: the full ones through the count and age rules, the scoped and
// undo ones through UndoWithin.
func applyCluster(sorted []Info, idx []int, p Policy, now time.Time, kept []bool, reasons map[string][]string) {
	buckets := fullBuckets(p)
	hasFull := slices.ContainsFunc(idx, func(i int) bool { return sorted[i].kind() == KindFull })
	full := 0 // full snapshots seen so far, newest first
	for n, i := range idx {
		s := sorted[i]
		var why []string
		if s.kind() != KindFull {
			why = undoReasons(s, p, now)
			if n == 0 && !hasFull {
				why = append([]string{reasonNoFull}, why...)
			}
		} else {
			why = fullReasons(s, p, now, buckets, full)
			full++
		}
		if len(why) > 0 {
			kept[i] = true
			reasons[s.ID] = why
		} else {
			reasons[s.ID] = []string{removeReason(s, p)}
		}
	}
}

// fullReasons returns why the full snapshot s, the n-th newest full one of
// its cluster, is kept; none when it is not. It advances the buckets.
func fullReasons(s Info, p Policy, now time.Time, buckets []bucket, n int) []string {
	var why []string
	if n == 0 {
		why = append(why, reasonNewestFull)
	}
	if !p.fullRules() {
		return append(why, reasonNoFullRule)
	}
	t := s.CreatedAt.UTC()
	for b := range buckets {
		bk := &buckets[b]
		if bk.count == 0 {
			continue
		}
		k := bk.key(t, n)
		if bk.seen && k == bk.last {
			continue
		}
		bk.seen, bk.last = true, k
		if bk.count > 0 {
			bk.count--
		}
		why = append(why, bk.reason)
	}
	if p.Within > 0 && now.Sub(s.CreatedAt) < p.Within {
		why = append(why, "within "+FormatDuration(p.Within))
	}
	return why
}

// undoReasons returns why the scoped or undo snapshot s is kept; none when
// it is not.
func undoReasons(s Info, p Policy, now time.Time) []string {
	if p.UndoWithin > 0 && now.Sub(s.CreatedAt) < p.UndoWithin {
		return []string{s.kind() + " within " + FormatDuration(p.UndoWithin)}
	}
	return nil
}

// removeReason says why s is removed.
func removeReason(s Info, p Policy) string {
	if s.kind() == KindFull {
		return reasonNoRule
	}
	if p.UndoWithin <= 0 {
		return reasonUndoDisabled
	}
	return s.kind() + " older than " + FormatDuration(p.UndoWithin) + " (keep-undo-within)"
}

// ParseDuration parses a retention duration: a Go duration ("36h",
// "90m") or one using d for 24-hour days and w for weeks, alone or before
// Go units ("7d", "2w", "1d12h"). Negative durations are rejected.
func ParseDuration(s string) (time.Duration, error) {
	rest := strings.TrimSpace(s)
	if rest == "" {
		return 0, fmt.Errorf("parse duration %q: empty", s)
	}
	var total time.Duration
	for _, u := range []struct {
		suffix byte
		unit   time.Duration
	}{{'w', 7 * 24 * time.Hour}, {'d', 24 * time.Hour}} {
		i := strings.IndexByte(rest, u.suffix)
		if i < 0 {
			continue
		}
		n, err := strconv.ParseUint(rest[:i], 10, 32)
		if err != nil {
			return 0, fmt.Errorf("parse duration %q: bad number before %q", s, u.suffix)
		}
		total += time.Duration(n) * u.unit
		rest = rest[i+1:]
	}
	if rest != "" {
		d, err := time.ParseDuration(rest)
		if err != nil {
			return 0, fmt.Errorf("parse duration %q: %w", s, err)
		}
		if d < 0 {
			return 0, fmt.Errorf("parse duration %q: negative", s)
		}
		total += d
	}
	return total, nil
}

// FormatDuration formats d with whole days as "d" and the rest as Go
// formats it, trimming zero units: 48h → "2d", 36h → "1d12h", 90m → "1h30m".
func FormatDuration(d time.Duration) string {
	if d <= 0 {
		return d.String()
	}
	var b strings.Builder
	if days := d / (24 * time.Hour); days > 0 {
		b.WriteString(strconv.FormatInt(int64(days), 10) + "d")
		d -= days * 24 * time.Hour
	}
	if d > 0 {
		s := d.String()
		if strings.HasSuffix(s, "m0s") {
			s = strings.TrimSuffix(s, "0s")
		}
		if strings.HasSuffix(s, "h0m") {
			s = strings.TrimSuffix(s, "0m")
		}
		b.WriteString(s)
	}
	return b.String()
}

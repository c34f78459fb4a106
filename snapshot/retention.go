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

// DefaultManualWithin is how long retention keeps manual full snapshots
// (Policy.ManualWithin) unless told otherwise: 30 days.
const DefaultManualWithin = 30 * 24 * time.Hour

// DefaultResetWithin is how long retention keeps what undoing a reset the
// journal caught needs (Policy.ResetWithin) unless told otherwise: 30 days.
const DefaultResetWithin = 30 * 24 * time.Hour

// Policy says which snapshots retention keeps. A snapshot kept by any rule
// stays. The zero Policy has no rules and keeps everything.
//
// The count rules (Last, Hourly, Daily, Weekly, Monthly) count scheduled
// full snapshots only (KindFull, not ReasonManual): a scoped or undo
// snapshot holds some connectors, not the cluster, and must never stand in
// for a backup of the whole cluster nor push one out, and a manual full
// snapshot (taken before an incident, by hand) must not push a scheduled
// one out either. Manual full snapshots follow ManualWithin, scoped and
// undo snapshots UndoWithin. Within keeps every full snapshot.
//
// Whatever the rules, retention keeps a pinned snapshot (Info.Pin), the
// base of the newest journal epoch (the one a daemon writes), and for
// every reset the journal caught less than ResetWithin ago the snapshot
// that restore --at the moment before it starts from (see Journal).
//
// The count rules are 0 when unset and negative for "unlimited". Hourly to
// Monthly keep the newest full snapshot of each of the N most recent UTC
// hours, days, ISO 8601 weeks and months that have one.
type Policy struct {
	// Last keeps the N newest scheduled full snapshots.
	Last int
	// Hourly, Daily, Weekly and Monthly keep the newest scheduled full
	// snapshot in each of the N most recent UTC hours, days, ISO 8601
	// weeks and months that hold one.
	Hourly, Daily, Weekly, Monthly int
	// Within keeps every full snapshot created less than Within before
	// now. Zero disables the rule.
	Within time.Duration
	// UndoWithin keeps every scoped and undo snapshot created less than
	// UndoWithin before now; older ones are removed. Zero keeps none (when
	// the policy has another rule). The CLI's default is DefaultUndoWithin.
	UndoWithin time.Duration
	// ManualWithin keeps every manual full snapshot created less than
	// ManualWithin before now; older ones are removed unless another rule
	// keeps them. The CLI's default is DefaultManualWithin.
	ManualWithin time.Duration
	// ResetWithin keeps, for every reset in Journal.Resets that happened
	// less than ResetWithin before now, what restore --at its moment
	// before reads. The CLI's default is DefaultResetWithin.
	ResetWithin time.Duration
}

// Journal is what retention knows of the store's journal: the epochs'
// coverage, oldest first (as Journal.Coverage gives it), and the
// resets the journal caught (Journal.Events). The zero Journal is a store
// without a journal.
type Journal struct {
	Coverage []Coverage
	Resets   []Event
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
	for _, r := range []struct {
		name string
		d    time.Duration
	}{{"undo", p.UndoWithin}, {"manual", p.ManualWithin}, {"reset", p.ResetWithin}} {
		if r.d > 0 {
			parts = append(parts, r.name+" within "+FormatDuration(r.d))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// Reasons given by ApplyPolicy.
const (
	reasonNoPolicy       = "no retention policy"
	reasonNewestFull     = "newest full snapshot"
	reasonNoFull         = "newest snapshot, and the cluster has no full one"
	reasonNoFullRule     = "no rule for full snapshots"
	reasonNoRule         = "no rule keeps it"
	reasonUndoDisabled   = "scoped and undo snapshots are not kept (keep-undo-within 0)"
	reasonManualDisabled = "manual full snapshots are not kept (keep-manual-within 0)"
	reasonPinned         = "pinned"
	reasonEpochBase      = "base of the newest journal epoch"
)

// ApplyPolicy decides which snapshots p keeps and which it removes, as of
// now, given what j says of the journal. It is a pure function: it reads
// nothing but its arguments and changes none of them. A snapshot's kind is
// its Info.Kind, or, when that is empty, what its Reason and Scope say
// (see Info.Kind); it is pinned when Info.Pin is set (see Pins.Snapshots).
//
// Snapshots are judged per ClusterID, as if each cluster had a store of its
// own: the rules of one cluster never remove another's snapshots. Within a
// cluster the newest full snapshot is always kept, whatever p says, so
// retention never leaves a cluster without a backup of all of it; a
// cluster that has no full snapshot keeps its newest snapshot. Pins, the
// newest journal epoch's base and young resets keep snapshots of any
// cluster (see Policy).
//
// keep and remove are sorted oldest first, like [Store.List];
// reasons maps every snapshot ID, kept or removed, to why. With an empty
// Policy everything is kept.
func ApplyPolicy(snaps []Info, j Journal, p Policy, now time.Time) (keep, remove []Info, reasons map[string][]string) {
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
	held := heldReasons(sorted, j, p, now)

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
		if why := held[s.ID]; len(why) > 0 {
			if !kept[i] {
				reasons[s.ID] = nil
			}
			kept[i] = true
			reasons[s.ID] = append(why, reasons[s.ID]...)
		}
		if kept[i] {
			keep = append(keep, s)
		} else {
			remove = append(remove, s)
		}
	}
	return keep, remove, reasons
}

// heldReasons returns, by snapshot ID, the rules that keep a snapshot
// whatever its age and the count rules: its pin, being the base of the
// newest journal epoch, and being what undoing a young reset needs.
func heldReasons(sorted []Info, j Journal, p Policy, now time.Time) map[string][]string {
	held := map[string][]string{}
	add := func(id, why string) {
		if !slices.Contains(held[id], why) {
			held[id] = append(held[id], why)
		}
	}
	for _, s := range sorted {
		if s.Pin != nil {
			why := reasonPinned
			if s.Pin.Note != "" {
				why += " (" + s.Pin.Note + ")"
			}
			add(s.ID, why)
		}
	}
	byID := make(map[string]bool, len(sorted))
	for _, s := range sorted {
		byID[s.ID] = true
	}
	if n := len(j.Coverage); n > 0 && byID[j.Coverage[n-1].Epoch] {
		// Journal.Prune never removes the newest epoch (a daemon may be
		// writing it): its base stays with it.
		add(j.Coverage[n-1].Epoch, reasonEpochBase)
	}
	if p.ResetWithin <= 0 {
		return held
	}
	for _, ev := range j.Resets {
		if now.Sub(ev.Time) >= p.ResetWithin {
			continue
		}
		why := "before a reset of " + ev.Connector
		if ev.Group != "" && ev.Group != ev.Connector {
			why += " (group " + ev.Group + ")"
		}
		why += " at " + FmtTime(ev.Time)
		if id, _ := undoBase(ev.Before, sorted, j.Coverage, now); id != "" {
			add(id, why)
		}
		// The epoch that recorded the reset, so that events still lists it.
		if byID[ev.Epoch] {
			add(ev.Epoch, why)
		}
	}
	return held
}

// undoBase returns the snapshot a state at moment at starts from, as
// Store.StateAt picks it from snaps and cov: the base of the newest epoch
// whose base is stored and whose journal covers at (exact is then true),
// else the newest full snapshot at or before at; "" when there is none.
func undoBase(at time.Time, snaps []Info, cov []Coverage, now time.Time) (id string, exact bool) {
	byID := make(map[string]Info, len(snaps))
	for _, s := range snaps {
		byID[s.ID] = s
	}
	for i := len(cov) - 1; i >= 0; i-- {
		c := cov[i]
		base, ok := byID[c.Epoch]
		if !ok || base.CreatedAt.After(at) {
			continue
		}
		to := c.To
		if i == len(cov)-1 && c.Broken == "" && now.Sub(c.To) <= JournalLive {
			to = now // the newest epoch, still being written
		}
		if !at.After(to) {
			return c.Epoch, true
		}
	}
	for i := len(snaps) - 1; i >= 0; i-- {
		if s := snaps[i]; s.EffectiveKind() == KindFull && !s.CreatedAt.After(at) {
			return s.ID, false
		}
	}
	return "", false
}

// UndoGone says why restore --at moment at is no longer possible with
// the snapshots snaps and the journal coverage cov (snaps sorted oldest
// first, as List gives them), or "" when it is: a journal epoch whose base
// is stored covers at, or at is before every such epoch and a full
// snapshot at or before it is stored (restore --at then falls back to it).
func UndoGone(at time.Time, snaps []Info, cov []Coverage, now time.Time) string {
	id, exact := undoBase(at, snaps, cov, now)
	if exact {
		return ""
	}
	byID := make(map[string]bool, len(snaps))
	for _, s := range snaps {
		byID[s.ID] = true
	}
	for _, c := range cov {
		if byID[c.Epoch] && c.From.Before(at) {
			return "the journal no longer covers " + FmtTime(at) + " (its snapshot and epoch were removed)"
		}
	}
	if id == "" {
		return "no full snapshot at or before " + FmtTime(at) + " is stored"
	}
	return ""
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

// Manual reports whether s is a manual full snapshot: taken by the
// snapshot command, not by the daemon's schedule.
func (i Info) Manual() bool { return i.EffectiveKind() == KindFull && i.Reason == ReasonManual }

// applyCluster applies p to the snapshots sorted[idx...], given newest
// first: the scheduled full ones through the count and age rules, the
// manual full ones through ManualWithin and Within, the scoped and undo
// ones through UndoWithin.
func applyCluster(sorted []Info, idx []int, p Policy, now time.Time, kept []bool, reasons map[string][]string) {
	buckets := fullBuckets(p)
	hasFull := slices.ContainsFunc(idx, func(i int) bool { return sorted[i].EffectiveKind() == KindFull })
	full, scheduled := 0, 0 // full and scheduled full snapshots seen so far, newest first
	for n, i := range idx {
		s := sorted[i]
		var why []string
		switch {
		case s.EffectiveKind() != KindFull:
			why = undoReasons(s, p, now)
			if n == 0 && !hasFull {
				why = append([]string{reasonNoFull}, why...)
			}
		case s.Manual():
			why = manualReasons(s, p, now, full)
			full++
		default:
			why = fullReasons(s, p, now, buckets, full, scheduled)
			full++
			scheduled++
		}
		if len(why) > 0 {
			kept[i] = true
			reasons[s.ID] = why
		} else {
			reasons[s.ID] = []string{removeReason(s, p)}
		}
	}
}

// fullReasons returns why the scheduled full snapshot s, the full-th
// newest full one and the n-th newest scheduled one of its cluster, is
// kept; none when it is not. It advances the buckets.
func fullReasons(s Info, p Policy, now time.Time, buckets []bucket, full, n int) []string {
	var why []string
	if full == 0 {
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

// manualReasons returns why the manual full snapshot s, the full-th
// newest full one of its cluster, is kept; none when it is not. It takes
// no slot of a count rule.
func manualReasons(s Info, p Policy, now time.Time, full int) []string {
	var why []string
	if full == 0 {
		why = append(why, reasonNewestFull)
	}
	if !p.fullRules() {
		return append(why, reasonNoFullRule)
	}
	if p.ManualWithin > 0 && now.Sub(s.CreatedAt) < p.ManualWithin {
		why = append(why, "manual within "+FormatDuration(p.ManualWithin))
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
		return []string{s.EffectiveKind() + " within " + FormatDuration(p.UndoWithin)}
	}
	return nil
}

// removeReason says why s is removed.
func removeReason(s Info, p Policy) string {
	switch {
	case s.Manual() && p.ManualWithin <= 0:
		return reasonManualDisabled
	case s.Manual():
		return "manual older than " + FormatDuration(p.ManualWithin) + " (keep-manual-within)"
	case s.EffectiveKind() == KindFull:
		return reasonNoRule
	case p.UndoWithin <= 0:
		return reasonUndoDisabled
	}
	return s.EffectiveKind() + " older than " + FormatDuration(p.UndoWithin) + " (keep-undo-within)"
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

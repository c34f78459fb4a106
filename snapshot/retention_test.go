package snapshot

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// at parses an RFC 3339 time for test tables.
func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// series returns n snapshots of cluster, the first at start, then every
// step, all with the given reason.
func series(cluster, reason string, start time.Time, step time.Duration, n int) []Info {
	var out []Info
	for i := range n {
		t := start.Add(time.Duration(i) * step)
		out = append(out, info(cluster, reason, t))
	}
	return out
}

func info(cluster, reason string, t time.Time) Info {
	return Info{
		ID:        t.UTC().Format("20060102T150405.000000Z") + "-" + fmt.Sprintf("%06x", len(cluster)*7+len(reason)),
		CreatedAt: t,
		Reason:    reason,
		ClusterID: cluster,
	}
}

// scoped is a manual snapshot of cluster at t limited to connectors, as
// snapshot --connector takes them; with reason undo, an undo snapshot.
func scoped(cluster, reason string, t time.Time, connectors ...string) Info {
	i := info(cluster, reason, t)
	i.ID = i.ID[:len(i.ID)-1] + "s"
	i.Scope = connectors
	return i
}

func concat(parts ...[]Info) []Info { return slices.Concat(parts...) }

const (
	sched = ReasonScheduled
	undo  = ReasonUndo
	man   = ReasonManual
)

// policyCases are the golden cases: each writes testdata/retention/<name>.golden.
var policyCases = []struct {
	name    string
	policy  Policy
	now     time.Time
	snaps   []Info
	journal Journal
}{
	{
		name:   "empty-policy-keeps-all",
		policy: Policy{},
		now:    at("2026-03-10T12:00:00Z"),
		snaps:  series("c1", sched, at("2026-03-10T08:00:00Z"), time.Hour, 4),
	},
	{
		// The acceptance case: @every 1s with --keep-last 3.
		name:   "keep-last-3",
		policy: Policy{Last: 3},
		now:    at("2026-03-10T12:00:10Z"),
		snaps:  series("c1", sched, at("2026-03-10T12:00:00Z"), time.Second, 8),
	},
	{
		name:   "hourly-4",
		policy: Policy{Hourly: 4},
		now:    at("2026-03-10T14:00:00Z"),
		snaps:  series("c1", sched, at("2026-03-10T08:10:00Z"), 20*time.Minute, 18),
	},
	{
		// Buckets are UTC days even when CreatedAt carries another zone:
		// 2026-03-11T04:30+05:00 is 2026-03-10T23:30Z, the newest of the 10th.
		name:   "daily-3-utc-buckets",
		policy: Policy{Daily: 3},
		now:    at("2026-03-14T00:00:00Z"),
		snaps: concat(
			series("c1", sched, at("2026-03-09T03:00:00Z"), 6*time.Hour, 16),
			[]Info{info("c1", sched, at("2026-03-11T04:30:00+05:00"))},
		),
	},
	{
		// ISO weeks: 2026-12-28 (Mon) to 2027-01-03 (Sun) is 2026-W53;
		// 2027-01-04 starts 2027-W01.
		name:   "weekly-3-iso-year-boundary",
		policy: Policy{Weekly: 3},
		now:    at("2027-01-21T00:00:00Z"),
		snaps:  series("c1", sched, at("2026-12-20T12:00:00Z"), 2*24*time.Hour, 16),
	},
	{
		name:   "monthly-3",
		policy: Policy{Monthly: 3},
		now:    at("2026-07-01T00:00:00Z"),
		snaps:  series("c1", sched, at("2026-01-15T00:00:00Z"), 9*24*time.Hour, 18),
	},
	{
		name:   "within-2d",
		policy: Policy{Within: 48 * time.Hour},
		now:    at("2026-03-10T12:00:00Z"),
		snaps:  series("c1", sched, at("2026-03-06T00:00:00Z"), 12*time.Hour, 10),
	},
	{
		// Everything is older than --keep-within: the newest stays anyway.
		name:   "newest-always-kept",
		policy: Policy{Within: time.Hour},
		now:    at("2026-04-01T00:00:00Z"),
		snaps:  series("c1", sched, at("2026-03-01T00:00:00Z"), 24*time.Hour, 3),
	},
	{
		// The newest is an undo snapshot, old enough for keep-undo-within
		// to remove it; the newest full snapshot stays whatever the rules.
		name:   "newest-is-undo",
		policy: Policy{Within: time.Hour, UndoWithin: 7 * 24 * time.Hour},
		now:    at("2026-04-01T00:00:00Z"),
		snaps: concat(
			series("c1", sched, at("2026-03-01T00:00:00Z"), 24*time.Hour, 3),
			[]Info{info("c1", undo, at("2026-03-10T00:00:00Z"))},
		),
	},
	{
		// Undo snapshots take no --keep-last slot and fill no hourly or
		// daily bucket; keep-undo-within keeps the young ones, the old are
		// removed.
		name:   "undo-snapshots",
		policy: Policy{Last: 2, Hourly: 3, Daily: 2, Within: 90 * time.Minute, UndoWithin: 2 * time.Hour},
		now:    at("2026-03-10T12:00:00Z"),
		snaps: concat(
			series("c1", sched, at("2026-03-09T09:00:00Z"), time.Hour, 27),
			[]Info{
				info("c1", undo, at("2026-03-09T09:30:00Z")),
				info("c1", undo, at("2026-03-10T10:45:00Z")),
				info("c1", undo, at("2026-03-10T11:30:00Z")),
			},
		),
	},
	{
		// Each cluster is judged alone: keep-last 2 keeps 2 of each.
		name:   "two-clusters",
		policy: Policy{Last: 2},
		now:    at("2026-03-10T12:00:00Z"),
		snaps: concat(
			series("cluster-a", sched, at("2026-03-10T08:00:00Z"), time.Hour, 4),
			series("cluster-b", sched, at("2026-03-10T08:30:00Z"), time.Hour, 3),
		),
	},
	{
		name:   "daily-unlimited",
		policy: Policy{Daily: -1},
		now:    at("2026-03-12T00:00:00Z"),
		snaps:  series("c1", sched, at("2026-03-08T00:00:00Z"), 8*time.Hour, 12),
	},
	{
		// Input out of order, two snapshots in the same second, and a
		// manual snapshot that takes no slot (keep-manual-within 0: only
		// the count rules keep anything).
		name:   "unsorted-and-ties",
		policy: Policy{Last: 2, Hourly: 2},
		now:    at("2026-03-10T12:00:00Z"),
		snaps: []Info{
			info("c1", sched, at("2026-03-10T10:15:00Z")),
			info("c1", man, at("2026-03-10T11:00:00Z")),
			info("c1", sched, at("2026-03-10T09:00:00Z")),
			info("c1", sched, at("2026-03-10T11:00:00Z")),
			info("c1", sched, at("2026-03-10T10:45:00Z")),
		},
	},
	{
		// What broke (issue 13): full snapshots, then one snapshot --connector
		// and three undo snapshots, all newer; --keep-daily 1 kept only the
		// scoped and an undo snapshot and removed the last full one.
		name:   "mixed-keep-daily-1",
		policy: Policy{Daily: 1, UndoWithin: DefaultUndoWithin},
		now:    at("2026-03-12T12:00:00Z"),
		snaps:  mixedStore(),
	},
	{
		// The same store with --keep-last 2: the two newest full snapshots,
		// not the scoped and undo ones taken after them.
		name:   "mixed-keep-last-2",
		policy: Policy{Last: 2, UndoWithin: DefaultUndoWithin},
		now:    at("2026-03-12T12:00:00Z"),
		snaps:  mixedStore(),
	},
	{
		// --keep-within shorter than the age of every full snapshot, and a
		// short keep-undo-within: the newest full one stays anyway.
		name:   "mixed-keep-within-1h",
		policy: Policy{Within: time.Hour, UndoWithin: 36 * time.Hour},
		now:    at("2026-03-12T12:00:00Z"),
		snaps:  mixedStore(),
	},
	{
		// keep-undo-within 0 removes every scoped and undo snapshot, and
		// the full rules go on as if they were not there.
		name:   "mixed-undo-within-0",
		policy: Policy{Hourly: 2, Weekly: 1},
		now:    at("2026-03-12T12:00:00Z"),
		snaps:  mixedStore(),
	},
	{
		// keep-undo-within alone: every full snapshot stays.
		name:   "mixed-only-undo-rule",
		policy: Policy{UndoWithin: 2 * 24 * time.Hour},
		now:    at("2026-03-12T12:00:00Z"),
		snaps:  mixedStore(),
	},
	{
		// A cluster with only scoped and undo snapshots, all old: its
		// newest stays, so retention never empties it.
		name:   "no-full-snapshot",
		policy: Policy{Last: 3, UndoWithin: 24 * time.Hour},
		now:    at("2026-03-12T12:00:00Z"),
		snaps: []Info{
			scoped("c1", man, at("2026-03-01T10:00:00Z"), "orders"),
			scoped("c1", undo, at("2026-03-02T10:00:00Z"), "orders"),
			scoped("c1", man, at("2026-03-03T10:00:00Z"), "billing", "orders"),
		},
	},
	{
		// A restic-like everyday policy over two months of 6-hourly snapshots.
		name:   "combined",
		policy: Policy{Last: 2, Hourly: 3, Daily: 4, Weekly: 3, Monthly: 2, Within: 12 * time.Hour},
		now:    at("2026-03-02T00:00:00Z"),
		snaps:  series("c1", sched, at("2026-01-02T03:00:00Z"), 6*time.Hour, 236),
	},
	{
		// Pinned snapshots stay whatever their age and kind; the others
		// follow the rules as if the pinned ones were not there.
		name:   "pins",
		policy: Policy{Last: 2, UndoWithin: time.Hour},
		now:    at("2026-03-10T12:00:00Z"),
		snaps: concat(
			pinned(series("c1", sched, at("2026-03-10T04:00:00Z"), time.Hour, 8), map[int]string{0: "before the upgrade", 3: ""}),
			pinned([]Info{scoped("c1", undo, at("2026-03-01T10:00:00Z"), "orders")}, map[int]string{0: "undo of INC-4211"}),
			[]Info{scoped("c1", undo, at("2026-03-02T10:00:00Z"), "orders")},
		),
	},
	{
		// Manual full snapshots take no --keep-last or bucket slot: the
		// two newest scheduled ones are kept beside them; young manual
		// ones follow keep-manual-within, old ones go.
		name:   "manual-not-counted",
		policy: Policy{Last: 2, Daily: 2, ManualWithin: 2 * 24 * time.Hour, UndoWithin: DefaultUndoWithin},
		now:    at("2026-03-10T12:00:00Z"),
		snaps: concat(
			series("c1", sched, at("2026-03-07T06:00:00Z"), 12*time.Hour, 7),
			[]Info{
				info("c1", man, at("2026-03-07T08:00:00Z")),
				info("c1", man, at("2026-03-09T08:00:00Z")),
				info("c1", man, at("2026-03-10T10:30:00Z")),
				info("c1", man, at("2026-03-10T11:30:00Z")),
			},
		),
	},
	{
		// The newest full snapshot is manual: it is kept as the newest,
		// and the scheduled ones still fill keep-last.
		name:   "manual-newest-within-0",
		policy: Policy{Last: 1},
		now:    at("2026-03-10T12:00:00Z"),
		snaps: concat(
			series("c1", sched, at("2026-03-10T08:00:00Z"), time.Hour, 3),
			[]Info{info("c1", man, at("2026-03-10T09:30:00Z")), info("c1", man, at("2026-03-10T11:00:00Z"))},
		),
	},
	{
		// Every scheduled snapshot starts a journal epoch. A reset a day
		// ago keeps its epoch's base; one at an epoch's first instant was
		// recorded by the next epoch, whose base is kept too (events lists
		// it); one older than keep-reset-within keeps nothing.
		name:   "resets",
		policy: Policy{Last: 2, ResetWithin: 7 * 24 * time.Hour},
		now:    at("2026-03-20T12:00:00Z"),
		snaps:  series("c1", sched, at("2026-03-09T00:00:00Z"), 12*time.Hour, 24),
		journal: journalOf(series("c1", sched, at("2026-03-09T00:00:00Z"), 12*time.Hour, 24), at("2026-03-20T11:59:00Z"),
			reset("inventory-connector", at("2026-03-19T09:14:03.120Z"), 0),
			reset("orders-sink", at("2026-03-15T00:00:00.300Z"), time.Second),
			reset("billing", at("2026-03-10T03:00:00Z"), 0),
		),
	},
	{
		// The journal stopped two days ago: the newest epoch's base stays
		// with its epoch although keep-within would remove it.
		name:    "epoch-base",
		policy:  Policy{Within: time.Hour},
		now:     at("2026-03-10T12:00:00Z"),
		snaps:   series("c1", sched, at("2026-03-06T00:00:00Z"), 12*time.Hour, 9),
		journal: journalOf(series("c1", sched, at("2026-03-06T00:00:00Z"), 12*time.Hour, 5), at("2026-03-08T00:30:00Z")),
	},
	{
		// The incident of issue 23, as retention sees it: a daemon with
		// @every 5s and --keep-last 2; a pinned snapshot, a manual one, a
		// reset, then 10 scheduled snapshots. The pin, the manual snapshot
		// and the base of the reset's epoch stay.
		name:   "incident",
		policy: Policy{Last: 2, ManualWithin: DefaultManualWithin, ResetWithin: DefaultResetWithin, UndoWithin: DefaultUndoWithin},
		now:    at("2026-12-02T06:02:00Z"),
		snaps:  incident(),
		journal: journalOf(scheduledOf(incident()), at("2026-12-02T06:01:59Z"),
			reset("inventory-connector", at("2026-12-02T06:01:03.500Z"), 0)),
	},
}

// pinned returns snaps with the ones at the given indexes pinned, with
// the note given.
func pinned(snaps []Info, notes map[int]string) []Info {
	out := slices.Clone(snaps)
	for i, note := range notes {
		out[i].Pin = &Pin{PinnedAt: out[i].CreatedAt.Add(time.Minute), Note: note}
	}
	return out
}

// incident is the store of the "incident" case: scheduled snapshots every
// 5 s, the one at 06:00:40 pinned, a manual one at 06:00:57, a reset at
// 06:01:03.5 and 10 scheduled snapshots after it.
func incident() []Info {
	snaps := series("c1", sched, at("2026-12-02T06:00:00Z"), 5*time.Second, 23)
	snaps[8].Pin = &Pin{PinnedAt: at("2026-12-02T06:00:50Z"), Note: "before the migration"}
	return append(snaps, info("c1", man, at("2026-12-02T06:00:57Z")))
}

func scheduledOf(snaps []Info) []Info {
	return slices.DeleteFunc(slices.Clone(snaps), func(i Info) bool { return i.Reason != sched })
}

// journalOf is the journal of a daemon that starts an epoch from each of
// bases (sorted), each covering up to the next base plus a last flush, the
// newest up to last, and caught the resets given.
func journalOf(bases []Info, last time.Time, resets ...Event) Journal {
	var j Journal
	for i, b := range bases {
		to := last
		if i+1 < len(bases) {
			to = bases[i+1].CreatedAt.Add(500 * time.Millisecond)
		}
		j.Coverage = append(j.Coverage, Coverage{Epoch: b.ID, From: b.CreatedAt, To: to, BaseExists: true})
	}
	for _, r := range resets {
		// The epoch whose span holds the reset's time records it.
		for i := len(j.Coverage) - 1; i >= 0; i-- {
			if !j.Coverage[i].From.After(r.Time) {
				r.Epoch = j.Coverage[i].Epoch
				break
			}
		}
		j.Resets = append(j.Resets, r)
	}
	return j
}

// reset is a reset of connector at t whose first record came early before
// t (the moment before it lies that long before its time).
func reset(connector string, t time.Time, early time.Duration) Event {
	return Event{Time: t, Connector: connector, Kind: EventSourceTombstoned, Count: 3, Before: t.Add(-early - time.Millisecond)}
}

// mixedStore is a store as the demo leaves it after a few days: daily
// scheduled full snapshots, a manual full one, then a snapshot --connector
// and three undo snapshots newer than every full one.
func mixedStore() []Info {
	return concat(
		series("c1", sched, at("2026-03-05T06:00:00Z"), 24*time.Hour, 6),
		[]Info{
			info("c1", man, at("2026-03-10T15:00:00Z")),
			scoped("c1", undo, at("2026-03-02T09:00:00Z"), "orders"),
			scoped("c1", man, at("2026-03-11T08:00:00Z"), "mongodb-connector"),
			scoped("c1", undo, at("2026-03-11T09:00:00Z"), "inventory-connector"),
			scoped("c1", undo, at("2026-03-11T09:30:00Z"), "inventory-connector", "orders"),
			scoped("c1", undo, at("2026-03-12T11:00:00Z"), "orders"),
		},
	)
}

// formatDecision renders what ApplyPolicy decided, newest first, one line
// per snapshot.
func formatDecision(p Policy, now time.Time, snaps, keep, remove []Info, reasons map[string][]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# policy: %s\n# now: %s\n# kept %d, removed %d of %d\n", p, now.UTC().Format(time.RFC3339), len(keep), len(remove), len(snaps))
	kept := map[string]bool{}
	for _, s := range keep {
		kept[s.ID] = true
	}
	all := slices.Concat(keep, remove)
	slices.SortFunc(all, func(a, b Info) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	for _, s := range all {
		action := "remove"
		if kept[s.ID] {
			action = "keep"
		}
		fmt.Fprintf(&b, "%-6s  %s  %-20s  %-9s  %-9s  %-6s  %-30s  %s\n", action, s.ID, s.CreatedAt.UTC().Format(time.RFC3339), s.ClusterID, s.Reason, s.EffectiveKind(), strings.Join(s.Scope, ","), strings.Join(reasons[s.ID], ", "))
	}
	return b.String()
}

func TestApplyPolicyGolden(t *testing.T) {
	for _, tc := range policyCases {
		t.Run(tc.name, func(t *testing.T) {
			keep, remove, reasons := ApplyPolicy(tc.snaps, tc.journal, tc.policy, tc.now)
			got := formatDecision(tc.policy, tc.now, tc.snaps, keep, remove, reasons)
			for _, r := range tc.journal.Resets {
				got += fmt.Sprintf("# reset of %s at %s (before %s, epoch %s)\n", r.Connector, r.Time.UTC().Format(time.RFC3339Nano), r.Before.UTC().Format(time.RFC3339Nano), r.Epoch)
			}
			path := filepath.Join("testdata", "retention", tc.name+".golden")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("read golden file (run go test -update to create it): %v", err)
			}
			if got != string(want) {
				t.Errorf("ApplyPolicy decision differs from %s (run go test -update if the change is intended)\ngot:\n%s\nwant:\n%s", path, got, want)
			}
		})
	}
}

// TestApplyPolicyInvariants checks, over random stores and policies, what
// must hold whatever the rules: every snapshot is either kept or removed,
// the newest of each cluster and young undo snapshots are kept, every
// decision has a reason, and the input is left as it was.
func TestApplyPolicyInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	now := at("2026-06-01T00:00:00Z")
	reasonsOf := []string{sched, sched, sched, man, undo}
	for iter := range 500 {
		var snaps []Info
		for range rng.IntN(40) {
			age := time.Duration(rng.Int64N(int64(90 * 24 * time.Hour)))
			s := info([]string{"a", "bb"}[rng.IntN(2)], reasonsOf[rng.IntN(len(reasonsOf))], now.Add(-age))
			if s.Reason == undo || rng.IntN(4) == 0 {
				s.Scope = []string{"orders"}
			}
			s.ID += fmt.Sprintf("-%d", len(snaps))
			if rng.IntN(8) == 0 {
				s.Pin = &Pin{PinnedAt: s.CreatedAt}
			}
			snaps = append(snaps, s)
		}
		n := func() int { return rng.IntN(6) - 1 }
		p := Policy{Last: n(), Hourly: n(), Daily: n(), Weekly: n(), Monthly: n()}
		if rng.IntN(2) == 0 {
			p.Within = time.Duration(rng.Int64N(int64(30 * 24 * time.Hour)))
		}
		if rng.IntN(3) != 0 {
			p.UndoWithin = time.Duration(rng.Int64N(int64(60 * 24 * time.Hour)))
		}
		if rng.IntN(2) == 0 {
			p.ManualWithin = time.Duration(rng.Int64N(int64(60 * 24 * time.Hour)))
		}
		before := slices.Clone(snaps)

		keep, remove, reasons := ApplyPolicy(snaps, Journal{}, p, now)

		if !reflect.DeepEqual(snaps, before) {
			t.Fatalf("iter %d: ApplyPolicy changed its input", iter)
		}
		if len(keep)+len(remove) != len(snaps) {
			t.Fatalf("iter %d: kept %d + removed %d != %d", iter, len(keep), len(remove), len(snaps))
		}
		kept := map[string]bool{}
		for _, s := range keep {
			kept[s.ID] = true
		}
		for _, s := range remove {
			if kept[s.ID] {
				t.Fatalf("iter %d: %s both kept and removed", iter, s.ID)
			}
		}
		// The newest full snapshot of each cluster, or its newest snapshot
		// when it has no full one, is kept; scoped and undo snapshots are
		// kept exactly while younger than UndoWithin.
		newest := map[string]Info{}
		newer := func(s, than Info) bool {
			return s.CreatedAt.After(than.CreatedAt) || (s.CreatedAt.Equal(than.CreatedAt) && s.ID > than.ID)
		}
		for _, s := range snaps {
			if len(reasons[s.ID]) == 0 {
				t.Fatalf("iter %d: %s has no reason", iter, s.ID)
			}
			if p.Empty() && !kept[s.ID] {
				t.Fatalf("iter %d: empty policy removed %s", iter, s.ID)
			}
			young := p.UndoWithin > 0 && now.Sub(s.CreatedAt) < p.UndoWithin
			if s.EffectiveKind() != KindFull && young && !kept[s.ID] {
				t.Fatalf("iter %d: %s snapshot %s younger than %s removed", iter, s.EffectiveKind(), s.ID, p.UndoWithin)
			}
			n, ok := newest[s.ClusterID]
			switch {
			case !ok, s.EffectiveKind() == KindFull && (n.EffectiveKind() != KindFull || newer(s, n)), s.EffectiveKind() != KindFull && n.EffectiveKind() != KindFull && newer(s, n):
				newest[s.ClusterID] = s
			}
		}
		for _, s := range snaps {
			young := p.UndoWithin > 0 && now.Sub(s.CreatedAt) < p.UndoWithin
			if !p.Empty() && s.EffectiveKind() != KindFull && !young && kept[s.ID] && newest[s.ClusterID].ID != s.ID && s.Pin == nil {
				t.Fatalf("iter %d: %s snapshot %s older than %s kept: %v", iter, s.EffectiveKind(), s.ID, p.UndoWithin, reasons[s.ID])
			}
		}
		for _, s := range snaps {
			if s.Pin != nil && !kept[s.ID] {
				t.Fatalf("iter %d: pinned snapshot %s removed: %v", iter, s.ID, reasons[s.ID])
			}
		}
		// Manual full snapshots never push a scheduled one out: without
		// them (and with the newest full kept anyway), the scheduled ones
		// kept are the same.
		if !p.Empty() {
			noManual := slices.DeleteFunc(slices.Clone(snaps), func(s Info) bool { return s.Manual() })
			keep2, _, _ := ApplyPolicy(noManual, Journal{}, p, now)
			kept2 := map[string]bool{}
			for _, s := range keep2 {
				kept2[s.ID] = true
			}
			for _, s := range noManual {
				if s.EffectiveKind() == KindFull && kept2[s.ID] && !kept[s.ID] {
					t.Fatalf("iter %d: manual snapshots pushed scheduled snapshot %s out (policy %s)", iter, s.ID, p)
				}
			}
		}
		for c, s := range newest {
			if !kept[s.ID] {
				t.Fatalf("iter %d: newest (full) snapshot %s of cluster %s removed (policy %s)", iter, s.ID, c, p)
			}
		}
		for i := 1; i < len(keep); i++ {
			if keep[i].CreatedAt.Before(keep[i-1].CreatedAt) {
				t.Fatalf("iter %d: keep not sorted oldest first", iter)
			}
		}
	}
}

// TestUndoGone checks when restore --at a moment is still possible: a
// stored epoch base whose journal covers it, or a full snapshot before
// every epoch; not inside the span of an epoch whose base is gone.
func TestUndoGone(t *testing.T) {
	now := at("2026-03-10T12:00:00Z")
	bases := series("c1", sched, at("2026-03-10T08:00:00Z"), time.Hour, 4)
	j := journalOf(bases, at("2026-03-10T11:59:30Z"))
	for _, tc := range []struct {
		name  string
		at    time.Time
		snaps []Info
		gone  bool
	}{
		{"covered", at("2026-03-10T09:30:00Z"), bases, false},
		{"newest epoch, live", at("2026-03-10T11:59:50Z"), bases, false},
		{"base removed", at("2026-03-10T09:30:00Z"), slices.Delete(slices.Clone(bases), 1, 2), true},
		{"before every epoch, older full snapshot", at("2026-03-10T07:00:00Z"), append([]Info{info("c1", man, at("2026-03-10T06:00:00Z"))}, bases...), false},
		{"before every snapshot", at("2026-03-10T07:00:00Z"), bases, true},
	} {
		got := UndoGone(tc.at, tc.snaps, j.Coverage, now)
		if (got != "") != tc.gone {
			t.Errorf("%s: UndoGone = %q, want gone %v", tc.name, got, tc.gone)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		err  bool
	}{
		{in: "36h", want: 36 * time.Hour},
		{in: "90m", want: 90 * time.Minute},
		{in: "7d", want: 7 * 24 * time.Hour},
		{in: "2w", want: 14 * 24 * time.Hour},
		{in: "1w2d", want: 9 * 24 * time.Hour},
		{in: "1d12h", want: 36 * time.Hour},
		{in: "0", want: 0},
		{in: "", err: true},
		{in: "d", err: true},
		{in: "-1h", err: true},
		{in: "1d-1h", err: true},
		{in: "2d1w", err: true},
		{in: "1y", err: true},
	} {
		got, err := ParseDuration(tc.in)
		if tc.err {
			if err == nil {
				t.Errorf("ParseDuration(%q) = %v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		48 * time.Hour:                "2d",
		36 * time.Hour:                "1d12h",
		90 * time.Minute:              "1h30m",
		time.Hour:                     "1h",
		30 * time.Second:              "30s",
		24*time.Hour + 90*time.Second: "1d1m30s",
	} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
		back, err := ParseDuration(FormatDuration(d))
		if err != nil || back != d {
			t.Errorf("ParseDuration(FormatDuration(%v)) = %v, %v", d, back, err)
		}
	}
}

func TestPolicyString(t *testing.T) {
	for _, tc := range []struct {
		p    Policy
		want string
	}{
		{Policy{}, "none"},
		{Policy{Last: 3}, "last 3"},
		{Policy{Daily: -1, Within: 48 * time.Hour}, "daily unlimited, within 2d"},
		{Policy{Last: 1, Hourly: 2, Daily: 3, Weekly: 4, Monthly: 5}, "last 1, hourly 2, daily 3, weekly 4, monthly 5"},
		{Policy{Last: 2, UndoWithin: DefaultUndoWithin}, "last 2, undo within 30d"},
	} {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", tc.p, got, tc.want)
		}
	}
}

package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// TestPinCommands runs pin, list and unpin as a user would: IDs by
// prefix and latest, the note in list's text and JSON, a snapshot that is
// not stored or not pinned refused with exit 1, and the pin flags never
// read from the environment.
func TestPinCommands(t *testing.T) {
	st, ids := pruneStore(t, 3)
	code, out, errs := runCLI(t, "pin", "--store", st, ids[0][:22], "--note", "before the upgrade")
	if code != 0 || !strings.Contains(out, "pinned "+ids[0]+": before the upgrade") {
		t.Fatalf("pin: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := runCLI(t, "pin", "--store", st, "latest"); code != 0 || !strings.Contains(out, "pinned "+ids[2]) {
		t.Fatalf("pin latest: exit %d\n%s%s", code, out, errs)
	}
	absent := snapshot.NewID(time.Now())
	if code, _, errs := runCLI(t, "pin", "--store", st, absent); code != 1 || !strings.Contains(errs, "not found") {
		t.Fatalf("pin of an absent ID: exit %d, %s; want 1, not found", code, errs)
	}

	code, out, _ = runCLI(t, "list", "--store", st)
	if code != 0 || strings.Count(out, " pinned") != 2 || !strings.Contains(out, "Pinned:") || !strings.Contains(out, "before the upgrade") {
		t.Fatalf("list does not show the pins and the note: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "list", "--store", st, "--output", "json")
	var infos []snapshot.Info
	if err := json.Unmarshal([]byte(out), &infos); code != 0 || err != nil {
		t.Fatalf("list --output json: exit %d, %v\n%s", code, err, out)
	}
	if infos[0].Pin == nil || infos[0].Pin.Note != "before the upgrade" || infos[1].Pin != nil || infos[2].Pin == nil {
		t.Fatalf("list --output json pins = %+v, %+v, %+v", infos[0].Pin, infos[1].Pin, infos[2].Pin)
	}

	if code, out, errs := runCLI(t, "unpin", "--store", st, ids[2]); code != 0 || !strings.Contains(out, "unpinned "+ids[2]) {
		t.Fatalf("unpin: exit %d\n%s%s", code, out, errs)
	}
	if code, _, errs := runCLI(t, "unpin", "--store", st, ids[2]); code != 1 || !strings.Contains(errs, "not pinned") {
		t.Fatalf("unpin twice: exit %d, %s; want 1, not pinned", code, errs)
	}
	if code, _, _ := runCLI(t, "pin", "--store", st); code != 2 {
		t.Fatalf("pin without an ID: exit %d, want 2", code)
	}

	t.Setenv("OFFSETKEEPER_NOTE", "from the environment")
	if code, out, errs := runCLI(t, "pin", "--store", st, ids[1]); code != 0 || strings.Contains(out, "from the environment") {
		t.Fatalf("pin read --note from the environment: exit %d\n%s%s", code, out, errs)
	}
	os.Unsetenv("OFFSETKEEPER_NOTE")
}

// incidentStore is a store as a daemon journaling leaves it: n hourly
// scheduled snapshots, each the base of a journal epoch of one segment; a
// reset of inventory-connector in the epoch of base reset (half an hour
// after it), and a manual snapshot taken 10 minutes before that reset.
func incidentStore(t *testing.T, n, reset int) (url string, ids []string, manual string, resetAt time.Time) {
	t.Helper()
	ctx := context.Background()
	url, ids = pruneStore(t, n)
	s, err := store.OpenStore(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	infos, err := s.Snapshots().List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, info := range infos {
		if err := s.Journal().PutEpoch(ctx, &journal.Epoch{ID: info.ID, Reason: journal.EpochSnapshot, StartedAt: info.CreatedAt}); err != nil {
			t.Fatal(err)
		}
		last := info.CreatedAt.Add(time.Hour + time.Second)
		if i == len(infos)-1 {
			last = time.Now().Add(-time.Second)
		}
		seg := &journal.Segment{Epoch: info.ID, FirstSeq: 1, LastSeq: 1, FirstTime: info.CreatedAt, LastTime: last}
		if i == reset {
			resetAt = info.CreatedAt.Add(30 * time.Minute).Truncate(time.Millisecond)
			seg.Entries = []journal.Entry{{Kind: journal.EntryEvent, Time: resetAt.UnixMilli(), Before: resetAt.UnixMilli() - 1,
				Connector: "inventory-connector", Reason: snapshot.EventSourceTombstoned, Count: 3}}
		}
		if _, err := s.Journal().PutSegment(ctx, seg); err != nil {
			t.Fatal(err)
		}
	}
	m, err := s.Snapshots().Put(ctx, &snapshot.Snapshot{ClusterID: "c1", Reason: snapshot.ReasonManual, CreatedAt: resetAt.Add(-10 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	return url, ids, m.ID, resetAt
}

// TestPruneKeepsWhatAnIncidentNeeds: --keep-last 2 over a store with a
// pinned snapshot, a manual one and a reset keeps all three (the reset's
// epoch base and its journal), names the rule for each, in text and JSON,
// dry run and real; events still lists the reset and its undo is possible.
func TestPruneKeepsWhatAnIncidentNeeds(t *testing.T) {
	st, ids, manual, resetAt := incidentStore(t, 8, 3)
	if code, _, errs := runCLI(t, "pin", "--store", st, ids[0], "--note", "INC-7"); code != 0 {
		t.Fatalf("pin: %s", errs)
	}
	want := map[string]string{
		ids[0]: "pinned (INC-7)",
		ids[3]: "before a reset of inventory-connector at " + resetAt.UTC().Format("2006-01-02T15:04:05.000Z"),
		manual: "manual within 30d",
		ids[6]: "last snapshot",
		ids[7]: "base of the newest journal epoch",
	}
	for _, dry := range []bool{true, false} {
		args := []string{"prune", "--store", st, "--keep-last", "2", "--output", "json"}
		if dry {
			args = append(args, "--dry-run")
		}
		code, out, errs := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, errs)
		}
		var res pruneResult
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		if res.Kept != len(want) || res.Removed != 4 {
			t.Errorf("%v: kept %d, removed %d; want %d, 4\n%s", args, res.Kept, res.Removed, len(want), out)
		}
		for _, d := range res.Snapshots {
			w, keep := want[d.ID]
			if keep != (d.Action == "keep") || (keep && !strings.Contains(strings.Join(d.Why, ", "), w)) {
				t.Errorf("%v: %s %s (%v), want keep %v (%s)", args, d.Action, d.ID, d.Why, keep, w)
			}
		}
	}
	code, out, _ := runCLI(t, "prune", "--store", st, "--keep-last", "2", "--dry-run")
	if code != 0 || !strings.Contains(out, "before a reset of inventory-connector") || !strings.Contains(out, "pinned (INC-7)") {
		t.Errorf("prune text does not name the rules:\n%s", out)
	}
	if got := storeIDs(t, st); len(got) != len(want) {
		t.Errorf("after prune the store holds %v, want %d snapshots", got, len(want))
	}
	code, out, errs := runCLI(t, "events", "--store", st, "--since", "-24h", "--output", "json")
	var evs []snapshot.Event
	if err := json.Unmarshal([]byte(out), &evs); code != 0 || err != nil || len(evs) != 1 || evs[0].UndoGone != "" {
		t.Fatalf("events after prune: exit %d, %v, %+v\n%s", code, err, evs, errs)
	}
}

// TestPruneResetRuleOff: with --keep-reset-within 0 the reset keeps
// nothing, and events then says its undo is no longer possible.
func TestPruneResetRuleOff(t *testing.T) {
	st, _, _, _ := incidentStore(t, 8, 3)
	if code, _, errs := runCLI(t, "prune", "--store", st, "--keep-last", "2", "--keep-reset-within", "0", "--keep-manual-within", "0"); code != 0 {
		t.Fatalf("prune: %s", errs)
	}
	// The reset's epoch went with its base: events no longer lists it.
	code, out, _ := runCLI(t, "events", "--store", st, "--since", "-24h", "--output", "json")
	var evs []snapshot.Event
	if err := json.Unmarshal([]byte(out), &evs); code != 0 || err != nil || len(evs) != 0 {
		t.Fatalf("events: exit %d, %v, %+v", code, err, evs)
	}
}

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// TestDamagedObjectsDoNotBlockTheStore: a zero-byte or foreign object
// named like a snapshot (a copy tool that drops metadata) made list,
// verify, prune, restore latest and the daemon's retention fail, and prune
// could not remove it because it lists first. Now list shows it as
// damaged and goes on, verify fails it, latest never means it, and prune
// and delete remove it.
func TestDamagedObjectsDoNotBlockTheStore(t *testing.T) {
	st, ids := pruneStore(t, 3)
	dir := strings.TrimPrefix(st, "file://")
	now := time.Now().UTC()
	empty := snapshot.NewID(now.Add(-30 * time.Minute))   // zero bytes
	foreign := snapshot.NewID(now.Add(-20 * time.Minute)) // not an offsetkeeper object
	for id, body := range map[string]string{empty: "", foreign: "PK\x03\x04 a zip file, say\n"} {
		if err := os.WriteFile(filepath.Join(dir, "snapshots", id+".snap"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	code, out, errs := runCLI(t, "list", "--store", st)
	if code != 0 {
		t.Fatalf("list: exit %d\n%s", code, errs)
	}
	for _, id := range append([]string{empty, foreign}, ids...) {
		if !strings.Contains(out, id) {
			t.Errorf("list does not show %s:\n%s", id, out)
		}
	}
	for _, id := range []string{empty, foreign} {
		said := false
		for _, l := range strings.Split(out, "\n") {
			said = said || (strings.HasPrefix(l, id) && strings.Contains(l, " damaged "))
		}
		if !said {
			t.Errorf("list's table does not call %s damaged:\n%s", id, out)
		}
	}
	if !strings.Contains(out, "'offsetkeeper delete ID' removes it") {
		t.Errorf("list does not say how to remove damaged objects:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if len(l) > 120 {
			t.Errorf("list line over 120 columns: %q", l)
		}
	}

	s, err := store.OpenExistingStore(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if id, err := s.Snapshots().Resolve(context.Background(), "latest"); err != nil || id != ids[2] {
		t.Errorf("latest = %s, %v; want %s (the damaged objects are newer but never latest)", id, err, ids[2])
	}

	code, out, _ = runCLI(t, "verify", "--store", st)
	if code != 1 || !strings.Contains(out, "FAIL "+empty) || !strings.Contains(out, "FAIL "+foreign) || !strings.Contains(out, "ok   "+ids[0]) {
		t.Errorf("verify: exit %d, want 1 failing the two damaged objects and passing the rest:\n%s", code, out)
	}

	// delete takes a full ID only.
	if code, _, errs := runCLI(t, "delete", "--store", st, empty[:10]); code != 2 {
		t.Errorf("delete with a prefix: exit %d, want 2\n%s", code, errs)
	}
	code, out, errs = runCLI(t, "delete", "--store", st, empty)
	if code != 0 || !strings.Contains(out, "deleted "+empty) {
		t.Fatalf("delete %s: exit %d\n%s%s", empty, code, out, errs)
	}

	// prune removes the other, whatever the policy keeps.
	code, out, errs = runCLI(t, "prune", "--store", st, "--keep-last", "5")
	if code != 0 {
		t.Fatalf("prune: exit %d\n%s%s", code, out, errs)
	}
	if !strings.Contains(out, "damaged") {
		t.Errorf("prune does not say why it removes the damaged object:\n%s", out)
	}
	if got := storeIDs(t, st); strings.Join(got, " ") != strings.Join(ids, " ") {
		t.Errorf("after delete and prune the store holds %v, want %v", got, ids)
	}

	// A pinned snapshot is refused by delete (exit 3), nothing removed.
	if code, _, errs := runCLI(t, "pin", "--store", st, ids[0]); code != 0 {
		t.Fatalf("pin: exit %d\n%s", code, errs)
	}
	if code, _, errs := runCLI(t, "delete", "--store", st, ids[1], ids[0]); code != 3 || !strings.Contains(errs, "unpin") {
		t.Errorf("delete of a pinned snapshot: exit %d, want 3 with the unpin advice\n%s", code, errs)
	}
	if got := storeIDs(t, st); len(got) != 3 {
		t.Errorf("a refused delete removed snapshots: %v", got)
	}
}

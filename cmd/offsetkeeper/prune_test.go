package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// pruneStore returns a file store holding one scheduled snapshot per hour
// for the last n hours, oldest first, and their IDs.
func pruneStore(t *testing.T, n int) (string, []string) {
	t.Helper()
	url := "file://" + t.TempDir()
	s, err := store.OpenStore(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ids []string
	now := time.Now().UTC()
	for i := n; i > 0; i-- {
		info, err := s.Snapshots().Put(context.Background(), &snapshot.Snapshot{
			ClusterID: "c1",
			Reason:    snapshot.ReasonScheduled,
			CreatedAt: now.Add(-time.Duration(i) * time.Hour),
		})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, info.ID)
	}
	return url, ids
}

func storeIDs(t *testing.T, url string) []string {
	t.Helper()
	s, err := store.OpenStore(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	infos, err := s.Snapshots().List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, i := range infos {
		ids = append(ids, i.ID)
	}
	return ids
}

func TestPrune(t *testing.T) {
	st, ids := pruneStore(t, 6)

	// The dry run says what and why, and removes nothing.
	code, out, errs := runCLI(t, "prune", "--store", st, "--keep-last", "2", "--dry-run")
	if code != 0 {
		t.Fatalf("prune --dry-run: exit %d\n%s", code, errs)
	}
	for i, id := range ids {
		want := "remove"
		why := "no rule keeps it"
		if i >= 4 {
			want, why = "keep", "last snapshot"
		}
		line := ""
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, id) {
				line = l
			}
		}
		if !strings.HasPrefix(line, want+" ") || !strings.Contains(line, why) {
			t.Errorf("dry run line for %s = %q, want %s (%s)", id, line, want, why)
		}
	}
	if !strings.Contains(out, "nothing removed") {
		t.Errorf("dry run does not say nothing was removed:\n%s", out)
	}
	if got := storeIDs(t, st); len(got) != 6 {
		t.Fatalf("dry run removed snapshots: %v", got)
	}

	// Env twin, flags after the command.
	t.Setenv("OFFSETKEEPER_KEEP_WITHIN", "150m")
	code, out, errs = runCLI(t, "prune", "--store", st, "--keep-last", "1")
	if code != 0 {
		t.Fatalf("prune: exit %d\n%s", code, errs)
	}
	got := storeIDs(t, st)
	// keep-last 1 keeps the newest; keep-within 150m keeps the snapshots
	// of the last two hours.
	if strings.Join(got, " ") != strings.Join(ids[4:], " ") {
		t.Errorf("after prune: %v, want %v\n%s", got, ids[4:], out)
	}
	if !strings.Contains(out, "removed 4") {
		t.Errorf("prune output lacks the count:\n%s", out)
	}
}

func TestPruneUsage(t *testing.T) {
	st, _ := pruneStore(t, 1)
	for _, args := range [][]string{
		{"prune", "--store", st},                       // no rule: nothing to do is a mistake
		{"prune", "--store", st, "--keep-daily", "-5"}, // -1 is "all", below is nonsense
		{"prune", "--store", st, "--keep-within", "yesterday"},
		{"prune", "--store", st, "--keep-last", "1", "latest"}, // no positional arguments
	} {
		code, _, errs := runCLI(t, args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d\n%s", args, code, exitUsage, errs)
		}
	}
	if got := storeIDs(t, st); len(got) != 1 {
		t.Errorf("a refused prune removed snapshots: %v", got)
	}
}

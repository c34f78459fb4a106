package main

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// TestPruneStopsAgainstAStuckStore: prune against a stuck store waited
// the whole --store-timeout on every removal, one after the other. After
// maxFailingRemovals failures in a row it tries no more and says so for
// each snapshot left; a success in between starts the count again.
func TestPruneStopsAgainstAStuckStore(t *testing.T) {
	c := &pruneCmd{env: &env{log: slog.New(slog.DiscardHandler)}}
	res := &pruneResult{}
	for i := range 8 {
		res.Snapshots = append(res.Snapshots, pruneDecision{Info: snapshot.Info{ID: fmt.Sprintf("s%d", i)}, Action: "remove"})
	}
	res.Snapshots[1].Action = "keep"
	stuck := errors.New("store s3://b did not answer within 1m0s")
	var tried []string
	del := func(id string) error {
		tried = append(tried, id)
		if id == "s0" || id == "s2" {
			return nil
		}
		return stuck
	}
	errs := c.removeEach(res, func(string) (bool, error) { return false, nil }, del)
	// s0 removed, s1 kept, s2 removed, s3 s4 s5 fail, s6 s7 not tried.
	if got := strings.Join(tried, " "); got != "s0 s2 s3 s4 s5" {
		t.Errorf("tried %s, want s0 s2 s3 s4 s5", got)
	}
	if res.Removed != 2 || res.Failed != 5 || len(errs) != 5 {
		t.Errorf("removed %d, failed %d, %d errors; want 2, 5, 5", res.Removed, res.Failed, len(errs))
	}
	for _, d := range res.Snapshots[6:] {
		if !strings.Contains(d.Error, "not tried: the 3 removals before it failed") || !strings.Contains(d.Error, "run prune again") {
			t.Errorf("%s: error %q, want it not tried, saying why", d.ID, d.Error)
		}
	}
}

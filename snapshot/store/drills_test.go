package store

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"gocloud.dev/blob/memblob"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// Drill reports are written once and never replaced, listed oldest first,
// and never seen by the snapshot listing.
func TestDrillReports(t *testing.T) {
	ctx := context.Background()
	s := NewStore(memblob.OpenBucket(nil))
	defer s.Close()
	t0 := time.Date(2026, 12, 7, 4, 0, 0, 0, time.UTC)
	a, b := snapshot.NewID(t0.Add(time.Hour)), snapshot.NewID(t0)
	for _, id := range []string{a, b} {
		if err := s.Drills().Put(ctx, id, []byte(`{"id":"`+id+`"}`)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Drills().Put(ctx, a, []byte(`{"changed":true}`)); !errors.Is(err, snapshot.ErrExists) {
		t.Fatalf("second PutDrill of %s: %v, want ErrExists", a, err)
	}
	if got, err := s.Drills().Get(ctx, a); err != nil || string(got) != `{"id":"`+a+`"}` {
		t.Fatalf("GetDrill %s: %q, %v", a, got, err)
	}
	if ids, err := s.Drills().List(ctx); err != nil || !slices.Equal(ids, []string{b, a}) {
		t.Fatalf("Drills: %v, %v; want %v", ids, err, []string{b, a})
	}
	if _, err := s.Drills().Get(ctx, snapshot.NewID(t0.Add(2*time.Hour))); !errors.Is(err, snapshot.ErrNotFound) {
		t.Fatalf("GetDrill of a missing report: %v, want ErrNotFound", err)
	}
	if err := s.Drills().Put(ctx, "../x", nil); err == nil {
		t.Fatal("PutDrill of a bad ID stored it")
	}
	if infos, err := s.Snapshots().List(ctx); err != nil || len(infos) != 0 {
		t.Fatalf("List sees drill reports: %v, %v", infos, err)
	}
}

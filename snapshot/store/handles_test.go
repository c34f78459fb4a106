package store_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// TestHandlesNotFound checks the not-found behaviour each handle's doc
// comment states, on an empty store of every local kind: a caller that
// branches on it (restore, the daemon's retention, the commands) must be
// able to trust it whatever the backend.
func TestHandlesNotFound(t *testing.T) {
	for _, url := range []string{"", "mem://"} {
		name := url
		if name == "" {
			name = "file"
		}
		t.Run(name, func(t *testing.T) {
			if url == "" {
				url = t.TempDir()
			}
			ctx := context.Background()
			st, err := store.OpenStore(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			id := snapshot.NewID(time.Now())
			is := func(what string, err, want error) {
				t.Helper()
				if want == nil && err != nil || want != nil && !errors.Is(err, want) {
					t.Errorf("%s: %v, want %v", what, err, want)
				}
			}
			_, _, err = st.Snapshots().GetWith(ctx, id, nil)
			is("Snapshots.GetWith", err, snapshot.ErrNotFound)
			_, _, err = st.Snapshots().GetWith(ctx, id, store.RestoreSink(store.RestoreRead{}))
			is("Snapshots.GetWith(RestoreSink)", err, snapshot.ErrNotFound)
			_, err = st.Snapshots().Verify(ctx, id)
			is("Snapshots.Verify", err, snapshot.ErrNotFound)
			_, err = st.Snapshots().Resolve(ctx, id[:10])
			is("Snapshots.Resolve(prefix)", err, snapshot.ErrNotFound)
			is("Snapshots.Delete", st.Snapshots().Delete(ctx, id), snapshot.ErrNotFound)
			if infos, err := st.Snapshots().List(ctx); err != nil || len(infos) != 0 {
				t.Errorf("Snapshots.List: %v, %v; want empty", infos, err)
			}

			_, err = st.Journal().GetEpoch(ctx, id)
			is("Journal.GetEpoch", err, journal.ErrNotFound)
			is("Journal.DeleteObject", st.Journal().DeleteObject(ctx, journal.JournalPrefix+id+"/epoch.json"), nil)
			if l, err := st.Journal().List(ctx); err != nil || len(l.Epochs) != 0 {
				t.Errorf("Journal.List: %+v, %v; want no epochs", l, err)
			}
			if cov, err := st.Journal().Coverage(ctx); err != nil || len(cov) != 0 {
				t.Errorf("Journal.Coverage: %v, %v; want empty", cov, err)
			}
			if ev, err := st.Journal().Events(ctx, time.Time{}); err != nil || len(ev) != 0 {
				t.Errorf("Journal.Events: %v, %v; want empty", ev, err)
			}

			empty := journal.EpochInfo{ID: id}
			if segs, err := st.Levels().Compact(ctx, empty, time.Now()); err != nil || len(segs) != 0 {
				t.Errorf("Levels.Compact of an empty epoch: %v, %v; want nothing", segs, err)
			}
			if n, err := st.Levels().DropRaw(ctx, empty, 0, time.Now()); err != nil || n != 0 {
				t.Errorf("Levels.DropRaw of an empty epoch: %d, %v; want 0", n, err)
			}
			if n, err := st.Levels().ThinMinutes(ctx, empty, 0, time.Now()); err != nil || n != 0 {
				t.Errorf("Levels.ThinMinutes of an empty epoch: %d, %v; want 0", n, err)
			}

			_, _, err = st.Pins().Pin(ctx, id, "note", time.Now())
			is("Pins.Pin", err, snapshot.ErrNotFound)
			_, err = st.Pins().Unpin(ctx, id)
			is("Pins.Unpin", err, store.ErrNotPinned)
			if ok, err := st.Pins().Pinned(ctx, id); ok || err != nil {
				t.Errorf("Pins.Pinned: %v, %v; want false", ok, err)
			}
			if all, err := st.Pins().All(ctx); err != nil || len(all) != 0 {
				t.Errorf("Pins.All: %v, %v; want empty", all, err)
			}

			_, err = st.Drills().Get(ctx, id)
			is("Drills.Get", err, snapshot.ErrNotFound)
			if ids, err := st.Drills().List(ctx); err != nil || len(ids) != 0 {
				t.Errorf("Drills.List: %v, %v; want empty", ids, err)
			}

			is("Restores.Delete", st.Restores().Delete(ctx, id), nil)
			if in, err := st.Restores().List(ctx); err != nil || len(in) != 0 {
				t.Errorf("Restores.List: %v, %v; want empty", in, err)
			}
			if _, found, err := st.Restores().CurrentLock(ctx, "cluster"); found || err != nil {
				t.Errorf("Restores.CurrentLock: %v, %v; want none", found, err)
			}

			_, err = st.Fences().Get(ctx, "cluster")
			is("Fences.Get", err, snapshot.ErrNotFound)
			is("Fences.Delete", st.Fences().Delete(ctx, "cluster"), nil)
			_, err = st.Fences().GetConfigs(ctx, "cluster")
			is("Fences.GetConfigs", err, snapshot.ErrNotFound)
		})
	}
}

// TestHandlesStaySmall: no exported type of the store has more than 15
// methods (issue 38): a new kind of object gets its own handle, as
// litestream's ReplicaClient and restic's Backend stay small.
func TestHandlesStaySmall(t *testing.T) {
	for _, typ := range []reflect.Type{
		reflect.TypeFor[*store.Store](), reflect.TypeFor[store.Snapshots](), reflect.TypeFor[store.Journal](),
		reflect.TypeFor[store.Levels](), reflect.TypeFor[store.Pins](), reflect.TypeFor[store.Drills](),
		reflect.TypeFor[store.Restores](), reflect.TypeFor[store.Fences](), reflect.TypeFor[*store.Keeper](),
	} {
		if n := typ.NumMethod(); n > 15 {
			var names []string
			for i := range n {
				names = append(names, typ.Method(i).Name)
			}
			t.Errorf("%v has %d methods, at most 15: %v", typ, n, names)
		}
	}
}

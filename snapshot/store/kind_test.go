package store_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// kindStore holds, oldest first: full, scoped [orders], undo [orders],
// full, scoped [billing], undo [billing, orders]. It returns their IDs.
func kindStore(t *testing.T, st *store.Store) []string {
	t.Helper()
	var ids []string
	for _, s := range []*snapshot.Snapshot{
		{Reason: snapshot.ReasonScheduled},
		{Reason: snapshot.ReasonManual, Scope: []string{"orders"}},
		{Reason: snapshot.ReasonUndo, Scope: []string{"orders"}},
		{Reason: snapshot.ReasonManual},
		{Reason: snapshot.ReasonManual, Scope: []string{"billing"}},
		{Reason: snapshot.ReasonUndo, Scope: []string{"billing", "orders"}},
	} {
		s.ClusterID = "c1"
		info, err := st.Snapshots().Put(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, info.ID)
	}
	return ids
}

var wantKinds = []struct {
	kind  string
	scope []string
}{
	{snapshot.KindFull, nil},
	{snapshot.KindScoped, []string{"orders"}},
	{snapshot.KindUndo, []string{"orders"}},
	{snapshot.KindFull, nil},
	{snapshot.KindScoped, []string{"billing"}},
	{snapshot.KindUndo, []string{"billing", "orders"}},
}

func checkKinds(t *testing.T, st *store.Store) {
	t.Helper()
	infos, err := st.Snapshots().List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != len(wantKinds) {
		t.Fatalf("listed %d snapshots, want %d", len(infos), len(wantKinds))
	}
	for i, w := range wantKinds {
		if infos[i].Kind != w.kind || !reflect.DeepEqual(infos[i].Scope, w.scope) {
			t.Errorf("snapshot %d: kind %q scope %q, want %q %q", i, infos[i].Kind, infos[i].Scope, w.kind, w.scope)
		}
	}
}

func TestListKindAndScope(t *testing.T) {
	st := store.NewStore(memblob.OpenBucket(nil))
	defer st.Close()
	kindStore(t, st)
	checkKinds(t, st)
}

// Snapshots stored before kinds were written as metadata still list with
// their kind and scope, read from the head of the document.
func TestListKindOfOldObjects(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	st := store.NewStore(b)
	defer st.Close()
	ids := kindStore(t, st)
	for _, id := range ids {
		key := "snapshots/" + id + ".snap"
		attrs, err := b.Attributes(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		data, err := b.ReadAll(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		md := attrs.Metadata
		delete(md, "kind")
		delete(md, "scope")
		if err := b.WriteAll(ctx, key, data, &blob.WriterOptions{Metadata: md, ContentType: attrs.ContentType}); err != nil {
			t.Fatal(err)
		}
	}
	checkKinds(t, st)

	// A damaged one still lists, with the kind its reason says; verify
	// names the damage.
	key := "snapshots/" + ids[1] + ".snap"
	attrs, err := b.Attributes(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	data, err := b.ReadAll(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	nl := strings.IndexByte(string(data), '\n')
	for i := nl + 1; i < len(data); i++ {
		data[i] ^= 0x55
	}
	if err := b.WriteAll(ctx, key, data, &blob.WriterOptions{Metadata: attrs.Metadata}); err != nil {
		t.Fatal(err)
	}
	infos, err := st.Snapshots().List(ctx)
	if err != nil || len(infos) != len(ids) || infos[1].Kind != snapshot.KindFull {
		t.Fatalf("List with a damaged old object: %v, %+v", err, infos)
	}
	if _, err := st.Snapshots().Verify(ctx, ids[1]); !errors.Is(err, snapshot.ErrChecksum) {
		t.Errorf("Verify of the damaged object: %v", err)
	}
}

// What broke (issue 13): after snapshot --connector X, "latest" was that
// scoped snapshot, so diff latest --live saw every other connector appear
// and restore latest --connector Y found no Y.
func TestLatestIsFull(t *testing.T) {
	ctx := context.Background()
	st := store.NewStore(memblob.OpenBucket(nil))
	defer st.Close()
	ids := kindStore(t, st)
	for _, tc := range []struct {
		connectors []string
		want       string
	}{
		{nil, ids[3]},
		{[]string{"billing"}, ids[4]},
		{[]string{"orders"}, ids[3]},            // the scoped one of orders is older than the full one
		{[]string{"billing", "orders"}, ids[3]}, // the undo one holds both, but undo is never latest
		{[]string{"inventory"}, ids[3]},         // a full snapshot holds the whole cluster
	} {
		got, err := st.Snapshots().ResolveFor(ctx, "latest", tc.connectors)
		if err != nil || got != tc.want {
			t.Errorf("ResolveFor(latest, %q) = %s, %v; want %s", tc.connectors, got, err, tc.want)
		}
		snap, _, err := st.Snapshots().For(tc.connectors).GetWith(ctx, "LATEST", nil)
		if err != nil || snap.ID != tc.want {
			t.Errorf("For(%q).GetWith(LATEST): %v", tc.connectors, err)
		}
	}
	// An ID is an ID, whatever the connectors.
	if got, err := st.Snapshots().ResolveFor(ctx, ids[2], []string{"billing"}); err != nil || got != ids[2] {
		t.Errorf("ResolveFor(undo ID) = %s, %v", got, err)
	}

	// Only scoped and undo snapshots: no latest, but one for the connector
	// a scoped snapshot holds.
	st2 := store.NewStore(memblob.OpenBucket(nil))
	defer st2.Close()
	sc, err := st2.Snapshots().Put(ctx, &snapshot.Snapshot{Reason: snapshot.ReasonManual, Scope: []string{"orders"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st2.Snapshots().Resolve(ctx, "latest"); !errors.Is(err, snapshot.ErrNotFound) || !strings.Contains(err.Error(), "no full snapshot") {
		t.Errorf("latest with no full snapshot: %v", err)
	}
	if got, err := st2.Snapshots().ResolveFor(ctx, "latest", []string{"orders"}); err != nil || got != sc.ID {
		t.Errorf("latest for orders = %s, %v; want %s", got, err, sc.ID)
	}
	if _, err := st2.Snapshots().ResolveFor(ctx, "latest", []string{"billing"}); !errors.Is(err, snapshot.ErrNotFound) || !strings.Contains(err.Error(), "billing") {
		t.Errorf("latest for billing: %v", err)
	}
}

func TestResolveAmbiguous(t *testing.T) {
	ctx := context.Background()
	st := store.NewStore(memblob.OpenBucket(nil))
	defer st.Close()
	ids := kindStore(t, st)
	_, err := st.Snapshots().Resolve(ctx, ids[0][:4])
	if !errors.Is(err, snapshot.ErrAmbiguous) || !strings.Contains(err.Error(), ids[0]) {
		t.Fatalf("Resolve(%q) = %v, want ErrAmbiguous listing the matches", ids[0][:4], err)
	}
}

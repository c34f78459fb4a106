package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"gocloud.dev/blob/memblob"

	"github.com/offsetkeeper/offsetkeeper/restore/drill"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// The board shows the newest drill the store holds and its result.
func TestBoardShowsLastDrill(t *testing.T) {
	ctx := context.Background()
	cl := seededCluster(t)
	st := store.NewStore(memblob.OpenBucket(nil))
	snap, err := capture.Capture(ctx, cl, capture.Options{Reason: snapshot.ReasonScheduled})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Snapshots().Put(ctx, snap); err != nil {
		t.Fatal(err)
	}
	rep, err := drill.NewestFull(ctx, drill.Env{Store: st}, drill.Request{SkipComplete: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drill.Save(ctx, st, rep, nil); err != nil {
		t.Fatal(err)
	}
	s, err := New(Source{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	s.Register(mux)
	get := func(path string) string {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != 200 {
			t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
		return rec.Body.String()
	}
	var b Board
	if err := json.Unmarshal([]byte(get("/api/connectors")), &b); err != nil {
		t.Fatal(err)
	}
	if b.LastDrill == nil || b.LastDrill.ID != rep.ID || b.LastDrill.Result != "PASSED" || b.LastDrill.State != snap.ID || b.LastDrill.Drills != 1 {
		t.Fatalf("board's last drill %+v, want %s PASSED of %s", b.LastDrill, rep.ID, snap.ID)
	}
	if html := get("/"); !strings.Contains(html, "last drill PASSED") {
		t.Errorf("the page does not show the last drill")
	}
}

package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob/memblob"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// TestPinsOnThePage: the timeline's snapshot list and GET /api/snapshots
// show a pin and its note (escaped).
func TestPinsOnThePage(t *testing.T) {
	ctx := context.Background()
	st := store.NewStore(memblob.OpenBucket(nil))
	var ids []string
	for i := range 2 {
		info, err := st.Snapshots().Put(ctx, &snapshot.Snapshot{ClusterID: "c", Reason: snapshot.ReasonScheduled, CreatedAt: time.Now().Add(time.Duration(i-2) * time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, info.ID)
	}
	if _, _, err := st.Pins().Pin(ctx, ids[0], "INC-9 <before>", time.Now()); err != nil {
		t.Fatal(err)
	}
	s, err := New(Source{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	s.Register(mux)
	mux.HandleFunc("GET /api/snapshots", SnapshotList(st))
	get := func(path string) string {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != 200 {
			t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
		return rec.Body.String()
	}
	page := get("/timeline")
	if !strings.Contains(page, `class="pin"`) || !strings.Contains(page, "INC-9 &lt;before&gt;") || strings.Count(page, `class="pin"`) != 1 {
		t.Errorf("the timeline does not show the one pin and its note:\n%s", page)
	}
	var infos []snapshot.Info
	if err := json.Unmarshal([]byte(get("/api/snapshots")), &infos); err != nil {
		t.Fatal(err)
	}
	if len(infos) != 2 || infos[0].Pin == nil || infos[0].Pin.Note != "INC-9 <before>" || infos[1].Pin != nil {
		t.Errorf("/api/snapshots = %+v", infos)
	}
}

package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"gocloud.dev/blob/memblob"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// FuzzPageQuery: the page's query parameters (at=, from=, to=,
// connector=) and connector names in the path come from whoever can reach
// the page. Every request gets an answer, never a panic or a 500: a bad
// value is a 400 or 404 that says why, and an /api/ answer is JSON.
func FuzzPageQuery(f *testing.F) {
	ctx := context.Background()
	_, cl, _ := testkit.Seeded(f, connectdemo.DefaultSpec())
	st := store.NewStore(memblob.OpenBucket(nil))
	var first snapshot.Info
	for i := range 2 {
		snap, err := capture.Capture(ctx, cl, capture.Options{Reason: snapshot.ReasonScheduled})
		if err != nil {
			f.Fatal(err)
		}
		info, err := st.Snapshots().Put(ctx, snap)
		if err != nil {
			f.Fatal(err)
		}
		if i == 0 {
			first = info
		}
	}
	s, err := New(Source{Store: st})
	if err != nil {
		f.Fatal(err)
	}
	mux := http.NewServeMux()
	s.Register(mux)

	f.Add(uint8(0), first.ID, "live", "2026-12-07T02:15:42", connectdemo.ConnSinkS3)
	f.Add(uint8(1), "-15m", first.ID, "-1h30m", connectdemo.ConnJDBC)
	f.Add(uint8(2), "latest", "", "2026-12-07T02:15:42Z", "no such connector")
	f.Add(uint8(3), "../../etc", "%zz", "-0s", "<script>alert(1)</script>")
	f.Fuzz(func(t *testing.T, which uint8, from, to, at, connector string) {
		q := url.Values{}
		q.Set("from", from)
		q.Set("to", to)
		q.Set("at", at)
		q.Set("connector", connector)
		paths := []string{"/diff", "/api/diff", "/timeline", "/api/timeline",
			"/connectors/" + url.PathEscape(connector), "/api/connectors/" + url.PathEscape(connector)}
		path := paths[int(which)%len(paths)] + "?" + q.Encode()
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code >= 500 && rec.Code != http.StatusBadGateway {
			t.Fatalf("GET %s: %d\n%s", path, rec.Code, rec.Body)
		}
		if strings.HasPrefix(path, "/api/") && rec.Code == http.StatusOK && !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("GET %s: not JSON:\n%.300s", path, rec.Body)
		}
		if strings.Contains(rec.Body.String(), "<script>alert(1)</script>") {
			t.Fatalf("GET %s: the page holds the query unescaped", path)
		}
	})
}

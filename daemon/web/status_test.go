package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"gocloud.dev/blob/memblob"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// The board shows what the workers report in the status topic beside the
// target state: a failed task makes its connector FAILED, first on the
// board, with its trace's first line in the state cell; a missing status
// topic says so in every state cell.
func TestWorkerStates(t *testing.T) {
	ctx := context.Background()
	cl := seededCluster(t)
	failed := `{"state":"FAILED","trace":"org.apache.kafka.connect.errors.ConnectException: table shop.orders is gone\n\tat X.poll(X.java:42)","worker_id":"connect-1:8083","generation":8}`
	paused := `{"state":"PAUSED","trace":null,"worker_id":"connect-1:8083","generation":8}`
	if err := cl.ProduceSync(ctx,
		&kgo.Record{Topic: connectdemo.DefaultStatusTopic, Key: []byte("status-task-" + connectdemo.ConnJDBC + "-1"), Value: []byte(failed)},
		&kgo.Record{Topic: connectdemo.DefaultStatusTopic, Key: []byte("status-connector-" + connectdemo.ConnEOS), Value: []byte(paused)},
	).FirstErr(); err != nil {
		t.Fatal(err)
	}
	st := store.NewStore(memblob.OpenBucket(nil))
	snap, err := capture.Capture(ctx, cl, capture.Options{Reason: snapshot.ReasonScheduled})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Snapshots().Put(ctx, snap); err != nil {
		t.Fatal(err)
	}
	var page string
	serve := func(topic string) (Board, string) {
		s, err := New(Source{Store: st, Status: func(ctx context.Context) (*capture.Statuses, error) {
			return capture.ReadStatuses(ctx, cl, topic)
		}})
		if err != nil {
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		s.Register(mux)
		var b Board
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", "/api/connectors", nil))
		if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
			t.Fatalf("/api/connectors: %v\n%s", err, rec.Body)
		}
		rec = httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		html := rec.Body.String()
		rec = httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", "/connectors/"+connectdemo.ConnJDBC, nil))
		page = rec.Body.String()
		return b, html
	}

	b, html := serve(connectdemo.DefaultStatusTopic)
	if b.StatusTopic != "read" || len(b.Connectors) < 14 || b.Counts[StatusFailed] != 1 {
		t.Fatalf("board: status topic %q, %d connectors, counts %v", b.StatusTopic, len(b.Connectors), b.Counts)
	}
	first := b.Connectors[0]
	wantSummary := "RUNNING · 1/2 tasks running · task 1 FAILED: org.apache.kafka.connect.errors.ConnectException: table shop.orders is gone"
	if first.Name != connectdemo.ConnJDBC || first.Status != StatusFailed || first.WorkerSummary != wantSummary ||
		first.Worker == nil || len(first.Worker.Tasks) != 2 || first.Worker.Tasks[1].WorkerID != "connect-1:8083" {
		t.Errorf("first row %s: status %s, worker %q %+v; want %s FAILED, %q", first.Name, first.Status, first.WorkerSummary, first.Worker, connectdemo.ConnJDBC, wantSummary)
	}
	rows := map[string]ConnectorRow{}
	for _, r := range b.Connectors {
		rows[r.Name] = r
	}
	if r := rows[connectdemo.ConnMirror]; r.Status == StatusFailed || r.WorkerSummary != "RUNNING · 2/2 tasks running" {
		t.Errorf("%s: %s, worker %q", r.Name, r.Status, r.WorkerSummary)
	}
	if _, ok := rows[connectdemo.ConnDeleted]; ok && rows[connectdemo.ConnDeleted].Worker != nil {
		t.Errorf("%s: worker %+v; DESTROYED is a deletion", connectdemo.ConnDeleted, rows[connectdemo.ConnDeleted].Worker)
	}
	i := strings.Index(html, `<tr class="row st-failed" data-connector="`+connectdemo.ConnJDBC+`"`)
	if i < 0 || i > strings.Index(html, `<tr class="row st-ok"`) {
		t.Fatalf("GET /: no FAILED row for %s before the OK rows", connectdemo.ConnJDBC)
	}
	row, _, _ := strings.Cut(html[i:], "</tr>")
	if !strings.Contains(row, `>FAILED</span>`) || !strings.Contains(row, "worker: RUNNING · 1/2 tasks running · task 1 FAILED: ") {
		t.Errorf("GET /: FAILED row %s", row)
	}
	if r := rows[connectdemo.ConnEOS]; r.State != snapshot.StateStarted || r.Mismatch != "target STARTED, but the worker reports PAUSED" || r.Status == StatusFailed {
		t.Errorf("%s: target %s, worker %q, mismatch %q; want the disagreement said", r.Name, r.State, r.WorkerSummary, r.Mismatch)
	}

	if !strings.Contains(page, `<dt>task 1</dt><dd><span class="state s-failed">FAILED</span>`) || !strings.Contains(page, "<pre class=\"trace\">org.apache.kafka.connect.errors.ConnectException") {
		t.Errorf("connector page of %s does not show the failed task and its trace", connectdemo.ConnJDBC)
	}

	b, html = serve("no-such-status")
	if b.StatusTopic != "missing" || b.Counts[StatusFailed] != 0 || b.Connectors[0].WorkerSummary != "no status topic" ||
		!strings.Contains(html, "worker: no status topic") {
		t.Errorf("missing status topic: %q, counts %v, first row %q", b.StatusTopic, b.Counts, b.Connectors[0].WorkerSummary)
	}
}

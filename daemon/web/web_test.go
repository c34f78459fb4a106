package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"gocloud.dev/blob/memblob"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// With the journal off the page works from snapshots alone: the board
// lists every connector, the sparklines have a point per snapshot, the
// diff of two snapshots shows a sink moved forward, the timeline's plan
// falls back to a snapshot, and no log end is claimed.
func TestSnapshotsOnly(t *testing.T) {
	ctx := context.Background()
	cl := seededCluster(t)
	st := store.NewStore(memblob.OpenBucket(nil))
	put := func() snapshot.Info {
		snap, err := capture.Capture(ctx, cl, capture.Options{Reason: snapshot.ReasonScheduled})
		if err != nil {
			t.Fatal(err)
		}
		info, err := st.Snapshots().Put(ctx, snap)
		if err != nil {
			t.Fatal(err)
		}
		return info
	}
	first := put()
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: "clicks", Partition: 0, At: 90, LeaderEpoch: -1})
	if _, err := kadm.NewClient(cl).CommitOffsets(ctx, connectdemo.GroupSinkS3, offs); err != nil {
		t.Fatal(err)
	}
	second := put()

	s, err := New(Source{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	s.Register(mux)
	get := func(path string, v any) string {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != 200 {
			t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
		if v != nil {
			if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
				t.Fatalf("GET %s: %v", path, err)
			}
		}
		return rec.Body.String()
	}
	var b Board
	get("/api/connectors", &b)
	if b.Journal.On || b.LogEnd || len(b.Connectors) < 14 || b.Counts[StatusOK] != len(b.Connectors) {
		t.Fatalf("board: journal %+v, log end %v, %d connectors, counts %v", b.Journal, b.LogEnd, len(b.Connectors), b.Counts)
	}
	for _, r := range b.Connectors {
		if r.Name == connectdemo.ConnSinkS3 && (len(r.Progress) < 2 || r.Progress[len(r.Progress)-1].V <= r.Progress[0].V || r.Lag != nil) {
			t.Errorf("%s: progress %v, lag %v; want it to rise over the two snapshots, and no lag without brokers", r.Name, r.Progress, r.Lag)
		}
	}
	html := get("/", nil)
	if !strings.Contains(html, "journal off: snapshots only") || !strings.Contains(html, "no brokers: committed offsets only") {
		t.Errorf("board does not say it works from snapshots only, without brokers")
	}
	var d Diff
	get("/api/diff?from="+first.ID+"&to="+second.ID, &d)
	if len(d.Connectors) != 1 || d.Connectors[0].Name != connectdemo.ConnSinkS3 || d.Connectors[0].Rows[0].Verdict != MovedForward {
		t.Errorf("diff %s → %s: %+v", first.ID, second.ID, d.Connectors)
	}
	var tl Timeline
	get("/api/timeline?at="+first.CreatedAt.Add(time.Millisecond).Format(time.RFC3339Nano)+"&connector="+connectdemo.ConnSinkS3, &tl)
	if len(tl.Snapshots) != 2 || tl.Plan == nil || tl.Plan.Diff == nil || tl.Plan.Diff.Counts[MovedBackward] != 1 {
		t.Errorf("timeline: %d snapshots, plan %+v", len(tl.Snapshots), tl.Plan)
	}
	get("/connectors/"+connectdemo.ConnSinkS3, nil)
	get("/timeline", nil)
	get("/diff?from="+first.ID, nil)
	var since Diff
	if get("/api/diff", &since); since.From.Base != second.ID || !since.To.Live || len(since.Connectors) != 0 {
		t.Errorf("diff since the newest snapshot: %+v", since)
	}
}

// The plotted positions of the known connectors, SQL Server LSNs in order.
func TestPositions(t *testing.T) {
	for v, want := range map[string]map[string]float64{
		`{"ts_sec":1700000000,"file":"mysql-bin.000003","pos":154}`: {"pos": 154, "ts_sec": 1700000000},
		`{"lsn":23970112,"ts_usec":1700000000773000,"txId":773}`:    {"lsn": 23970112, "ts_usec": 1700000000773000},
		`{"incrementing":1400}`:                                     {"incrementing": 1400},
		`{"position":42}`:                                           {"position": 42},
		`{"resume_token":"x"}`:                                      {},
		`{"offset":7,"pos":"x"}`:                                    {"offset": 7},
	} {
		got := positions([]byte(v))
		if len(got) != len(want) {
			t.Errorf("positions(%s) = %v, want %v", v, got, want)
		}
		for f, x := range want {
			if got[f] != x {
				t.Errorf("positions(%s)[%s] = %v, want %v", v, f, got[f], x)
			}
		}
	}
	a := positions([]byte(`{"commit_lsn":"0000002a:00000120:0003"}`))["commit_lsn"]
	b := positions([]byte(`{"commit_lsn":"0000002a:00000121:0001"}`))["commit_lsn"]
	if a == 0 || b <= a {
		t.Errorf("SQL Server LSNs: %v then %v, want increasing", a, b)
	}
}

// Spans no epoch covers, and a journal that stopped, are gaps; epochs
// that overlap (each starts from a snapshot taken while the last ran)
// are not.
func TestCoverageGaps(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	h := newHistory(t0, t0.Add(3*time.Hour))
	h.coverageGaps([]snapshot.Coverage{
		{Epoch: "a", From: t0, To: t0.Add(time.Hour)},
		{Epoch: "b", From: t0.Add(time.Hour - time.Minute), To: t0.Add(90 * time.Minute)},
		{Epoch: "c", From: t0.Add(2 * time.Hour), To: t0.Add(150 * time.Minute)},
	}, t0.Add(3*time.Hour))
	if len(h.gaps) != 2 || !h.gaps[0].From.Equal(t0.Add(90*time.Minute)) || !h.gaps[0].To.Equal(t0.Add(2*time.Hour)) ||
		!h.gaps[1].From.Equal(t0.Add(150*time.Minute)) {
		t.Errorf("gaps %+v", h.gaps)
	}
}

// A sum of step series counts each series' first value before it starts,
// and a flat run keeps its ends only.
func TestStepSumTidy(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	got := stepSum([][]Point{{{at(0), 10}, {at(2), 12}}, {{at(1), 5}, {at(3), 7}}})
	want := []Point{{at(0), 15}, {at(1), 15}, {at(2), 17}, {at(3), 19}}
	if len(got) != len(want) {
		t.Fatalf("stepSum = %v, want %v", got, want)
	}
	for i := range want {
		if !got[i].T.Equal(want[i].T) || got[i].V != want[i].V {
			t.Errorf("stepSum[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	flat := tidy([]Point{{at(3), 1}, {at(0), 1}, {at(1), 1}, {at(2), 1}, {at(4), 2}})
	if len(flat) != 3 || !flat[0].T.Equal(at(0)) || !flat[1].T.Equal(at(3)) || flat[2].V != 2 {
		t.Errorf("tidy = %v", flat)
	}
}

// seededCluster starts a kfake cluster seeded with the demo's Connect
// cluster (its connectors keep running until the test ends) and returns a
// client of it; both are closed when the test ends.
func seededCluster(t *testing.T) *kgo.Client {
	t.Helper()
	_, cl, _ := testkit.Seeded(t, connectdemo.DefaultSpec())
	return cl
}

// The page prints the restore commands the CLI prints (one function builds
// them): the dry run and the real form, with the settings of the daemon's
// command line and, with a Connect URL known, stopping and resuming.
func TestPlanCommands(t *testing.T) {
	ctx := context.Background()
	cl := seededCluster(t)
	st := store.NewStore(memblob.OpenBucket(nil))
	snap, err := capture.Capture(ctx, cl, capture.Options{Reason: snapshot.ReasonScheduled})
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Snapshots().Put(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	settings := restore.CommandSettings{Flags: []string{"--store", "s3://b/p", "--brokers", "k:9092"}, ConnectURL: true}
	s, err := New(Source{Store: st, Commands: settings})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	s.Register(mux)
	at := info.CreatedAt.Add(time.Millisecond)
	path := "/api/timeline?at=" + at.Format(time.RFC3339Nano) + "&connector=" + connectdemo.ConnSinkS3
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	var tl Timeline
	if err := json.Unmarshal(rec.Body.Bytes(), &tl); err != nil || tl.Plan == nil {
		t.Fatalf("GET %s: %v %s", path, err, rec.Body)
	}
	want := settings.At(at, connectdemo.ConnSinkS3)
	if tl.Plan.Commands != want || tl.Plan.Command != want.DryRun || !tl.Plan.StopsConnectors ||
		!strings.HasSuffix(want.Run, " --store s3://b/p --brokers k:9092 --stop-connectors --resume") {
		t.Errorf("plan commands %+v (command %q), want %+v", tl.Plan.Commands, tl.Plan.Command, want)
	}
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", strings.Replace(path, "/api/", "/", 1), nil))
	for _, c := range []string{want.DryRun, want.Run} {
		if !strings.Contains(rec.Body.String(), ">"+c+"</pre>") {
			t.Errorf("the page does not print %q:\n%s", c, rec.Body)
		}
	}
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connecttest"
	"github.com/offsetkeeper/offsetkeeper/internal/realconnect"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// restOffsets reads a GET /connectors/X/offsets body as Connect compares
// it: a sorted list of its entries, each partition and offset as a JSON
// map (field order and number spelling aside).
func restOffsets(t *testing.T, body []byte) []string {
	t.Helper()
	var v struct {
		Offsets []struct {
			Partition map[string]any `json:"partition"`
			Offset    map[string]any `json:"offset"`
		} `json:"offsets"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("decode offsets body %s: %v", body, err)
	}
	var out []string
	for _, e := range v.Offsets {
		b, err := json.Marshal([]any{e.Partition, e.Offset})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	slices.Sort(out)
	return out
}

// TestRESTOnlyRealWorker: a team with the Connect REST API alone, against
// a real Connect 3.8 worker. snapshot --via connect, a bad reset (the
// source's offsets DELETEd, the sink's PATCHed back to 0), then restore
// --via connect, with no reachable broker given to either: GET
// /connectors/X/offsets is again exactly what it was, for the source and
// the sink. restore --via kafka of that snapshot is refused, writing
// nothing, and so is a dry run.
func TestRESTOnlyRealWorker(t *testing.T) {
	realconnect.Dir(t)
	c := realconnect.NewCluster(t)
	c.CreateTopic(t, "lines", 1, false)
	w := realconnect.Start(t, c, realconnect.Options{})
	rest := w.REST(t)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.txt"), filepath.Join(dir, "out.txt")
	realconnect.AppendLines(t, in, "one", "two", "three")
	rest.Create("src", realconnect.FileSource(in, "lines"), "")
	rest.Create("sink", realconnect.FileSink(out, "lines"), "")
	rest.WaitState("src", "RUNNING", 1)
	rest.WaitState("sink", "RUNNING", 1)
	realconnect.Eventually(t, "source at the end of its file, sink past its records", func() (bool, string) {
		src, sink := rest.Offsets("src"), rest.Offsets("sink")
		return realconnect.SourcePosition(t, src, in) == int64(len("one\ntwo\nthree\n")) && realconnect.SinkOffsets(t, sink)["lines/0"] == 3, string(src) + " " + string(sink)
	})
	rest.Stop("src")
	rest.Stop("sink")
	rest.WaitState("src", "STOPPED", 0)
	rest.WaitState("sink", "STOPPED", 0)
	wantSrc, wantSink := restOffsets(t, rest.Offsets("src")), restOffsets(t, rest.Offsets("sink"))

	store := filepath.Join(dir, "store")
	// No broker answers there: REST access alone.
	cli := func(want int, args ...string) (string, string) {
		t.Helper()
		args = append(args, "--store", store, "--brokers", "127.0.0.1:1", "--connect-url", w.URL)
		code, stdout, stderr := runCLI(t, args...)
		if code != want {
			t.Fatalf("offsetkeeper %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, want, stdout, stderr)
		}
		return stdout, stderr
	}
	stdout, _ := cli(0, "snapshot", "--via", "connect")
	id := lastLine(stdout)
	if !strings.Contains(stdout, "captured through the Connect REST API") {
		t.Errorf("snapshot --via connect does not say how it captured:\n%s", stdout)
	}
	if list, _ := cli(0, "list"); !strings.Contains(list, "full rest") {
		t.Errorf("list does not mark the REST-captured snapshot:\n%s", list)
	}
	if show, _ := cli(0, "show", id); !strings.Contains(show, "captured  through the Connect REST API") {
		t.Errorf("show does not say the snapshot is REST-captured:\n%s", show)
	}
	for name, want := range map[string][]string{"src": wantSrc, "sink": wantSink} {
		shown, _ := cli(0, "show", id, "--connector", name, "--output", "connect-rest")
		if got := restOffsets(t, []byte(shown)); !slices.Equal(got, want) {
			t.Errorf("%s: show --output connect-rest = %v, GET offsets = %v", name, got, want)
		}
	}

	// The bad reset.
	if r := rest.DeleteOffsets("src"); r.Code != 200 {
		t.Fatalf("DELETE offsets of src: %s", r)
	}
	if r := rest.PatchOffsets("sink", []byte(`{"offsets":[{"partition":{"kafka_topic":"lines","kafka_partition":0},"offset":{"kafka_offset":0}}]}`)); r.Code != 200 {
		t.Fatalf("PATCH offsets of sink: %s", r)
	}
	damagedSrc, damagedSink := restOffsets(t, rest.Offsets("src")), restOffsets(t, rest.Offsets("sink"))
	if slices.Equal(damagedSrc, wantSrc) || slices.Equal(damagedSink, wantSink) {
		t.Fatalf("the bad reset changed nothing: %v %v", damagedSrc, damagedSink)
	}
	unchanged := func(what string) {
		t.Helper()
		if got := restOffsets(t, rest.Offsets("src")); !slices.Equal(got, damagedSrc) {
			t.Errorf("%s wrote the source's offsets: %v", what, got)
		}
		if got := restOffsets(t, rest.Offsets("sink")); !slices.Equal(got, damagedSink) {
			t.Errorf("%s wrote the sink's offsets: %v", what, got)
		}
	}

	_, stderr := cli(3, "restore", id)
	wantLines(t, "stderr", stderr, "was captured through the Connect REST API (Connect's normalised keys, no partitions): restore it with --via connect --connect-url URL")
	unchanged("restore --via kafka")
	if diff, _ := cli(0, "diff", id); !strings.Contains(diff, "source  rest") || !strings.Contains(diff, "sink") {
		t.Errorf("diff with the live state through REST shows no change:\n%s", diff)
	}
	stdout, _ = cli(0, "restore", id, "--via", "connect", "--dry-run")
	wantLines(t, "stdout", stdout, "dry run: nothing written")
	unchanged("restore --dry-run")

	stdout, _ = cli(0, "restore", id, "--via", "connect")
	wantLines(t, "stdout", stdout, "undo snapshot: ", "verified through Connect: 2 connectors show the restored offsets")
	if got := restOffsets(t, rest.Offsets("src")); !slices.Equal(got, wantSrc) {
		t.Errorf("source offsets after the restore: %v, want %v", got, wantSrc)
	}
	if got := restOffsets(t, rest.Offsets("sink")); !slices.Equal(got, wantSink) {
		t.Errorf("sink offsets after the restore: %v, want %v", got, wantSink)
	}
	stdout, _ = cli(0, "restore", id, "--via", "connect")
	wantLines(t, "stdout", stdout, "nothing to do")

	// Running again, then reset while stopped and resumed by hand: restore
	// --stop-connectors --resume stops them through REST alone (no group
	// to watch, no config topic to read), restores and resumes them.
	for _, name := range []string{"src", "sink"} {
		rest.Resume(name)
		rest.WaitState(name, "RUNNING", 1)
		rest.Stop(name)
		rest.WaitState(name, "STOPPED", 0)
	}
	// Past the end of its file: the source, resumed, reads nothing more.
	if r := rest.PatchOffsets("src", []byte(`{"offsets":[{"partition":{"filename":`+strconv.Quote(in)+`},"offset":{"position":1000}}]}`)); r.Code != 200 {
		t.Fatalf("PATCH offsets of src: %s", r)
	}
	for _, name := range []string{"src", "sink"} {
		rest.Resume(name)
		rest.WaitState(name, "RUNNING", 1)
	}
	stdout, _ = cli(0, "restore", id, "--via", "connect", "--stop-connectors", "--resume", "--connector", "src")
	wantLines(t, "stdout", stdout, "stopping 1 connector: src", `changed  {"position":1000} -> {"position":14}`,
		"verified through Connect: 1 connector shows the restored offsets", "resumed: connector src (RUNNING, 1 task)")
	rest.WaitState("src", "RUNNING", 1)
	if got := restOffsets(t, rest.Offsets("src")); !slices.Equal(got, wantSrc) {
		t.Errorf("source offsets after restore --stop-connectors --resume: %v, want %v", got, wantSrc)
	}
}

// oldOrGhost stands in front of a Connect REST API: with old set it
// answers GET /connectors/X/offsets 404 as a worker older than 3.5 does
// (it has no such resource); with ghost set GET /connectors also lists a
// connector Connect does not have, as one deleted between the listing
// and its reads.
func oldOrGhost(t *testing.T, target string, old, ghost bool) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case old && r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/offsets"):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error_code":404,"message":"HTTP 404 Not Found"}`)
		case ghost && r.Method == http.MethodGet && r.URL.Path == "/connectors" && r.URL.RawQuery == "":
			resp, err := http.Get(target + "/connectors")
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			defer resp.Body.Close()
			var names []string
			if err := json.NewDecoder(resp.Body).Decode(&names); err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			_ = json.NewEncoder(w).Encode(append(names, "ghost"))
		default:
			proxy.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestRESTOnlyErrors: the failure paths of a capture and restore through
// the Connect REST API, against the fake Connect REST API over kfake:
// workers too old for GET offsets (nothing stored, the error names the
// version needed), a connector that vanishes between the listing and its
// reads (left out, with a warning), restore --via kafka of a REST-captured
// snapshot (refused, exit 3, nothing written, no broker asked) and a dry
// run through Connect (nothing written, no undo snapshot).
func TestRESTOnlyErrors(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	srv := c.startConnect(connecttest.Options{Version: "3.7.0"})

	_, stderr := c.mustRun(1, "snapshot", "--via", "connect", "--connect-url", oldOrGhost(t, srv.URL, true, false))
	wantLines(t, "stderr", stderr, "needs GET /connectors/{name}/offsets, Kafka 3.5 or later (KIP-875)", "answer 404 to GET /connectors/", "nothing was stored")
	if ids := c.storeIDs(); len(ids) != 0 {
		t.Fatalf("a failed capture stored %v", ids)
	}
	_, stderr = c.mustRun(2, "snapshot", "--via", "connect")
	wantLines(t, "stderr", stderr, "--via connect captures through the Connect REST API: give --connect-url")

	out, stderr := c.mustRun(0, "snapshot", "--via", "connect", "--connect-url", oldOrGhost(t, srv.URL, false, true))
	wantLines(t, "stderr", strings.Join(strings.Fields(stderr), " "), `connector "ghost" was listed by GET /connectors but is gone (404) since: left out of the snapshot`)
	id := lastLine(out)
	shown, _ := c.mustRun(0, "show", id, "--output", "json")
	if strings.Contains(shown, `"name":"ghost"`) || strings.Contains(shown, `"name": "ghost"`) {
		t.Errorf("the vanished connector is in the snapshot")
	}
	if !strings.Contains(shown, `"captured":"connect-rest"`) {
		t.Errorf("show --output json does not mark the snapshot captured through REST:\n%.400s", shown)
	}
	for _, name := range []string{connectdemo.ConnJDBC, connectdemo.ConnSinkS3} {
		got, _ := c.mustRun(0, "show", id, "--connector", name, "--output", "connect-rest")
		rc := restClient(t, srv)
		want, err := rc.Offsets(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := restOffsets(t, []byte(got)), restOffsets(t, want); !slices.Equal(g, w) {
			t.Errorf("%s: show --output connect-rest = %v, GET offsets = %v", name, g, w)
		}
	}

	c.badReset()
	ends := c.ends(offsetsTopics()...)
	ids := c.storeIDs()
	// No broker to ask: the refusal comes before any.
	code, _, stderr := runCLI(t, "restore", id, "--store", c.store, "--brokers", "127.0.0.1:1", "--connect-url", srv.URL)
	if code != 3 {
		t.Fatalf("restore --via kafka of a REST-captured snapshot: exit %d, want 3\n%s", code, stderr)
	}
	wantLines(t, "stderr", stderr, "snapshot "+id+" was captured through the Connect REST API (Connect's normalised keys, no partitions): restore it with --via connect --connect-url URL", "nothing was written")
	out, _ = c.mustRun(0, "restore", id, "--via", "connect", "--connect-url", srv.URL, "--dry-run")
	wantLines(t, "stdout", out, "dry run: nothing written", "  source  rest  ")
	if got := c.ends(offsetsTopics()...); fmt.Sprint(got) != fmt.Sprint(ends) {
		t.Errorf("a refused restore or a dry run wrote: %v, were %v", got, ends)
	}
	if got := c.storeIDs(); !slices.Equal(got, ids) {
		t.Errorf("a refused restore or a dry run stored a snapshot: %v, were %v", got, ids)
	}
	out, _ = c.mustRun(0, "list")
	if !strings.Contains(out, "full rest") {
		t.Errorf("list does not mark the REST-captured snapshot:\n%s", out)
	}
}

// TestRESTOnlyDaemon: daemon --capture-via connect takes its scheduled
// snapshots through the Connect REST API, stores them, and says once at
// start that the journal is off; events and restore --at say why.
func TestRESTOnlyDaemon(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	srv := c.startConnect(connecttest.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr testkit.SyncBuffer
	exit := make(chan int, 1)
	go func() {
		// No broker: REST access alone.
		exit <- run(ctx, []string{"daemon", "--capture-via", "connect", "--connect-url", srv.URL, "--brokers", "127.0.0.1:1",
			"--store", c.store, "--schedule", "@every 1h", "--listen", "", "--log-format", "json"}, &stdout, &stderr)
	}()
	defer func() {
		cancel()
		select {
		case code := <-exit:
			if code != 0 {
				t.Errorf("daemon exit %d\n%s", code, stderr.String())
			}
		case <-time.After(30 * time.Second):
			t.Error("daemon did not stop")
		}
	}()
	infos := waitListed(t, c.store, &stderr)
	if i := infos[0]; i.Captured != snapshot.CapturedConnectREST || i.Reason != snapshot.ReasonScheduled || i.Connectors == 0 {
		t.Errorf("the scheduled snapshot: %+v", i)
	}
	if n := strings.Count(stderr.String(), journalOffREST); n != 1 {
		t.Errorf("the journal-off line is logged %d times, want once:\n%s", n, stderr.String())
	}
	_, errOut := c.mustRun(1, "events")
	wantLines(t, "stderr", strings.Join(strings.Fields(errOut), " "), "a daemon with --capture-via connect keeps no journal")
	out, _ := c.mustRun(0, "restore", "--at", "-1ms", "--via", "connect", "--connect-url", srv.URL, "--dry-run")
	wantLines(t, "stdout", out, "no journal covers it", "was captured through the Connect REST API, which keeps no journal")
}

// waitListed waits up to 30 seconds for a snapshot to be listed in the
// store at url (a daemon's first), and returns the listing; logs is the
// daemon's, printed when none comes.
func waitListed(t *testing.T, url string, logs *testkit.SyncBuffer) []snapshot.Info {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := store.OpenStore(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		infos, err := st.Snapshots().List(context.Background())
		st.Close()
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if len(infos) > 0 {
			return infos
		}
		if time.Now().After(deadline) {
			t.Fatalf("no snapshot stored after 30s\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

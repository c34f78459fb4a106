package connectsim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectjson"
	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim/connectsimtest"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// seeded starts a kfake cluster seeded with DefaultSpec and a Server over it.
func seeded(t *testing.T, opts connectsim.Options) (*kgo.Client, *connectdemo.Expected, *connectsim.Server) {
	t.Helper()
	cl, exp := seedCluster(t)
	srv, err := connectsim.Start(cl, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return cl, exp, srv
}

// seededFaults is seeded with the Server behind connectsimtest's faults.
func seededFaults(t *testing.T, opts connectsim.Options) (*kgo.Client, *connectdemo.Expected, *connectsimtest.Server) {
	t.Helper()
	cl, exp := seedCluster(t)
	srv, err := connectsimtest.Start(cl, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return cl, exp, srv
}

// seedCluster starts a kfake cluster seeded with DefaultSpec.
func seedCluster(t *testing.T) (*kgo.Client, *connectdemo.Expected) {
	t.Helper()
	_, cl := testkit.Cluster(t)
	exp, err := connectdemo.Seed(t.Context(), cl, connectdemo.DefaultSpec())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(exp.Stop)
	return cl, exp
}

// call sends one request and returns the status and body.
func call(t *testing.T, method, u string, body string) (int, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, u, r)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func connURL(base, name, tail string) string {
	return base + "/connectors/" + url.PathEscape(name) + tail
}

// TestConfigTopicView: both views agree on every connector of DefaultSpec,
// including the traps (an aborted STOPPED write, a tombstoned target state,
// the pre-3.5 form, a connector that never committed tasks, a deleted one).
func TestConfigTopicView(t *testing.T) {
	cl, exp, srv := seeded(t, connectsim.Options{})
	ctx := context.Background()
	configs, err := capture.ReadConfigs(ctx, cl, connectdemo.DefaultConfigsTopic)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range exp.Connectors {
		got, ok := configs[name]
		if ok != want.HasConfig {
			t.Errorf("%s: has config %v, want %v", name, ok, want.HasConfig)
			continue
		}
		if ok && (got.TargetState != want.TargetState || got.Tasks != want.Tasks) {
			t.Errorf("%s: %+v, want %s with %d tasks", name, got, want.TargetState, want.Tasks)
		}
	}

	rc, err := connectrest.New(connectrest.Config{URLs: []string{srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	all, err := rc.Connectors(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range exp.Connectors {
		e, ok := all[name]
		if ok != want.HasConfig {
			t.Errorf("REST lists %s: %v, want %v", name, ok, want.HasConfig)
			continue
		}
		if !ok {
			if _, err := rc.Status(ctx, name); !errors.Is(err, connectrest.ErrNotFound) || !strings.Contains(err.Error(), "No status found for connector "+name) {
				t.Errorf("status of deleted %s: %v", name, err)
			}
			continue
		}
		wantState := map[string]string{connectdemo.StateStarted: "RUNNING", connectdemo.StatePaused: "PAUSED", connectdemo.StateStopped: "STOPPED"}[want.TargetState]
		if e.Status.Connector.State != wantState || e.Status.Type != want.Type || e.Info.Type != want.Type || len(e.Status.Tasks) != max(want.Tasks, 0) {
			t.Errorf("REST %s: %s (%s), want %s with %d tasks (%s)", name, e.Status, e.Status.Type, wantState, want.Tasks, want.Type)
		}
		st, err := rc.Status(ctx, name)
		if err != nil || st.String() != e.Status.String() {
			t.Errorf("status of %s: %v %v, listed %s", name, st, err, e.Status)
		}
	}
	si, err := rc.ServerInfo(ctx)
	if err != nil || si.KafkaClusterID != connectdemo.DefaultClusterID || si.Version != "3.7.0" {
		t.Errorf("GET /: %+v %v", si, err)
	}
}

// TestStopResumeAndOffsets: stop writes what the herder writes, status
// lags as configured, PATCH refuses a running connector and alters a
// stopped one exactly as Connect would, GET shows it, resume restarts.
func TestStopResumeAndOffsets(t *testing.T) {
	cl, _, srv := seeded(t, connectsim.Options{StopLag: 2})
	ctx := context.Background()
	name := connectdemo.ConnJDBC
	body := `{"offsets":[{"partition":{"table":"shop.orders","protocol":"1"},"offset":{"incrementing":7}}]}`

	code, resp := call(t, http.MethodPatch, connURL(srv.URL, name, "/offsets"), body)
	if code != 400 || !strings.Contains(resp, "Connectors must be in the STOPPED state") {
		t.Fatalf("PATCH of a running connector: %d %s", code, resp)
	}
	if code, resp := call(t, http.MethodPatch, connURL(srv.URL, name, "/offsets"), `{"offsets":[]}`); code != 400 || !strings.Contains(resp, connectsim.MsgNoOffsets) {
		t.Fatalf("PATCH with no offsets: %d %s", code, resp)
	}
	if code, resp := call(t, http.MethodPut, connURL(srv.URL, "nope", "/stop"), ""); code != 404 || !strings.Contains(resp, `"error_code":404`) {
		t.Fatalf("stop of an unknown connector: %d %s", code, resp)
	}

	if code, resp := call(t, http.MethodPut, connURL(srv.URL, name, "/stop"), ""); code != 204 {
		t.Fatalf("stop: %d %s", code, resp)
	}
	configs, err := capture.ReadConfigs(ctx, cl, connectdemo.DefaultConfigsTopic)
	if err != nil {
		t.Fatal(err)
	}
	if c := configs[name]; !c.Stopped() {
		t.Fatalf("after stop the config topic says %+v", c)
	}
	// The status lags two reads behind.
	for i, want := range []string{"RUNNING", "RUNNING", "STOPPED"} {
		_, resp := call(t, http.MethodGet, connURL(srv.URL, name, "/status"), "")
		var st connectrest.Status
		if err := json.Unmarshal([]byte(resp), &st); err != nil || st.Connector.State != want {
			t.Fatalf("status read %d: %s, want %s", i, resp, want)
		}
		if want == "STOPPED" && !strings.Contains(resp, `"tasks":[]`) {
			t.Errorf("a stopped connector's status: %s", resp)
		}
	}

	ends := endOffsets(t, cl, connectdemo.DefaultOffsetsTopic)
	code, resp = call(t, http.MethodPatch, connURL(srv.URL, name, "/offsets"), body)
	if code != 200 || resp != `{"message":"`+connectsim.MsgAltered+`"}` {
		t.Fatalf("PATCH: %d %s", code, resp)
	}
	// Normalized as Connect does: HashMap order, whatever the body's order.
	key := []byte(`["jdbc-orders-source",{"protocol":"1","table":"shop.orders"}]`)
	recs := readSince(t, cl, connectdemo.DefaultOffsetsTopic, ends)
	if len(recs) != 1 || !bytes.Equal(recs[0].Key, key) || string(recs[0].Value) != `{"incrementing":7}` || recs[0].Partition != connectdemo.Murmur2Partition(key, 25) {
		t.Fatalf("PATCH wrote %v", recs)
	}
	_, resp = call(t, http.MethodGet, connURL(srv.URL, name, "/offsets"), "")
	if !strings.Contains(resp, `{"partition":{"protocol":"1","table":"shop.orders"},"offset":{"incrementing":7}}`) {
		t.Errorf("GET offsets after PATCH: %s", resp)
	}

	if code, _ := call(t, http.MethodPut, connURL(srv.URL, name, "/resume"), ""); code != 202 {
		t.Fatalf("resume: %d", code)
	}
	configs, _ = capture.ReadConfigs(ctx, cl, connectdemo.DefaultConfigsTopic)
	if c := configs[name]; c.TargetState != "STARTED" || c.Tasks != 2 {
		t.Errorf("after resume the config topic says %s, want STARTED with 2 tasks (tasks.max)", c.TargetState)
	}
}

// TestSinkOffsetsAndMembers: a running sink keeps a member, PATCH fails
// while it is there, and works once the connector is stopped and the
// member gone; a null offset deletes.
func TestSinkOffsetsAndMembers(t *testing.T) {
	cl, _, srv := seeded(t, connectsim.Options{SinkMembers: true, MemberLeaveDelay: 50 * time.Millisecond})
	ctx := context.Background()
	adm := kadm.NewClient(cl)
	group := connectdemo.GroupSinkES
	if d := describe(t, adm, group); d.State != "Stable" || len(d.Members) != 1 {
		t.Fatalf("group %s of a running sink: %s with %d members", group, d.State, len(d.Members))
	}
	rc, err := connectrest.New(connectrest.Config{URLs: []string{srv.URL}, PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Stop(ctx, connectdemo.ConnSinkES); err != nil {
		t.Fatal(err)
	}
	// The member leaves MemberLeaveDelay after the stop.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		st, err := rc.Status(ctx, connectdemo.ConnSinkES)
		if err != nil {
			t.Fatal(err)
		}
		if d := describe(t, adm, group); st.Stopped() && d.State == "Empty" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("connector %s not stopped with its group empty after 20s", connectdemo.ConnSinkES)
		}
	}
	res, err := rc.AlterOffsets(ctx, connectdemo.ConnSinkES, []byte(`{"offsets":[
		{"partition":{"kafka_topic":"orders","kafka_partition":0},"offset":{"kafka_offset":"3"}},
		{"partition":{"kafka_topic":"orders","kafka_partition":"1"},"offset":null}]}`))
	if err != nil || res.FrameworkOnly || res.Message != connectsim.MsgAltered {
		t.Fatalf("PATCH sink: %+v %v", res, err)
	}
	fetched, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := fetched.Lookup("orders", 0); o.At != 3 {
		t.Errorf("orders/0 = %d, want 3", o.At)
	}
	if o, ok := fetched.Lookup("orders", 1); ok && o.At >= 0 {
		t.Errorf("orders/1 = %d, want deleted", o.At)
	}
	_, err = rc.AlterOffsets(ctx, connectdemo.ConnSinkES, []byte(`{"offsets":[{"partition":{"kafka_topic":"orders","kafka_partition":1.5},"offset":null}]}`))
	var apiErr *connectrest.Error
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || !strings.Contains(apiErr.Message, "Partition values for sink connectors need to be integers") {
		t.Errorf("PATCH with a bad partition: %v", err)
	}
	if err := rc.Resume(ctx, connectdemo.ConnSinkES); err != nil {
		t.Fatal(err)
	}
	if d := describe(t, adm, group); len(d.Members) != 1 {
		t.Errorf("after resume group %s has %d members", group, len(d.Members))
	}
}

// TestExportIsAcceptedAsIs: every connector's GET body, fed back to PATCH
// once the connector is stopped, is accepted, and writes nothing a GET
// would see differently.
func TestExportIsAcceptedAsIs(t *testing.T) {
	_, exp, srv := seeded(t, connectsim.Options{FrameworkOnly: []string{connectdemo.ConnFile}})
	ctx := context.Background()
	rc, err := connectrest.New(connectrest.Config{URLs: []string{srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range exp.Connectors {
		if !c.HasConfig {
			continue
		}
		body, err := rc.Offsets(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(body), `"offsets":[]`) {
			continue // nothing to alter; Connect refuses an empty list
		}
		if err := rc.Stop(ctx, name); err != nil {
			t.Fatal(err)
		}
		res, err := rc.AlterOffsets(ctx, name, body)
		if err != nil {
			t.Errorf("%s: PATCH of its own GET body: %v\n%s", name, err, body)
			continue
		}
		if res.FrameworkOnly != (name == connectdemo.ConnFile) {
			t.Errorf("%s: %+v", name, res)
		}
		again, err := rc.Offsets(ctx, name)
		if err != nil || !sameOffsets(t, body, again) {
			t.Errorf("%s: GET after PATCH of the GET body:\n%s\nwas\n%s", name, again, body)
		}
	}
}

// TestConflictsAndTimeouts: injected 409s are retried by the client; the
// rest reach it as errors that say what happened.
func TestConflictsAndTimeouts(t *testing.T) {
	_, _, srv := seededFaults(t, connectsim.Options{})
	ctx := context.Background()
	rc, err := connectrest.New(connectrest.Config{URLs: []string{srv.URL}, Backoff: time.Millisecond, Retries: 3})
	if err != nil {
		t.Fatal(err)
	}
	srv.InjectConflicts(3)
	if err := rc.Stop(ctx, connectdemo.ConnMySQL); err != nil {
		t.Fatalf("stop after 3 conflicts: %v", err)
	}
	srv.InjectConflicts(4)
	err = rc.Stop(ctx, connectdemo.ConnMySQL)
	if !errors.Is(err, connectrest.ErrConflict) || !strings.Contains(err.Error(), connectsim.MsgRebalance) {
		t.Fatalf("stop after 4 conflicts: %v", err)
	}
	srv.InjectTimeouts(1)
	_, err = rc.AlterOffsets(ctx, connectdemo.ConnMySQL, []byte(`{"offsets":[{"partition":{"server":"dbserver1"},"offset":null}]}`))
	if err == nil || !strings.Contains(err.Error(), "Request timed out") || !strings.Contains(err.Error(), "may still complete") {
		t.Fatalf("timed out PATCH: %v", err)
	}
	n := 0
	for _, r := range srv.Requests() {
		if r == "PUT /connectors/inventory-connector/stop" {
			n++
		}
	}
	if n != 8 {
		t.Errorf("%d stop requests, want 4 + 4", n)
	}
}

func sameOffsets(t *testing.T, a, b []byte) bool {
	t.Helper()
	type entry struct{ p, o connectjson.Map }
	parse := func(body []byte) []entry {
		var v struct {
			Offsets []struct {
				Partition json.RawMessage `json:"partition"`
				Offset    json.RawMessage `json:"offset"`
			} `json:"offsets"`
		}
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatal(err)
		}
		var out []entry
		for _, e := range v.Offsets {
			p, _ := connectjson.ParseMap(e.Partition)
			o, _ := connectjson.ParseMap(e.Offset)
			out = append(out, entry{p, o})
		}
		return out
	}
	ea, eb := parse(a), parse(b)
	if len(ea) != len(eb) {
		return false
	}
	for _, x := range ea {
		if !slices.ContainsFunc(eb, func(y entry) bool {
			return connectjson.Equal(x.p, y.p) && (x.o == nil) == (y.o == nil) && (x.o == nil || connectjson.Equal(x.o, y.o))
		}) {
			return false
		}
	}
	return true
}

func describe(t *testing.T, adm *kadm.Client, group string) kadm.DescribedGroup {
	t.Helper()
	d, err := adm.DescribeGroups(context.Background(), group)
	if err != nil {
		t.Fatal(err)
	}
	return d[group]
}

func endOffsets(t *testing.T, cl *kgo.Client, topic string) map[int32]int64 {
	t.Helper()
	listed, err := kadm.NewClient(cl).ListEndOffsets(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	listed.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out
}

// readSince reads the records written to topic after the end offsets from.
func readSince(t *testing.T, cl *kgo.Client, topic string, from map[int32]int64) []*kgo.Record {
	t.Helper()
	to := endOffsets(t, cl, topic)
	parts := map[int32]kgo.Offset{}
	for p, end := range to {
		if end > from[p] {
			parts[p] = kgo.NewOffset().At(from[p])
		}
	}
	if len(parts) == 0 {
		return nil
	}
	cons, err := kgo.NewClient(append(cl.Opts(), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []*kgo.Record
	seen := map[int32]int64{}
	for {
		done := true
		for p := range parts {
			if seen[p] < to[p] {
				done = false
			}
		}
		if done {
			return out
		}
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatal("read timed out")
		}
		fs.EachRecord(func(r *kgo.Record) {
			out = append(out, r)
			seen[r.Partition] = r.Offset + 1
		})
	}
}

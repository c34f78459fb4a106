package connectsim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
	"github.com/offsetkeeper/offsetkeeper/internal/realconnect"
)

// exchange is one REST request offsetkeeper relies on and what Connect
// answers: the status code, and a text the message must hold (for a
// success, the whole message), or the body a GET answers.
type exchange struct {
	name   string
	method string
	path   string
	body   string
	code   int
	msg    string // the "message" must contain it ("" : not checked)
	exact  bool   // msg is the whole message
	// offsets is the GET offsets body wanted, entries in any order.
	offsets string
	// state waits for this status after the exchange ("RUNNING 1").
	state string
}

const (
	tblSrc  = "tbl-src"
	tblSink = "tbl-sink"
)

// restTable is the exchanges, in order: each starts from the state the
// ones before it left.
func restTable(in string) []exchange {
	src := "/connectors/" + tblSrc
	sink := "/connectors/" + tblSink
	pos := func(p string) string {
		return `{"offsets":[{"partition":{"filename":` + jsonString(in) + `},"offset":{"position":` + p + `}}]}`
	}
	return []exchange{
		{name: "create source STOPPED", method: "POST", path: "/connectors", body: string(realconnect.CreateBody(tblSrc, realconnect.FileSource(in, "tbl-lines"), "STOPPED")), code: 201},
		{name: "create existing", method: "POST", path: "/connectors", body: string(realconnect.CreateBody(tblSrc, realconnect.FileSource(in, "tbl-lines"), "STOPPED")), code: 409, msg: "Connector " + tblSrc + " already exists", exact: true},
		{name: "status STOPPED", method: "GET", path: src + "/status", code: 200, state: "STOPPED 0"},
		{name: "config", method: "GET", path: src + "/config", code: 200},
		{name: "status of unknown", method: "GET", path: "/connectors/nope/status", code: 404, msg: "No status found for connector nope", exact: true},
		{name: "offsets of unknown", method: "GET", path: "/connectors/nope/offsets", code: 404, msg: "Connector nope not found", exact: true},
		{name: "PATCH unknown", method: "PATCH", path: "/connectors/nope/offsets", body: pos("1"), code: 404, msg: "Connector nope not found", exact: true},
		{name: "DELETE offsets of unknown", method: "DELETE", path: "/connectors/nope/offsets", code: 404, msg: "Connector nope not found", exact: true},
		{name: "stop unknown", method: "PUT", path: "/connectors/nope/stop", code: 404, msg: "Unknown connector nope", exact: true},
		{name: "resume unknown", method: "PUT", path: "/connectors/nope/resume", code: 404, msg: "Unknown connector nope", exact: true},
		{name: "pause unknown", method: "PUT", path: "/connectors/nope/pause", code: 404, msg: "Unknown connector nope", exact: true},
		{name: "PATCH no offsets", method: "PATCH", path: src + "/offsets", body: `{"offsets":[]}`, code: 400, msg: connectsim.MsgNoOffsets, exact: true},
		{name: "PATCH connector validation: partition", method: "PATCH", path: src + "/offsets", body: `{"offsets":[{"partition":{"file":"x"},"offset":{"position":1}}]}`, code: 500, msg: "Partition objects should contain the key 'filename'", exact: true},
		{name: "PATCH connector validation: offset", method: "PATCH", path: src + "/offsets", body: pos("-1"), code: 500, msg: "non-negative"},
		{name: "PATCH source", method: "PATCH", path: src + "/offsets", body: pos("7"), code: 200, msg: connectsim.MsgAltered, exact: true},
		{name: "GET source", method: "GET", path: src + "/offsets", code: 200, offsets: pos("7")},
		{name: "PATCH entry without offset", method: "PATCH", path: src + "/offsets", body: `{"offsets":[{"partition":{"filename":` + jsonString(in) + `}}]}`, code: 200, msg: connectsim.MsgAltered, exact: true},
		{name: "GET source after the tombstone", method: "GET", path: src + "/offsets", code: 200, offsets: `{"offsets":[]}`},
		{name: "PATCH source again", method: "PATCH", path: src + "/offsets", body: pos("9"), code: 200, msg: connectsim.MsgAltered, exact: true},
		{name: "DELETE source offsets", method: "DELETE", path: src + "/offsets", code: 200, msg: connectsim.MsgReset, exact: true},
		{name: "GET source after DELETE", method: "GET", path: src + "/offsets", code: 200, offsets: `{"offsets":[]}`},
		{name: "resume", method: "PUT", path: src + "/resume", code: 202, state: "RUNNING 1"},
		{name: "PATCH while RUNNING", method: "PATCH", path: src + "/offsets", body: pos("1"), code: 400, msg: "Connectors must be in the STOPPED state before their offsets can be modified"},
		{name: "DELETE while RUNNING", method: "DELETE", path: src + "/offsets", code: 400, msg: "Connectors must be in the STOPPED state before their offsets can be modified"},
		{name: "pause", method: "PUT", path: src + "/pause", code: 202, state: "PAUSED 1"},
		{name: "PATCH while PAUSED", method: "PATCH", path: src + "/offsets", body: pos("1"), code: 400, msg: "Connectors must be in the STOPPED state before their offsets can be modified"},
		{name: "stop", method: "PUT", path: src + "/stop", code: 204, state: "STOPPED 0"},
		{name: "create sink STOPPED", method: "POST", path: "/connectors", body: string(realconnect.CreateBody(tblSink, realconnect.FileSink(in+".out", "tbl-events"), "STOPPED")), code: 201},
		{name: "PATCH sink", method: "PATCH", path: sink + "/offsets", body: sinkBody(`0},"offset":{"kafka_offset":5}`, `1},"offset":{"kafka_offset":3}`), code: 200, msg: connectsim.MsgAltered, exact: true},
		{name: "GET sink", method: "GET", path: sink + "/offsets", code: 200, offsets: sinkBody(`0},"offset":{"kafka_offset":5}`, `1},"offset":{"kafka_offset":3}`, `2},"offset":{"kafka_offset":0}`)},
		{name: "PATCH sink null offset", method: "PATCH", path: sink + "/offsets", body: sinkBody(`1},"offset":null`), code: 200, msg: connectsim.MsgAltered, exact: true},
		{name: "GET sink after the null offset", method: "GET", path: sink + "/offsets", code: 200, offsets: sinkBody(`0},"offset":{"kafka_offset":5}`, `2},"offset":{"kafka_offset":0}`)},
		{name: "PATCH sink without kafka_partition", method: "PATCH", path: sink + "/offsets", body: `{"offsets":[{"partition":{"kafka_topic":"tbl-events"},"offset":{"kafka_offset":1}}]}`, code: 400, msg: "kafka_partition"},
		{name: "PATCH sink negative offset", method: "PATCH", path: sink + "/offsets", body: sinkBody(`0},"offset":{"kafka_offset":-1}`), code: 500, msg: "Failed to modify offsets for sink connector " + tblSink, exact: true},
		{name: "DELETE sink offsets", method: "DELETE", path: sink + "/offsets", code: 200, msg: connectsim.MsgReset, exact: true},
	}
}

func sinkBody(entries ...string) string {
	var parts []string
	for _, e := range entries {
		parts = append(parts, `{"partition":{"kafka_topic":"tbl-events","kafka_partition":`+e+`}`)
	}
	return `{"offsets":[` + strings.Join(parts, ",") + `]}`
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestRESTTable holds the stand-in to the real worker: the same exchanges,
// in the same order, against internal/connectsim always and against a
// real Kafka Connect worker when OFFSETKEEPER_TEST_CONNECT names one; the
// status codes and the messages offsetkeeper reads must be the table's.
func TestRESTTable(t *testing.T) {
	t.Run("connectsim", func(t *testing.T) {
		t.Parallel()
		c := tableCluster(t)
		srv, err := connectsim.Start(c.Client, connectsim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Close)
		runTable(t, realconnect.NewREST(t, srv.URL))
	})
	t.Run("real", func(t *testing.T) {
		realconnect.Dir(t)
		t.Parallel()
		c := tableCluster(t)
		w := realconnect.Start(t, c, realconnect.Options{})
		runTable(t, w.REST(t))
	})
}

// tableCluster is a cluster with the table's topics and the sink's group
// (kfake answers an offset fetch of a group it never saw with an error).
func tableCluster(t *testing.T) *realconnect.Cluster {
	c := realconnect.NewCluster(t)
	c.CreateTopic(t, "tbl-lines", 1, false)
	c.CreateTopic(t, "tbl-events", 3, false)
	var offs kadm.Offsets
	offs.Add(kadm.Offset{Topic: "tbl-events", Partition: 2, At: 0, LeaderEpoch: -1})
	if err := kadm.NewClient(c.Client).CommitAllOffsets(context.Background(), "connect-"+tblSink, offs); err != nil {
		t.Fatal(err)
	}
	return c
}

func runTable(t *testing.T, rest *realconnect.REST) {
	in := filepath.Join(t.TempDir(), "in.txt")
	realconnect.AppendLines(t, in, "a", "b")
	for _, ex := range restTable(in) {
		var body []byte
		if ex.body != "" {
			body = []byte(ex.body)
		}
		r := rest.Do(ex.method, ex.path, body)
		if r.Code != ex.code {
			t.Errorf("%s: %s %s: want %d, got %s", ex.name, ex.method, ex.path, ex.code, r)
			continue
		}
		if ex.msg != "" && (ex.exact && r.Message() != ex.msg || !strings.Contains(r.Message(), ex.msg)) {
			t.Errorf("%s: %s %s: message %q, want %q (whole: %v)", ex.name, ex.method, ex.path, r.Message(), ex.msg, ex.exact)
		}
		if ex.code >= 400 && r.ErrorCode() != ex.code {
			t.Errorf("%s: error_code %d, want %d: %s", ex.name, r.ErrorCode(), ex.code, r)
		}
		if ex.code == http.StatusCreated {
			var info struct{ Name, Type string }
			json.Unmarshal(r.Body, &info)
			want := map[string]string{tblSrc: "source", tblSink: "sink"}
			if r.Header.Get("Location") == "" || want[info.Name] == "" || info.Type != want[info.Name] {
				t.Errorf("%s: 201 with Location %q and body %s, want a Location and the connector's name and type", ex.name, r.Header.Get("Location"), r.Body)
			}
		}
		if ex.offsets != "" {
			if got, want := sortedOffsets(t, r.Body), sortedOffsets(t, []byte(ex.offsets)); got != want {
				t.Errorf("%s: offsets %s, want %s", ex.name, got, want)
			}
		}
		if ex.path == "/connectors/"+tblSrc+"/config" {
			var cfg map[string]string
			if err := json.Unmarshal(r.Body, &cfg); err != nil || cfg["name"] != tblSrc || cfg["file"] != in {
				t.Errorf("%s: config %s (%v)", ex.name, r.Body, err)
			}
		}
		if ex.state != "" {
			name := strings.Split(ex.path, "/")[2]
			var state string
			var tasks int
			if _, err := fmt.Sscan(ex.state, &state, &tasks); err != nil {
				t.Fatal(err)
			}
			rest.WaitState(name, state, tasks)
		}
	}
}

// sortedOffsets is an offsets body with its entries sorted, keys sorted.
func sortedOffsets(t *testing.T, body []byte) string {
	var doc struct {
		Offsets []map[string]any `json:"offsets"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	var out []string
	for _, e := range doc.Offsets {
		b, _ := json.Marshal(e)
		out = append(out, string(b))
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

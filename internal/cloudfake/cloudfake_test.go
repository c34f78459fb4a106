package cloudfake_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/internal/cloudfake"
	"github.com/offsetkeeper/offsetkeeper/internal/connectjson"
)

func call(t *testing.T, srv *cloudfake.Server, method, path, body, secret string) (int, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, srv.URL()+path, r)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := srv.Credentials()
	req.SetBasicAuth(key, secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestServer(t *testing.T) {
	srv := cloudfake.New(t, cloudfake.Options{})
	_, secret := srv.Credentials()
	if !strings.HasSuffix(srv.URL(), "/connect/v1/environments/env-1/clusters/lkc-1") || !strings.HasPrefix(srv.URL(), srv.BaseURL()) {
		t.Fatalf("URL %s", srv.URL())
	}
	srv.SetSinkOffsets("snk", []cloudfake.SinkOffset{{Topic: "t", Partition: 0, Offset: 3}})

	if code, body := call(t, srv, "GET", "/connectors", "", "bad"); code != 401 || !strings.Contains(body, `"errors"`) {
		t.Fatalf("bad secret: %d %s", code, body)
	}
	code, body := call(t, srv, "GET", "/connectors/snk/offsets", "", secret)
	var env struct {
		Name     string            `json:"name"`
		ID       string            `json:"id"`
		Offsets  []json.RawMessage `json:"offsets"`
		Metadata struct {
			ObservedAt string `json:"observed_at"`
		} `json:"metadata"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &env) != nil || env.Name != "snk" || env.ID == "" || len(env.Offsets) != 1 || env.Metadata.ObservedAt == "" {
		t.Fatalf("GET offsets: %d %s", code, body)
	}
	for _, tc := range []struct{ body, want string }{
		{`{"type":"PATCH"}`, "offsets are required"},
		{`{"type":"RESET"}`, "PATCH or DELETE"},
		{`{"type":"PATCH","offsets":[{"partition":{"topic":"t"},"offset":{"kafka_offset":1}}]}`, "kafka_topic"},
	} {
		if code, body := call(t, srv, "POST", "/connectors/snk/offsets/request", tc.body, secret); code != 400 || !strings.Contains(body, tc.want) {
			t.Errorf("POST %s: %d %s, want 400 %q", tc.body, code, body, tc.want)
		}
	}
	if code, _ := call(t, srv, "GET", "/connectors/snk/offsets/request/status", "", secret); code != 404 {
		t.Fatalf("status before any request: %d, want 404", code)
	}
	code, body = call(t, srv, "POST", "/connectors/snk/offsets/request", `{"type":"PATCH","offsets":[{"partition":{"kafka_topic":"t","kafka_partition":0},"offset":{"kafka_offset":9}}]}`, secret)
	if code != 202 || !strings.Contains(body, `"requested_at"`) || !strings.Contains(body, `"type":"PATCH"`) {
		t.Fatalf("POST: %d %s", code, body)
	}
	if srv.State("snk") != "PAUSED" {
		t.Fatalf("state %s while the request is pending, want PAUSED", srv.State("snk"))
	}
	if code, body := call(t, srv, "POST", "/connectors/snk/offsets/request", `{"type":"DELETE"}`, secret); code != 409 {
		t.Fatalf("second POST while pending: %d %s, want 409", code, body)
	}
	var phases []string
	for range 2 {
		_, body = call(t, srv, "GET", "/connectors/snk/offsets/request/status", "", secret)
		var st struct {
			Status struct{ Phase string } `json:"status"`
		}
		_ = json.Unmarshal([]byte(body), &st)
		phases = append(phases, st.Status.Phase)
	}
	if strings.Join(phases, " ") != "PENDING APPLIED" || !strings.Contains(body, `"previous_offsets":[{`) || !strings.Contains(body, `"applied_at"`) {
		t.Fatalf("phases %v, last status %s", phases, body)
	}
	if got := srv.Offsets("snk"); len(got) != 1 || !connectjson.Equal(got[0].Offset, connectjson.SinkOffset(9)) || srv.State("snk") != "RUNNING" {
		t.Fatalf("after APPLIED: %+v, %s", got, srv.State("snk"))
	}
	reqs := srv.Requests()
	if len(reqs) == 0 || reqs[len(reqs)-1].Path != "/connectors/snk/offsets/request/status" {
		t.Fatalf("Requests = %+v", reqs)
	}
}

package connectrest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/cloudfake"
	"github.com/offsetkeeper/offsetkeeper/internal/connectjson"
	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/kafkaconf"
)

// cloudClient is a cloud-mode client of srv, polling fast.
func cloudClient(t *testing.T, srv *cloudfake.Server, timeout time.Duration) *connectrest.Client {
	t.Helper()
	key, secret := srv.Credentials()
	rc, err := connectrest.New(connectrest.Config{URLs: []string{srv.URL()}, Username: key, Password: kafkaconf.Secret(secret), Timeout: timeout, PollInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !rc.Cloud() || rc.Platform() != connectrest.PlatformConfluentCloud {
		t.Fatalf("a Connect v1 URL is not cloud mode: %q", rc.Platform())
	}
	return rc
}

func sourceEntry(file string, pos int64) connectjson.OffsetEntry {
	return connectjson.OffsetEntry{
		Partition: connectjson.Map{{Key: "filename", Value: connectjson.StringValue(file)}},
		Offset:    connectjson.Map{{Key: "position", Value: connectjson.LongValue(pos)}},
	}
}

func decode(t *testing.T, body []byte) []connectjson.OffsetEntry {
	t.Helper()
	es, err := connectjson.DecodeOffsets(body, connectjson.DecodeOptions{})
	if err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return es
}

func TestCloudConfig(t *testing.T) {
	for _, tc := range []struct {
		name          string
		cfg           connectrest.Config
		want          string // error text, or the base URL
		env, cluster  string
		wantErrConfig bool
	}{
		{name: "detected", cfg: connectrest.Config{URLs: []string{"https://api.confluent.cloud/connect/v1/environments/env-a/clusters/lkc-b/"}}, want: "https://api.confluent.cloud/connect/v1/environments/env-a/clusters/lkc-b", env: "env-a", cluster: "lkc-b"},
		{name: "explicit", cfg: connectrest.Config{Platform: "confluent-cloud", Environment: "env-a", Cluster: "lkc-b"}, want: "https://api.confluent.cloud/connect/v1/environments/env-a/clusters/lkc-b", env: "env-a", cluster: "lkc-b"},
		{name: "explicit base", cfg: connectrest.Config{Platform: "confluent-cloud", URLs: []string{"http://127.0.0.1:9/"}, Environment: "env-a", Cluster: "lkc-b"}, want: "http://127.0.0.1:9/connect/v1/environments/env-a/clusters/lkc-b", env: "env-a", cluster: "lkc-b"},
		{name: "no cluster", cfg: connectrest.Config{Platform: "confluent-cloud", Environment: "env-a"}, want: "needs --environment", wantErrConfig: true},
		{name: "not a cloud base", cfg: connectrest.Config{Platform: "confluent-cloud", URLs: []string{"http://connect:8083/proxy"}, Environment: "env-a", Cluster: "lkc-b"}, want: "not a Confluent Cloud base", wantErrConfig: true},
		{name: "two URLs", cfg: connectrest.Config{Platform: "confluent-cloud", URLs: []string{"https://a", "https://b"}, Environment: "e", Cluster: "c"}, want: "one --connect-url", wantErrConfig: true},
		{name: "ids disagree", cfg: connectrest.Config{Platform: "confluent-cloud", URLs: []string{"https://api.confluent.cloud/connect/v1/environments/env-a/clusters/lkc-b"}, Cluster: "lkc-c"}, want: "--connect-url names", wantErrConfig: true},
		{name: "ids without platform", cfg: connectrest.Config{URLs: []string{"http://connect:8083"}, Environment: "env-a", Cluster: "lkc-b"}, want: "need --platform", wantErrConfig: true},
		{name: "unknown platform", cfg: connectrest.Config{Platform: "aiven", URLs: []string{"http://connect:8083"}}, want: `platform "aiven"`, wantErrConfig: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc, err := connectrest.New(tc.cfg)
			if tc.wantErrConfig {
				if !errors.Is(err, connectrest.ErrConfig) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err = %v, want ErrConfig with %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			env, cluster := rc.CloudIDs()
			if got := rc.URLs(); len(got) != 1 || got[0] != tc.want || env != tc.env || cluster != tc.cluster {
				t.Fatalf("URLs %v, ids %q %q; want %s, %q %q", got, env, cluster, tc.want, tc.env, tc.cluster)
			}
		})
	}
	// A Connect cluster behind a proxy path stays a Connect cluster.
	rc, err := connectrest.New(connectrest.Config{URLs: []string{"http://proxy/connect"}})
	if err != nil || rc.Cloud() {
		t.Fatalf("proxy path: cloud %v, err %v", rc != nil && rc.Cloud(), err)
	}
}

func TestCloudReadOnly(t *testing.T) {
	ctx := context.Background()
	srv := cloudfake.New(t, cloudfake.Options{})
	srv.SetSourceOffsets("src", []connectjson.OffsetEntry{sourceEntry("a.txt", 7)})
	srv.SetSinkOffsets("snk", []cloudfake.SinkOffset{{Topic: "orders", Partition: 2, Offset: 40}})
	rc := cloudClient(t, srv, 5*time.Second)

	body, err := rc.Offsets(ctx, "src")
	if err != nil {
		t.Fatal(err)
	}
	var shape map[string]json.RawMessage
	if err := json.Unmarshal(body, &shape); err != nil || len(shape) != 1 || shape["offsets"] == nil {
		t.Fatalf("Offsets = %s: want only {\"offsets\":[...]}, the envelope stripped", body)
	}
	if es := decode(t, body); len(es) != 1 || !connectjson.Equal(es[0].Offset, sourceEntry("a.txt", 7).Offset) {
		t.Fatalf("source offsets %s", body)
	}
	body, err = rc.Offsets(ctx, "snk")
	if err != nil {
		t.Fatal(err)
	}
	if es := decode(t, body); len(es) != 1 || !connectjson.Equal(es[0].Partition, connectjson.SinkPartition("orders", 2)) || !connectjson.Equal(es[0].Offset, connectjson.SinkOffset(40)) {
		t.Fatalf("sink offsets %s", body)
	}

	si, err := rc.RequireOffsetsAPI(ctx)
	if err != nil || si.KafkaClusterID != "lkc-1" || si.Version != connectrest.CloudVersion {
		t.Fatalf("RequireOffsetsAPI = %+v, %v", si, err)
	}
	if _, err := rc.RequireInitialState(ctx); !errors.Is(err, connectrest.ErrUnsupported) {
		t.Fatalf("RequireInitialState: %v, want ErrUnsupported", err)
	}
	states, err := rc.States(ctx)
	if err != nil || len(states) != 2 || states["src"].Connector.State != connectrest.StateRunning || states["snk"].Type != "sink" {
		t.Fatalf("States = %+v, %v", states, err)
	}
	if err := rc.Pause(ctx, "src"); err != nil {
		t.Fatal(err)
	}
	if st, err := rc.Status(ctx, "src"); err != nil || st.Connector.State != connectrest.StatePaused {
		t.Fatalf("after Pause: %+v, %v", st, err)
	}
	if err := rc.Resume(ctx, "src"); err != nil || srv.State("src") != connectrest.StateRunning {
		t.Fatalf("Resume: %v, state %s", err, srv.State("src"))
	}
	if ok, err := rc.Known(ctx, "src"); !ok || err != nil {
		t.Fatalf("Known(src) = %v, %v", ok, err)
	}
	if ok, err := rc.Known(ctx, "nope"); ok || err != nil {
		t.Fatalf("Known(nope) = %v, %v", ok, err)
	}
	if _, err := rc.Status(ctx, "nope"); !errors.Is(err, connectrest.ErrNotFound) {
		t.Fatalf("Status(nope): %v, want ErrNotFound", err)
	}
	if err := rc.Stop(ctx, "src"); !errors.Is(err, connectrest.ErrCloudUnsupported) || !strings.Contains(err.Error(), "pause") {
		t.Fatalf("Stop: %v, want ErrCloudUnsupported", err)
	}
	for _, r := range srv.Requests() {
		if r.Path == "/" || strings.HasSuffix(r.Path, "/stop") {
			t.Errorf("sent %s %s: Cloud has neither GET / nor stop", r.Method, r.Path)
		}
		if r.Path == "/connectors" && r.Query != "expand=status%2Cinfo" {
			t.Errorf("listing with ?%s, want expand=status,info", r.Query)
		}
	}
}

func TestCloudAuthFailure(t *testing.T) {
	srv := cloudfake.New(t, cloudfake.Options{})
	srv.SetSourceOffsets("src", nil)
	rc, err := connectrest.New(connectrest.Config{URLs: []string{srv.URL()}, Username: "key", Password: "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = rc.Offsets(context.Background(), "src")
	var apiErr *connectrest.Error
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnauthorized {
		t.Fatalf("err = %v, want a 401 *Error", err)
	}
	for _, want := range []string{"Unable to authenticate", "Cloud API key", "--connect-user"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "wrong") {
		t.Errorf("error %q shows the secret", err)
	}
}

func TestCloudAlterOffsetsApplied(t *testing.T) {
	ctx := context.Background()
	srv := cloudfake.New(t, cloudfake.Options{PendingPolls: 3, StaleReads: 2})
	srv.SetSourceOffsets("src", []connectjson.OffsetEntry{sourceEntry("a.txt", 7), sourceEntry("b.txt", 9)})
	rc := cloudClient(t, srv, 10*time.Second)

	gone := connectjson.OffsetEntry{Partition: sourceEntry("b.txt", 0).Partition}
	res, err := rc.AlterOffsets(ctx, "src", connectjson.EncodeOffsets([]connectjson.OffsetEntry{sourceEntry("a.txt", 100), gone}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Phases, " ") != "PENDING APPLIED" || res.Message == "" || res.Took <= 0 {
		t.Fatalf("result %+v, want phases PENDING APPLIED with a message", res)
	}
	if got := srv.Offsets("src"); len(got) != 1 || !connectjson.Equal(got[0].Offset, sourceEntry("a.txt", 100).Offset) {
		t.Fatalf("the fake holds %+v after the PATCH", got)
	}
	if srv.State("src") != connectrest.StateRunning {
		t.Fatalf("state %s after the request: Cloud resumes the connector itself", srv.State("src"))
	}
	var post *cloudfake.Request
	for _, r := range srv.Requests() {
		if r.Method == http.MethodPost {
			post = &r
		}
		if r.Method == http.MethodPatch || strings.HasSuffix(r.Path, "/stop") {
			t.Errorf("sent %s %s, which Cloud has not", r.Method, r.Path)
		}
	}
	if post == nil || post.Path != "/connectors/src/offsets/request" || !strings.Contains(post.Body, `"type":"PATCH"`) || !strings.Contains(post.Body, `"offsets":[`) {
		t.Fatalf("POST = %+v", post)
	}
	// Cloud observes offsets periodically: the first reads after the
	// request show the old ones, which Offsets waits out.
	body, err := rc.Offsets(ctx, "src")
	if err != nil {
		t.Fatal(err)
	}
	if es := decode(t, body); len(es) != 1 || !connectjson.Equal(es[0].Offset, sourceEntry("a.txt", 100).Offset) {
		t.Fatalf("Offsets after the request = %s", body)
	}

	res, err = rc.ResetOffsets(ctx, "src")
	if err != nil || strings.Join(res.Phases, " ") != "PENDING APPLIED" {
		t.Fatalf("ResetOffsets = %+v, %v", res, err)
	}
	if got := srv.Offsets("src"); len(got) != 0 {
		t.Fatalf("the fake holds %+v after the DELETE", got)
	}
}

func TestCloudAlterOffsetsFailed(t *testing.T) {
	srv := cloudfake.New(t, cloudfake.Options{})
	srv.SetSinkOffsets("snk", []cloudfake.SinkOffset{{Topic: "orders", Partition: 0, Offset: 5}})
	srv.FailNext("snk", "offsets of topic orders partition 0 are beyond the log end")
	rc := cloudClient(t, srv, 10*time.Second)
	_, err := rc.AlterOffsets(context.Background(), "snk", connectjson.EncodeOffsets([]connectjson.OffsetEntry{{Partition: connectjson.SinkPartition("orders", 0), Offset: connectjson.SinkOffset(900)}}))
	if !errors.Is(err, connectrest.ErrRequestFailed) {
		t.Fatalf("err = %v, want ErrRequestFailed", err)
	}
	for _, want := range []string{`"snk"`, "FAILED", "beyond the log end"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if got := srv.Offsets("snk"); !connectjson.Equal(got[0].Offset, connectjson.SinkOffset(5)) {
		t.Fatalf("a failed request changed the offsets: %+v", got)
	}
}

func TestCloudAlterOffsetsPending(t *testing.T) {
	srv := cloudfake.New(t, cloudfake.Options{})
	srv.SetSourceOffsets("src", []connectjson.OffsetEntry{sourceEntry("a.txt", 7)})
	srv.StayPending("src")
	rc := cloudClient(t, srv, 200*time.Millisecond)
	_, err := rc.AlterOffsets(context.Background(), "src", connectjson.EncodeOffsets([]connectjson.OffsetEntry{sourceEntry("a.txt", 1)}))
	if !errors.Is(err, connectrest.ErrRequestPending) || errors.Is(err, connectrest.ErrRequestFailed) {
		t.Fatalf("err = %v, want ErrRequestPending", err)
	}
	for _, want := range []string{`"src"`, "PENDING", "may still apply it later", "confluent connect offset status describe", "/offsets/request/status"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	// A second request while the first is pending: Cloud takes one at a
	// time.
	_, err = rc.ResetOffsets(context.Background(), "src")
	var apiErr *connectrest.Error
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusConflict || !strings.Contains(err.Error(), "one offsets request per connector") {
		t.Fatalf("second request: %v, want a 409 saying one at a time", err)
	}
}

// Regression guard: the status endpoint shows the connector's latest
// request, which for a moment after a POST is still the one before; taking
// its APPLIED for ours would report a request that then fails as applied.
func TestCloudStatusOfOlderRequest(t *testing.T) {
	ctx := context.Background()
	srv := cloudfake.New(t, cloudfake.Options{StatusLag: 3})
	srv.SetSourceOffsets("src", []connectjson.OffsetEntry{sourceEntry("a.txt", 7)})
	rc := cloudClient(t, srv, 10*time.Second)
	if _, err := rc.AlterOffsets(ctx, "src", connectjson.EncodeOffsets([]connectjson.OffsetEntry{sourceEntry("a.txt", 8)})); err != nil {
		t.Fatal(err)
	}
	srv.FailNext("src", "the connector rejected the offsets")
	_, err := rc.AlterOffsets(ctx, "src", connectjson.EncodeOffsets([]connectjson.OffsetEntry{sourceEntry("a.txt", 9)}))
	if !errors.Is(err, connectrest.ErrRequestFailed) || !strings.Contains(err.Error(), "rejected the offsets") {
		t.Fatalf("err = %v: the older request's APPLIED was taken for this one's", err)
	}
}

// Cloud's rate limit answers 429; it passes with waiting, so the request
// is sent again, while a Connect cluster's 429 (from a proxy) is not.
func TestCloudRateLimitRetried(t *testing.T) {
	var calls int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if calls == 1 {
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"errors":[{"status":"429","detail":"Too Many Requests"}]}`))
			return
		}
		_, _ = w.Write([]byte(`{"name":"c","connector":{"state":"RUNNING"},"tasks":[],"type":"sink"}`))
	}))
	defer srv.Close()
	rc, err := connectrest.New(connectrest.Config{URLs: []string{srv.URL + "/connect/v1/environments/e/clusters/lkc-1"}, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := rc.Status(context.Background(), "c"); err != nil || st.Connector.State != "RUNNING" || calls != 2 {
		t.Fatalf("Status = %+v, %v after %d calls", st, err, calls)
	}
}

package connectsim_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
)

// The stand-in answers as the Kafka version it reports: 3.4 has no
// offsets endpoints and no stop, 3.5 reads offsets but cannot alter them,
// 3.6 ignores "initial_state" and starts a new connector; a refusal of the
// client's version checks (connectrest.RequireOffsetsAPI,
// RequireInitialState) is then all that stands between an old worker and
// a wrong write, so those checks are tested against these answers.
func TestOlderKafkaVersions(t *testing.T) {
	_, _, srv := seededFaults(t, connectsim.Options{})
	name := connectdemo.ConnJDBC
	client := func() *connectrest.Client { // a new one: nothing cached of the version
		rc, err := connectrest.New(connectrest.Config{URLs: []string{srv.URL}})
		if err != nil {
			t.Fatal(err)
		}
		return rc
	}
	patch := `{"offsets":[{"partition":{"protocol":"1","table":"shop.orders"},"offset":{"incrementing":1}}]}`
	for _, tt := range []struct {
		version                   string
		get, stop, patch, deleted int
	}{
		{"3.4.1", 404, 404, 405, 405},
		{"3.5.2", 200, 204, 405, 405},
	} {
		srv.SetVersion(tt.version)
		if code, body := call(t, "GET", connURL(srv.URL, name, "/offsets"), ""); code != tt.get {
			t.Errorf("%s: GET offsets = %d %s", tt.version, code, body)
		}
		if code, body := call(t, "PUT", connURL(srv.URL, name, "/stop"), ""); code != tt.stop {
			t.Errorf("%s: PUT stop = %d %s", tt.version, code, body)
		}
		if code, body := call(t, "PATCH", connURL(srv.URL, name, "/offsets"), patch); code != tt.patch || !strings.Contains(body, "Method Not Allowed") {
			t.Errorf("%s: PATCH offsets = %d %s", tt.version, code, body)
		}
		if code, body := call(t, "DELETE", connURL(srv.URL, name, "/offsets"), ""); code != tt.deleted {
			t.Errorf("%s: DELETE offsets = %d %s", tt.version, code, body)
		}
		if _, err := client().RequireOffsetsAPI(t.Context()); err == nil || !strings.Contains(err.Error(), "3.6") {
			t.Errorf("%s: RequireOffsetsAPI = %v, want a refusal naming 3.6", tt.version, err)
		}
	}

	srv.SetVersion("3.6.1")
	if _, err := client().RequireOffsetsAPI(t.Context()); err != nil {
		t.Errorf("3.6.1: RequireOffsetsAPI: %v", err)
	}
	if _, err := client().RequireInitialState(t.Context()); err == nil || !strings.Contains(err.Error(), "3.7") {
		t.Errorf("3.6.1: RequireInitialState = %v, want a refusal naming 3.7", err)
	}
	body := `{"name":"new-on-36","config":{"connector.class":"org.apache.kafka.connect.file.FileStreamSourceConnector","file":"/tmp/x","topic":"t"},"initial_state":"STOPPED"}`
	if code, resp := call(t, "POST", srv.URL+"/connectors", body); code != http.StatusCreated {
		t.Fatalf("3.6.1: POST /connectors = %d %s", code, resp)
	}
	if code, resp := call(t, "GET", connURL(srv.URL, "new-on-36", "/status"), ""); code != 200 || !strings.Contains(resp, `"state":"RUNNING"`) {
		t.Errorf("3.6.1: a connector created with initial_state STOPPED is not RUNNING: %d %s", code, resp)
	}
	srv.SetVersion("3.7.0")
	if _, err := client().RequireInitialState(t.Context()); err != nil {
		t.Errorf("3.7.0: RequireInitialState: %v", err)
	}
}

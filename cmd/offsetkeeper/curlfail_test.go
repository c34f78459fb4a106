package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim/connectsimtest"
)

// TestPrintedStopFailsWhenConnectRefuses: the printed curl commands had
// no --fail, so a stop Connect refused (404 no such connector, 409 a
// rebalance, 500) exited 0 and a script that ran the failover's advice
// went on as if the connector were stopped. Now each fails with curl's
// exit status and Connect's error body, and succeeds once Connect
// accepts it.
func TestPrintedStopFailsWhenConnectRefuses(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("the printed commands are curl commands: no curl here")
	}
	w := newStandbyWorld(t, 0)
	ctx := context.Background()
	prim, err := connectsimtest.Start(w.acl, connectsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prim.Close)
	// The primary's Connect, behind a front that answers as Connect does
	// when it refuses a request, while refuse holds a status.
	target, err := url.Parse(prim.URL)
	if err != nil {
		t.Fatal(err)
	}
	var refuse atomic.Int32
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		code := int(refuse.Load())
		if code == 0 || r.Method != http.MethodPut {
			proxy.ServeHTTP(rw, r)
			return
		}
		rw.Header().Set("Content-Type", "application/json")
		rw.WriteHeader(code)
		fmt.Fprintf(rw, `{"error_code":%d,"message":"refused by the test front (%d)"}`, code, code)
	}))
	t.Cleanup(front.Close)
	prc, err := connectrest.New(connectrest.Config{URLs: []string{prim.URL}})
	if err != nil {
		t.Fatal(err)
	}
	name := "orders$x&y=z"
	if _, err := prc.CreateConnector(ctx, name, map[string]string{"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
		"tasks.max": "1", "file": "/tmp/in.txt", "topic": "orders"}, ""); err != nil {
		t.Fatal(err)
	}
	st := "file://" + t.TempDir()
	if code, out, errs := runCLI(t, "snapshot", "--brokers", w.primary, "--store", st); code != 0 {
		t.Fatalf("snapshot: %d\n%s\n%s", code, out, errs)
	}
	code, out, errs := runCLI(t, append([]string{"failover", "--store", st, "--connect-url", front.URL, "--dry-run"}, w.flags()...)...)
	var stop string
	for _, l := range strings.Split(errs, "\n") {
		if s := strings.TrimSpace(l); strings.HasPrefix(s, "curl ") && strings.Contains(s, "/connectors/"+restSegment(name)+"/stop") {
			stop = s
		}
	}
	if code != exitRefused || !strings.Contains(stop, "--fail-with-body") || !strings.Contains(stop, "/stop") {
		t.Fatalf("failover while the primary runs: exit %d, want %d with a curl --fail-with-body stop\n%s\n%s", code, exitRefused, out, errs)
	}
	run := func() (int, string) {
		b, err := exec.Command("sh", "-c", strings.Replace(stop, "curl", curl, 1)).CombinedOutput()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), string(b)
		}
		if err != nil {
			t.Fatalf("run %s: %v", stop, err)
		}
		return 0, string(b)
	}
	for _, status := range []int{http.StatusNotFound, http.StatusConflict, http.StatusInternalServerError} {
		refuse.Store(int32(status))
		code, out := run()
		if code == 0 || !strings.Contains(out, fmt.Sprintf("refused by the test front (%d)", status)) {
			t.Errorf("the printed %s, Connect answering %d: exit %d, want non-zero with Connect's body\n%s", stop, status, code, out)
		}
	}
	if s, err := prc.Status(ctx, name); err != nil || s.Connector.State != "RUNNING" {
		t.Fatalf("%s after refused stops: %+v %v, want RUNNING", name, s, err)
	}
	refuse.Store(0)
	if code, out := run(); code != 0 {
		t.Fatalf("the printed %s, Connect accepting it: exit %d\n%s", stop, code, out)
	}
	if s, err := prc.Status(ctx, name); err != nil || s.Connector.State != "STOPPED" {
		t.Errorf("%s after the printed %s: %+v %v, want STOPPED", name, stop, s, err)
	}
}

package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// freeAddr returns a loopback address nothing listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func httpGet(url string) (int, string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// The acceptance test, driven as a user would: daemon --schedule "@every 1s"
// --keep-last 3 for several seconds leaves exactly 3 snapshots, answers
// /healthz and /metrics, and exits 0 when told to stop (main turns SIGTERM
// into exactly this context cancel).
func TestDaemonCommand(t *testing.T) {
	brokers, _, _ := demoCluster(t, connectdemo.DefaultSpec())
	st := "file://" + t.TempDir()
	addr := freeAddr(t)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr testkit.SyncBuffer
	exit := make(chan int, 1)
	go func() {
		exit <- run(ctx, []string{"daemon", "--brokers", brokers, "--store", st,
			"--schedule", "@every 1s", "--keep-last", "3", "--listen", addr, "--log-format", "json"}, &stdout, &stderr)
	}()

	deadline := time.Now().Add(30 * time.Second)
	wait := func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			select {
			case code := <-exit:
				t.Fatalf("daemon exited with %d while waiting for %s\n%s", code, what, stderr.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s\n%s", what, stderr.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	wait("/healthz", func() bool { code, _, err := httpGet("http://" + addr + "/healthz"); return err == nil && code == 200 })
	wait("5 successful runs", func() bool {
		return strings.Count(stderr.String(), `"msg":"snapshot run","result":"success"`) >= 5
	})
	_, metrics, err := httpGet("http://" + addr + "/metrics")
	if err != nil || !strings.Contains(metrics, "offsetkeeper_runs_total") || !strings.Contains(metrics, "offsetkeeper_leader 1") {
		t.Errorf("/metrics: %v\n%s", err, metrics)
	}

	cancel()
	select {
	case code := <-exit:
		if code != 0 {
			t.Fatalf("daemon exited %d after cancel\n%s", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("daemon did not exit after cancel")
	}

	s, err := store.OpenStore(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	infos, err := s.Snapshots().List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 3 {
		t.Fatalf("store holds %d snapshots after keep-last 3, want 3", len(infos))
	}
	for _, i := range infos {
		if i.Reason != snapshot.ReasonScheduled {
			t.Errorf("snapshot %s has reason %q, want scheduled", i.ID, i.Reason)
		}
	}
}

func TestDaemonCommandUsage(t *testing.T) {
	for _, args := range [][]string{
		{"daemon", "--schedule", "every hour"},
		{"daemon", "--keep-last", "-2"},
		{"daemon", "--keep-within", "3x"},
		{"daemon", "--run-timeout", "0s"},
		{"daemon", "extra"},
	} {
		code, _, errs := runCLI(t, args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d\n%s", args, code, exitUsage, errs)
		}
	}
}

package restore_test

import (
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// TestResumeWaitsForHealth: on a 3.9+ worker (GET /health, KIP-1017)
// that answers 503 starting, --create-connectors --resume says so and
// waits before it resumes, then goes on once the worker is healthy; one
// that stays unhealthy (500) fails the resume naming the answer, the
// restore itself done and verified.
func TestResumeWaitsForHealth(t *testing.T) {
	ctx := t.Context()
	_, snap := oldCluster(t)
	for _, tc := range []struct {
		health  string
		recover bool
		want    []string
	}{
		{"starting", true, []string{"connect: GET /health answers starting (503", "waiting before it resumes connectors", "connect: GET /health answers healthy: resumes connectors", "resumed: connector snk"}},
		{"unhealthy", false, []string{"connect: GET /health answers unhealthy (500"}},
	} {
		t.Run(tc.health, func(t *testing.T) {
			dst := newConnectClusterWith(t, "new-cluster", connectsim.Options{Version: "3.9.0"})
			st, err := store.OpenStore(ctx, "file://"+t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			var out testkit.SyncBuffer
			env := restore.Env{Client: dst.cl, Store: st, Connect: dst.rc, Out: &out, Warn: &out}
			timeout := 30 * time.Second
			if !tc.recover {
				timeout = 500 * time.Millisecond
			}
			req := restore.Request{Snapshot: snap, Options: restore.Options{AllowOtherCluster: true}, CreateConnectors: true, Resume: true, StopTimeout: timeout}
			dst.srv.SetHealth(tc.health)
			done, finished := make(chan struct{}), make(chan struct{})
			go func() {
				defer close(done)
				if !tc.recover {
					return
				}
				for !strings.Contains(out.String(), "GET /health answers "+tc.health) {
					select {
					case <-finished:
						return
					case <-time.After(5 * time.Millisecond):
					}
				}
				dst.srv.SetHealth("healthy")
			}()
			_, err = restore.Run(ctx, env, req)
			close(finished)
			<-done
			switch {
			case tc.recover && err != nil:
				t.Fatalf("run: %v\n%s", err, out.String())
			case !tc.recover && (err == nil || !strings.Contains(err.Error(), "the restore is done and verified, but the Connect worker is not healthy (GET /health answers unhealthy)")):
				t.Fatalf("run on an unhealthy worker: %v\n%s", err, out.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}

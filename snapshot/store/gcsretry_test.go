package store

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

// TestGCSStoreRefusedFailsFast: a gs:// store whose endpoint refuses the
// connection fails a listing after a few attempts, with the connection
// that failed, long before its store timeout (issue 42: it took 61 s, the
// Cloud Storage client retrying until the timeout ended the call); one
// whose endpoint accepts and never answers still fails by the store
// timeout, ErrStoreTimeout. The endpoint is the emulator host the client
// honours (STORAGE_EMULATOR_HOST), as fake-gcs-server is reached.
func TestGCSStoreRefusedFailsFast(t *testing.T) {
	dead := closedPort(t)
	isolateCloud(t, dead)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // accepts, reads, never answers
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			go func() { _, _ = c.Read(make([]byte, 64<<10)) }()
		}
	}()
	for _, tc := range []struct {
		name, host string
		timeout    time.Duration
		timedOut   bool
		want       string
	}{
		// The timeout is far beyond the test's context: only failing
		// fast ends this listing before the context does.
		{"refused", dead, time.Hour, false, "connection refused"},
		{"silent", ln.Addr().String(), time.Second, true, "did not answer within 1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("STORAGE_EMULATOR_HOST", tc.host)
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			s, err := OpenStore(ctx, "gs://backups")
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			s.SetTimeout(tc.timeout)
			_, err = s.Snapshots().List(ctx)
			switch {
			case err == nil:
				t.Fatal("List succeeded")
			case ctx.Err() != nil:
				t.Fatalf("List ran until the test's context ended: %v", err)
			case errors.Is(err, ErrStoreTimeout) != tc.timedOut:
				t.Errorf("List: %v; ErrStoreTimeout %v, want %v", err, errors.Is(err, ErrStoreTimeout), tc.timedOut)
			case !strings.Contains(err.Error(), tc.want):
				t.Errorf("List: %v; want %q", err, tc.want)
			}
		})
	}
}

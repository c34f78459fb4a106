package reliability

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/s3test"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// realBuckets opens the real buckets store faults are injected in front of.
var realBuckets = []struct {
	name string
	open func(t *testing.T) *blob.Bucket
}{
	{"mem", func(t *testing.T) *blob.Bucket { return memblob.OpenBucket(nil) }},
	{"file", func(t *testing.T) *blob.Bucket {
		b, err := fileblob.OpenBucket(t.TempDir(), &fileblob.Options{NoTempDir: true})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}},
}

// capturedSnapshot captures DefaultSpec once per test.
func capturedSnapshot(t *testing.T) *snapshot.Snapshot {
	t.Helper()
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	return c.capture()
}

// fresh is a copy of snap that Put gives a new ID.
func fresh(snap *snapshot.Snapshot) *snapshot.Snapshot {
	cp := *snap
	cp.ID, cp.CreatedAt = "", time.Time{}
	return &cp
}

// allKeys lists every key of a bucket, temporary files included.
func allKeys(t *testing.T, b *blob.Bucket) []string {
	t.Helper()
	var keys []string
	it := b.List(nil)
	for {
		o, err := it.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return keys
		}
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, o.Key)
	}
}

// TestStoreWriteFaults: a write that fails, times out, is cancelled, or
// whose commit fails, at any point, returns an error naming the snapshot
// and leaves nothing listed and no object behind; the next write works.
func TestStoreWriteFaults(t *testing.T) {
	snap := capturedSnapshot(t)
	size := func() int64 {
		s := store.NewStore(memblob.OpenBucket(nil))
		defer s.Close()
		info, err := s.Snapshots().Put(context.Background(), fresh(snap))
		if err != nil {
			t.Fatal(err)
		}
		return info.Size
	}()

	type fault struct {
		name    string
		set     func(b *faultBucket, cancel context.CancelFunc)
		timeout time.Duration
		want    string // in the error
		// whole: the fault hides a commit that happened, so one whole
		// snapshot may be listed; it must verify.
		whole bool
	}
	faults := []fault{
		{name: "unreachable", set: func(b *faultBucket, _ context.CancelFunc) { b.unreachable = true }, want: "connection refused"},
		{name: "commit fails", set: func(b *faultBucket, _ context.CancelFunc) { b.failClose = true }, want: "503 Slow Down"},
		{name: "commit hangs until the timeout", set: func(b *faultBucket, _ context.CancelFunc) { b.hangClose = true }, timeout: 200 * time.Millisecond, want: "context deadline exceeded"},
		{name: "commit answer lost", set: func(b *faultBucket, _ context.CancelFunc) { b.lostAck = true }, want: "connection reset", whole: true},
	}
	// size-8: the object's size varies by a byte or two with its
	// creation time (RFC 3339 drops trailing zeros).
	for _, at := range []int64{0, 1, 100, size / 2, size - 8} {
		faults = append(faults,
			fault{name: "write fails at byte " + itoa(at), set: func(b *faultBucket, _ context.CancelFunc) { b.failWriteAt = at }, want: "connection reset by peer"},
			fault{name: "write hangs at byte " + itoa(at), set: func(b *faultBucket, _ context.CancelFunc) { b.hangWriteAt = at }, timeout: 200 * time.Millisecond, want: "context deadline exceeded"},
			fault{name: "cancelled at byte " + itoa(at), set: func(b *faultBucket, cancel context.CancelFunc) { b.writeHookAt, b.onWriteAt = at, cancel }, want: "context canceled"},
		)
	}

	for _, rb := range realBuckets {
		t.Run(rb.name, func(t *testing.T) {
			for _, f := range faults {
				t.Run(f.name, func(t *testing.T) {
					real := rb.open(t)
					defer real.Close()
					fb := newFaultBucket(real)
					st := store.NewStore(blob.NewBucket(fb))
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					defer cancel()
					if f.timeout > 0 {
						ctx, cancel = context.WithTimeout(ctx, f.timeout)
						defer cancel()
					}
					fb.set(func(b *faultBucket) { f.set(b, cancel) })

					s := fresh(snap)
					began := time.Now()
					_, err := st.Snapshots().Put(ctx, s)
					if err == nil {
						t.Fatal("Put succeeded under a store fault")
					}
					if time.Since(began) > 30*time.Second {
						t.Fatalf("Put took %s to give up", time.Since(began))
					}
					if !strings.Contains(err.Error(), f.want) || !strings.Contains(err.Error(), s.ID) {
						t.Errorf("error %q does not name the snapshot %s and the cause %q", err, s.ID, f.want)
					}

					// What the real bucket holds, read without faults.
					direct := store.NewStore(real)
					ids := checkStore(t, direct)
					switch {
					case f.whole && len(ids) > 1, !f.whole && len(ids) > 0:
						t.Errorf("a failed write left %v listed", ids)
					}
					if keys := allKeys(t, real); !f.whole && len(keys) > 0 {
						t.Errorf("a failed write left objects behind: %v", keys)
					}

					// The store works again once the fault is gone.
					fb.reset()
					info, err := st.Snapshots().Put(context.Background(), fresh(snap))
					if err != nil {
						t.Fatalf("Put after the fault: %v", err)
					}
					if _, err := st.Snapshots().Verify(context.Background(), info.ID); err != nil {
						t.Fatalf("verify after the fault: %v", err)
					}
				})
			}
		})
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestStoreReadFaults: a read that comes back truncated (at every length
// through the header, and many past it), with a single byte corrupted
// (likewise), or broken part way, is refused by Get and Verify (ErrCorrupt,
// ErrChecksum or the read error), never decoded.
func TestStoreReadFaults(t *testing.T) {
	snap := capturedSnapshot(t)
	for _, rb := range realBuckets {
		t.Run(rb.name, func(t *testing.T) {
			real := rb.open(t)
			defer real.Close()
			ctx := context.Background()
			info, err := store.NewStore(real).Snapshots().Put(ctx, fresh(snap))
			if err != nil {
				t.Fatal(err)
			}
			fb := newFaultBucket(real)
			st := store.NewStore(blob.NewBucket(fb))

			refused := func(what string, wantIs ...error) {
				t.Helper()
				got, _, err := st.Snapshots().GetWith(ctx, info.ID, nil)
				if err == nil {
					t.Fatalf("%s: Get decoded snapshot %s", what, got.ID)
				}
				if len(wantIs) > 0 {
					ok := false
					for _, w := range wantIs {
						ok = ok || errors.Is(err, w)
					}
					if !ok {
						t.Fatalf("%s: Get error %v is not one of %v", what, err, wantIs)
					}
				}
				if !strings.Contains(err.Error(), info.ID) {
					t.Fatalf("%s: error %q does not name the snapshot", what, err)
				}
				if _, err := st.Snapshots().Verify(ctx, info.ID); err == nil {
					t.Fatalf("%s: Verify passed", what)
				}
			}
			for _, n := range positions(info.Size) {
				fb.set(func(b *faultBucket) { b.truncateReadAt, b.corruptReadAt = n, -1 })
				refused("truncated to "+itoa(n)+" bytes", snapshot.ErrCorrupt, snapshot.ErrChecksum)
			}
			for _, n := range positions(info.Size) {
				fb.set(func(b *faultBucket) { b.truncateReadAt, b.corruptReadAt = -1, n })
				// Any error will do: a damaged header field can read as
				// a compression or version this build does not know.
				refused("byte " + itoa(n) + " corrupted")
			}
			for _, n := range []int64{0, 1, info.Size / 2, info.Size - 1} {
				fb.set(func(b *faultBucket) { b.corruptReadAt, b.failReadAt = -1, n })
				refused("read fails at byte " + itoa(n))
			}
			fb.set(func(b *faultBucket) { b.failReadAt = -1 })
			if _, _, err := st.Snapshots().GetWith(ctx, info.ID, nil); err != nil {
				t.Fatalf("Get without faults: %v", err)
			}
		})
	}
}

// positions are the offsets a read fault is tried at: every byte of the
// first 512 (the header and the start of the body), then every 37th, and
// the last 16.
func positions(size int64) []int64 {
	var out []int64
	for n := int64(0); n < size; n++ {
		if n < 512 || n%37 == 0 || n >= size-16 {
			out = append(out, n)
		}
	}
	return out
}

// s3Proxy stands between the S3 client and the in-process S3 server and
// breaks object PUTs and GETs on demand.
type s3Proxy struct {
	srv *httptest.Server
	// dropPuts is how many object PUTs to answer by closing the
	// connection part way through the body (-1: all).
	dropPuts atomic.Int64
	puts     atomic.Int64
	// getMode damages every object GET: getShort ends the body half way
	// with a matching Content-Length (a proxy that truncates cleanly),
	// getCut closes the connection half way through the announced body,
	// getFlip flips one byte.
	getMode atomic.Int32
}

const (
	getOK = iota
	getShort
	getCut
	getFlip
)

// take decrements n unless it is 0; -1 means always.
func take(n *atomic.Int64) bool {
	for {
		v := n.Load()
		switch {
		case v == 0:
			return false
		case v < 0:
			return true
		case n.CompareAndSwap(v, v-1):
			return true
		}
	}
}

// startS3Proxy starts the S3 server and a proxy in front of it and returns
// the proxy, the bucket URL through the proxy and the direct bucket URL.
func startS3Proxy(t *testing.T) (p *s3Proxy, viaProxy, direct string) {
	t.Helper()
	direct = s3test.Start(t)
	u, err := url.Parse(direct)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	target, err := url.Parse(q.Get("endpoint"))
	if err != nil {
		t.Fatal(err)
	}
	p = &s3Proxy{}
	rp := httputil.NewSingleHostReverseProxy(target)
	isObject := func(r *http.Request) bool {
		return strings.Count(strings.Trim(r.URL.Path, "/"), "/") >= 1 // /bucket/key
	}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPut && isObject(r):
			p.puts.Add(1)
			if take(&p.dropPuts) {
				_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 100)) // part of the body, then the line drops
				hijackClose(t, w)
				return
			}
		case r.Method == http.MethodGet && isObject(r) && p.getMode.Load() != getOK:
			rec := httptest.NewRecorder()
			rp.ServeHTTP(rec, r)
			if body := rec.Body.Bytes(); rec.Code == http.StatusOK && len(body) >= 2 {
				p.mangle(t, w, rec.Result(), body)
			} else {
				copyResponse(w, rec.Result(), body)
			}
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	q.Set("endpoint", p.srv.URL)
	u.RawQuery = q.Encode()
	return p, u.String(), direct
}

// mangle writes a damaged copy of an object GET response: a flipped byte,
// a body cut half way with a shorter Content-Length, or a connection
// closed half way through the announced body.
func (p *s3Proxy) mangle(t *testing.T, w http.ResponseWriter, resp *http.Response, body []byte) {
	h := w.Header()
	for k, vs := range resp.Header {
		h[k] = vs
	}
	h.Del("Content-MD5")
	h.Del("X-Amz-Checksum-Crc32")
	h.Del("X-Amz-Checksum-Crc32c")
	h.Del("X-Amz-Checksum-Sha256")
	h.Del("Etag")
	switch p.getMode.Load() {
	case getFlip:
		body = bytes.Clone(body)
		body[len(body)/2] ^= 0xff
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(body)
	case getShort:
		body = body[:len(body)/2]
		h.Set("Content-Length", itoa(int64(len(body))))
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(body)
	default:
		h.Set("Content-Length", itoa(int64(len(body))))
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(body[:len(body)/2])
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		hijackClose(t, w)
	}
}

func copyResponse(w http.ResponseWriter, resp *http.Response, body []byte) {
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(body)
}

// hijackClose closes the client's connection without an answer.
func hijackClose(t *testing.T, w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		t.Error("response writer cannot hijack")
		return
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		t.Error(err)
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0) // a reset, as a dropped line looks
	}
	conn.Close()
}

// TestStoreS3Faults runs the S3 driver, over HTTP, through a proxy that
// drops uploads and damages downloads: a dropped upload is retried by the
// SDK or fails with nothing listed; a damaged download is refused.
func TestStoreS3Faults(t *testing.T) {
	snap := capturedSnapshot(t)
	p, viaProxy, direct := startS3Proxy(t)
	t.Setenv("AWS_MAX_ATTEMPTS", "2") // one retry, not the SDK's backoff over 3
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := store.OpenStore(ctx, viaProxy)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	straight, err := store.OpenStore(ctx, direct)
	if err != nil {
		t.Fatal(err)
	}
	defer straight.Close()

	t.Run("every upload dropped", func(t *testing.T) {
		p.dropPuts.Store(-1)
		defer p.dropPuts.Store(0)
		s := fresh(snap)
		if _, err := st.Snapshots().Put(ctx, s); err == nil || !strings.Contains(err.Error(), s.ID) {
			t.Fatalf("Put through a proxy dropping every upload: %v", err)
		}
		if ids := checkStore(t, straight); len(ids) > 0 {
			t.Fatalf("dropped uploads left %v listed", ids)
		}
	})
	t.Run("first upload dropped", func(t *testing.T) {
		p.dropPuts.Store(1)
		before := p.puts.Load()
		info, err := st.Snapshots().Put(ctx, fresh(snap))
		if err != nil {
			t.Fatalf("Put with one dropped upload (the SDK retries): %v", err)
		}
		if p.puts.Load()-before < 2 {
			t.Fatal("the upload was not dropped: the test proves nothing")
		}
		ids := checkStore(t, straight)
		if len(ids) != 1 || ids[0] != info.ID {
			t.Fatalf("store lists %v, want the one snapshot %s", ids, info.ID)
		}
	})
	ids := checkStore(t, straight)
	if len(ids) != 1 {
		t.Fatalf("store lists %v", ids)
	}
	id := ids[0]
	for _, tc := range []struct {
		name string
		mode int32
		is   []error // nil: any error
	}{
		{"download cut short (Content-Length shortened)", getShort, []error{snapshot.ErrCorrupt}},
		{"download connection closed half way", getCut, nil},
		{"download with a flipped byte", getFlip, []error{snapshot.ErrChecksum, snapshot.ErrCorrupt}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p.getMode.Store(tc.mode)
			defer p.getMode.Store(getOK)
			_, _, err := st.Snapshots().GetWith(ctx, id, nil)
			if err == nil {
				t.Fatal("Get decoded a damaged download")
			}
			if !strings.Contains(err.Error(), id) {
				t.Errorf("error %q does not name the snapshot", err)
			}
			for _, w := range tc.is {
				if errors.Is(err, w) {
					return
				}
			}
			if tc.is != nil {
				t.Fatalf("Get: %v, want one of %v", err, tc.is)
			}
		})
	}
	if _, _, err := st.Snapshots().GetWith(ctx, id, nil); err != nil {
		t.Fatalf("Get without faults: %v", err)
	}
}

// TestStoreUnreachable: a store that cannot be reached or opened fails the
// command with a message naming the store, and nothing is written.
func TestStoreUnreachable(t *testing.T) {
	t.Parallel() // mostly waits on the S3 SDK's retries
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	// An S3 endpoint where nothing listens.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := ln.Addr().String()
	ln.Close()
	deadS3 := "s3://offsetkeeper-test?endpoint=" + url.QueryEscape("http://"+deadAddr) + "&region=us-east-1&use_path_style=true"
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	// One attempt: the test is about the message, not the SDK's backoff.
	awsEnv := []string{"AWS_ACCESS_KEY_ID=x", "AWS_SECRET_ACCESS_KEY=y", "AWS_EC2_METADATA_DISABLED=true",
		"AWS_CONFIG_FILE=/nonexistent", "AWS_SHARED_CREDENTIALS_FILE=/nonexistent", "AWS_MAX_ATTEMPTS=1", "AWS_REGION=us-east-1"}
	for _, tc := range []struct {
		name  string
		store string
		args  []string
		want  []string
	}{
		{"snapshot to an S3 endpoint that refuses connections", deadS3, []string{"snapshot"}, []string{"store snapshot", "connection refused"}},
		{"list an S3 endpoint that refuses connections", deadS3, []string{"list"}, []string{"list snapshots", "connection refused"}},
		{"snapshot to a directory that is a file", notADir, []string{"snapshot"}, []string{"open store", "--store"}},
		{"verify an unknown scheme", "nosuch://bucket", []string{"verify"}, []string{"open store", "--store"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := append(c.env(), append(awsEnv, "OFFSETKEEPER_STORE="+tc.store)...)
			began := time.Now()
			r := runBin(t, env, tc.args...)
			if r.code != 1 {
				t.Fatalf("want exit 1, got %s", r)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
			t.Logf("failed in %s: %s", time.Since(began).Round(time.Millisecond), strings.TrimSpace(r.stderr))
		})
	}
}

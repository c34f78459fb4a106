// Package storetest runs the store conformance suite on every backend:
// file, mem, gofakes3 and, when their programs are installed (see
// internal/storeservers), MinIO, Azurite and fake-gcs-server, each started
// by the test on a free loopback port. A backend that is not installed is
// skipped, and the suite says so.
package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/offsetkeeper/offsetkeeper/internal/s3test"
	"github.com/offsetkeeper/offsetkeeper/internal/storeservers"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// backend is one store under test.
type backend struct {
	name string
	// url opens the store; cases get a prefix of their own.
	url string
	// missing is the URL of a bucket that does not exist ("" none).
	missing string
	// wrongEnv holds credentials the server refuses (nil: it takes any).
	wrongEnv map[string]string
	env      map[string]string
	srv      *storeservers.Server
	proxy    *storeservers.Proxy
	// s3 is set for S3 servers: their multipart uploads can be listed.
	s3 bool
	// skip names cases the backend cannot honour, with the reason.
	skip map[string]string
}

var skipped sync.Map // backend name -> reason

// TestConformance runs every case on every backend.
func TestConformance(t *testing.T) {
	starts := []struct {
		name  string
		start func(t *testing.T) *backend
	}{
		{"file", func(t *testing.T) *backend {
			return &backend{name: "file", url: "file://" + t.TempDir(), missing: "file://" + t.TempDir() + "/no-such-dir",
				skip: map[string]string{"WrongCredentials": "no credentials",
					"SIGKILLUpload": "fileblob writes a temporary file and renames it; reliability/kill_test.go kills snapshots on a file store"}}
		}},
		{"mem", func(t *testing.T) *backend {
			return &backend{name: "mem", url: "mem://",
				skip: map[string]string{"WrongCredentials": "no credentials", "MissingBucket": "mem:// has no buckets"}}
		}},
		{"gofakes3", startGofakes3},
		{"minio", func(t *testing.T) *backend { return fromServer(storeservers.MinIO(t), true) }},
		{"azurite", func(t *testing.T) *backend { return fromServer(storeservers.Azurite(t), false) }},
		{"fake-gcs-server", func(t *testing.T) *backend {
			b := fromServer(storeservers.FakeGCS(t), false)
			b.skip = map[string]string{"WrongCredentials": "fake-gcs-server takes any credentials"}
			return b
		}},
	}
	for _, st := range starts {
		t.Run(st.name, func(t *testing.T) {
			t.Cleanup(func() {
				if t.Skipped() {
					skipped.Store(st.name, "not installed")
				}
			})
			b := st.start(t)
			for k, v := range b.env {
				t.Setenv(k, v)
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					if reason, ok := b.skip[c.name]; ok && reason != "" {
						t.Skipf("%s: %s", b.name, reason)
					}
					if c.network && b.proxy == nil {
						t.Skipf("%s: no network to cut", b.name)
					}
					if c.server && b.srv == nil {
						t.Skipf("%s: no server process to stop", b.name)
					}
					c.run(t, b)
				})
			}
		})
	}
	var names []string
	skipped.Range(func(k, v any) bool { names = append(names, k.(string)); return true })
	if len(names) > 0 {
		t.Logf("backends skipped (program not installed): %s", strings.Join(names, ", "))
	}
}

func fromServer(s *storeservers.Server, isS3 bool) *backend {
	return &backend{name: s.Name, url: s.URL, missing: s.MissingURL, wrongEnv: s.WrongEnv, env: s.Env, srv: s, proxy: s.Proxy, s3: isS3}
}

// startGofakes3 is s3test's server behind a proxy.
func startGofakes3(t *testing.T) *backend {
	raw := s3test.Start(t)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	ep, _ := url.Parse(q.Get("endpoint"))
	p := storeservers.NewProxy(t, ep.Host)
	q.Set("endpoint", "http://"+p.Addr)
	u.RawQuery = q.Encode()
	missing := *u
	missing.Host = "no-such-bucket"
	return &backend{name: "gofakes3", url: u.String(), missing: missing.String(), proxy: p, s3: true, skip: map[string]string{
		"ConditionalCreateMultipart": "gofakes3 overwrites a multipart upload despite IfNotExist (every real server refuses it)",
		"WrongCredentials":           "gofakes3 takes any credentials",
		"AbortedUpload":              "gofakes3 still lists a multipart upload aborted while a part was in flight (MinIO checks the abort)",
	}}
}

type conformanceCase struct {
	name            string
	run             func(t *testing.T, b *backend)
	network, server bool // needs a proxy, a server process
}

var cases = []conformanceCase{
	{name: "RoundTrip", run: testRoundTrip},
	{name: "ConditionalCreateSmall", run: testCreateSmall},
	{name: "ConditionalCreateMultipart", run: testCreateMultipart},
	{name: "JournalFence", run: testJournalFence},
	{name: "AmbiguousWrite", run: testAmbiguousWrite, network: true, server: false},
	{name: "CutMidCall", run: testCutMidCall, network: true, server: false},
	{name: "ServerDown", run: testServerDown, network: true, server: true},
	{name: "WrongCredentials", run: testWrongCredentials},
	{name: "MissingBucket", run: testMissingBucket},
	{name: "ManyObjects", run: testManyObjects},
	{name: "AbortedUpload", run: testAbortedUpload, network: true, server: false},
	{name: "SIGKILLUpload", run: testSIGKILLUpload, network: true},
}

var prefixes atomic.Int64

// open opens a part of b's store of its own.
func open(t *testing.T, b *backend) *store.Store {
	t.Helper()
	s, _, _ := openPrefixed(t, b)
	return s
}

// openPrefixed is open, also returning the store's URL and its prefix.
func openPrefixed(t *testing.T, b *backend) (*store.Store, string, string) {
	t.Helper()
	prefix := fmt.Sprintf("case-%d/", prefixes.Add(1))
	raw := b.url
	if b.name != "file" {
		sep := "?"
		if strings.Contains(raw, "?") {
			sep = "&"
		}
		raw += sep + "prefix=" + url.QueryEscape(prefix)
	} else {
		raw += "/" + prefix
	}
	return openURL(t, raw), raw, prefix
}

func openURL(t *testing.T, raw string) *store.Store {
	t.Helper()
	s, err := store.OpenStore(t.Context(), raw)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	s.SetTimeout(20 * time.Second)
	return s
}

func small(reason string) *snapshot.Snapshot {
	return &snapshot.Snapshot{ClusterID: "conformance", Reason: reason}
}

func testRoundTrip(t *testing.T, b *backend) {
	s := open(t, b)
	info, err := s.Snapshots().Put(t.Context(), small("round trip"))
	if err != nil {
		t.Fatal(err)
	}
	infos, err := s.Snapshots().List(t.Context())
	if err != nil || len(infos) != 1 || infos[0].ID != info.ID {
		t.Fatalf("List = %v, %v; want %s", infos, err, info.ID)
	}
	if _, got, err := s.Snapshots().GetWith(t.Context(), info.ID, nil); err != nil || got.Reason != "round trip" {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	if err := s.Snapshots().Delete(t.Context(), info.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Snapshots().GetWith(t.Context(), info.ID, nil); !errors.Is(err, snapshot.ErrNotFound) {
		t.Fatalf("Get after Delete: %v, want ErrNotFound", err)
	}
}

func testCreateSmall(t *testing.T, b *backend) {
	s := open(t, b)
	first := small("first")
	info, err := s.Snapshots().Put(t.Context(), first)
	if err != nil {
		t.Fatal(err)
	}
	second := small("second")
	second.ID = info.ID
	if _, err := s.Snapshots().Put(t.Context(), second); !errors.Is(err, snapshot.ErrExists) {
		t.Fatalf("second Put of %s: %v, want ErrExists", info.ID, err)
	}
	if _, got, err := s.Snapshots().GetWith(t.Context(), info.ID, nil); err != nil || got.Reason != "first" {
		t.Fatalf("Get = %+v, %v; want the first", got, err)
	}
}

// bigSegment is a merged segment of about size bytes that do not compress.
func bigSegment(t *testing.T, epoch string, size int) *journal.Segment {
	t.Helper()
	var entries []journal.Entry
	for n := 0; n < size; n += 1 << 20 {
		v := make([]byte, 1<<20)
		_, _ = rand.Read(v)
		entries = append(entries, journal.Entry{Kind: journal.EntrySource, Topic: "connect-offsets", Offset: int64(n), Time: 1, Key: []byte("k"), Value: v})
	}
	ts := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	return &journal.Segment{Epoch: epoch, Level: journal.LevelMinute, FirstSeq: 1, LastSeq: 2, FirstTime: ts, LastTime: ts.Add(time.Minute), Entries: entries, LastDigest: "d"}
}

const epochID = "20261201T090000.000000Z-c0ffee"

func testCreateMultipart(t *testing.T, b *backend) {
	s := open(t, b)
	const size = 20 << 20
	if _, err := s.Journal().PutSegment(t.Context(), bigSegment(t, epochID, size)); err != nil {
		t.Fatal(err)
	}
	l, err := s.Journal().List(t.Context())
	if err != nil || len(l.Epochs) != 1 || len(l.Epochs[0].Segments) != 1 {
		t.Fatalf("ListJournal = %+v, %v", l, err)
	}
	si := l.Epochs[0].Segments[0]
	before, err := s.Journal().ReadSegment(t.Context(), si)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Journal().PutSegment(t.Context(), bigSegment(t, epochID, size)); !errors.Is(err, snapshot.ErrExists) {
		t.Fatalf("second write of %s: %v, want ErrExists", si.Key, err)
	}
	after, err := s.Journal().ReadSegment(t.Context(), si)
	if err != nil {
		t.Fatalf("the first write does not read back: %v", err)
	}
	if !bytes.Equal(before.Entries[0].Value, after.Entries[0].Value) {
		t.Fatal("the second write replaced the first")
	}
}

// rawSegment is segment seq of a journal, last at t.
func rawSegment(seq uint64, prev string, ts time.Time, value string) *journal.Segment {
	return &journal.Segment{Epoch: epochID, FirstSeq: seq, LastSeq: seq, FirstTime: ts.Add(-time.Second), LastTime: ts, PrevDigest: prev,
		Entries: []journal.Entry{{Kind: journal.EntrySource, Topic: "connect-offsets", Offset: int64(seq), Time: ts.UnixMilli(), Key: []byte("k"), Value: []byte(value)}}}
}

func putEpoch(t *testing.T, s *store.Store) {
	t.Helper()
	if _, err := s.Snapshots().Put(t.Context(), &snapshot.Snapshot{ID: epochID, ClusterID: "conformance", Reason: "base"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Journal().PutEpoch(t.Context(), &journal.Epoch{ID: epochID, Reason: journal.EpochFirstRun, StartedAt: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
}

func verifyClean(t *testing.T, s *store.Store, segments int) {
	t.Helper()
	checks, err := s.Journal().Verify(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		if c.Err != nil {
			t.Fatalf("verify epoch %s: %v", c.Epoch, c.Err)
		}
		if c.Segments != segments {
			t.Fatalf("verify epoch %s: %d segments, want %d", c.Epoch, c.Segments, segments)
		}
	}
	l, err := s.Journal().List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, hole := l.Epochs[0].Chain(); hole != nil {
		t.Fatalf("chain: %v", hole)
	}
}

func testJournalFence(t *testing.T, b *backend) {
	s := open(t, b)
	putEpoch(t, s)
	ts := time.Date(2026, 12, 1, 9, 0, 10, 0, time.UTC)
	a := rawSegment(1, "", ts, "a")
	if _, err := s.Journal().PutSegment(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	// A second writer of seq 1, a moment later: its name differs.
	_, err := s.Journal().PutSegment(t.Context(), rawSegment(1, "", ts.Add(time.Second), "b"))
	var fe *journal.FencedError
	if !errors.As(err, &fe) || !fe.Stored || fe.Epoch != epochID || fe.Seq != 1 {
		t.Fatalf("second writer of seq 1: %v, want a FencedError naming epoch %s", err, epochID)
	}
	if !strings.Contains(err.Error(), epochID) {
		t.Fatalf("error %q does not name the epoch", err)
	}
	// The first writer's retry of its own write is no error.
	if _, err := s.Journal().PutSegment(t.Context(), a); err != nil {
		t.Fatalf("retry of the stored segment: %v", err)
	}
	if _, err := s.Journal().PutSegment(t.Context(), rawSegment(2, a.LastDigest, ts.Add(10*time.Second), "a2")); err != nil {
		t.Fatal(err)
	}
	verifyClean(t, s, 2)
}

func testAmbiguousWrite(t *testing.T, b *backend) {
	s := open(t, b)
	s.SetTimeout(5 * time.Second)
	putEpoch(t, s)
	ts := time.Date(2026, 12, 1, 9, 0, 10, 0, time.UTC)
	first := rawSegment(1, "", ts, "one")
	if _, err := s.Journal().PutSegment(t.Context(), first); err != nil {
		t.Fatal(err)
	}
	seg := rawSegment(2, first.LastDigest, ts.Add(10*time.Second), "two")
	b.proxy.DropReplies(true)
	defer b.proxy.DropReplies(false)
	_, err := s.Journal().PutSegment(t.Context(), seg)
	b.proxy.DropReplies(false)
	if err == nil {
		t.Fatal("PutSegment succeeded with every reply dropped")
	}
	if b.proxy.Dropped.Load() == 0 {
		t.Fatal("no reply was dropped")
	}
	// The retry writes the same segment; what the first try stored is it.
	if _, err := s.Journal().PutSegment(t.Context(), seg); err != nil {
		t.Fatalf("retry after replies were dropped: %v", err)
	}
	if _, err := s.Journal().PutSegment(t.Context(), rawSegment(3, seg.LastDigest, ts.Add(20*time.Second), "three")); err != nil {
		t.Fatal(err)
	}
	verifyClean(t, s, 3)
}

// oneLine checks err is one line, no panic, and wraps snapshot.ErrStore.
func oneLine(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", what)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || strings.Contains(msg, "panic") {
		t.Errorf("%s: error is not one line without a panic: %q", what, msg)
	}
	if !errors.Is(err, store.ErrStore) && !errors.Is(err, snapshot.ErrStoreNotFound) {
		t.Errorf("%s: error %q is not a store error", what, msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("%s: error %q lacks %q", what, msg, w)
		}
	}
}

// waitUp waits until the proxy has passed n more bytes to the server.
func waitUp(t *testing.T, p *storeservers.Proxy, from, n int64, done <-chan error) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for p.Up.Load()-from < n {
		select {
		case err := <-done:
			t.Fatalf("the upload ended before %d bytes were sent: %v", n, err)
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the upload sent %d bytes, not %d", p.Up.Load()-from, n)
		}
	}
}

func testCutMidCall(t *testing.T, b *backend) {
	s := open(t, b)
	s.SetTimeout(5 * time.Second)
	b.proxy.SetDelay(2 * time.Millisecond)
	from := b.proxy.Up.Load()
	done := make(chan error, 1)
	go func() {
		_, err := s.Journal().PutSegment(t.Context(), bigSegment(t, epochID, 20<<20))
		done <- err
	}()
	defer b.proxy.SetDelay(0)
	defer b.proxy.SetDown(false)
	waitUp(t, b.proxy, from, 2<<20, done)
	b.proxy.SetDown(true)
	err := <-done
	b.proxy.SetDelay(0)
	oneLine(t, "upload cut mid-call", err)
	_, lerr := s.Journal().List(t.Context())
	oneLine(t, "list while down", lerr)
	b.proxy.SetDown(false)
	l, err := s.Journal().List(t.Context())
	if err != nil {
		t.Fatalf("list once back: %v", err)
	}
	if len(l.Epochs) != 0 {
		t.Fatalf("a cut upload is listed: %+v", l.Epochs)
	}
	if _, err := s.Snapshots().Put(t.Context(), small("after")); err != nil {
		t.Fatalf("put once back: %v", err)
	}
}

func testServerDown(t *testing.T, b *backend) {
	s := open(t, b)
	s.SetTimeout(5 * time.Second)
	if _, err := s.Snapshots().Put(t.Context(), small("before")); err != nil {
		t.Fatal(err)
	}
	b.srv.Stop()
	_, err := s.Snapshots().List(t.Context())
	oneLine(t, "list with the server stopped", err)
	_, err = s.Snapshots().Put(t.Context(), small("while down"))
	oneLine(t, "put with the server stopped", err)
	b.srv.Restart()
	infos, err := s.Snapshots().List(t.Context())
	if err != nil || len(infos) != 1 {
		t.Fatalf("list once the server is back: %v, %v", infos, err)
	}
}

func testWrongCredentials(t *testing.T, b *backend) {
	if b.wrongEnv == nil {
		t.Skipf("%s takes any credentials", b.name)
	}
	// A process of its own: gocloud's default openers read the
	// environment once per process.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), listEnv+"="+b.url)
	for k, v := range b.wrongEnv {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("list with wrong credentials succeeded: %s", out)
	}
	msg := strings.TrimSpace(string(out))
	if strings.Contains(msg, "\n") || strings.Contains(msg, "panic") || !strings.Contains(msg, "credentials") || !strings.Contains(msg, "store unavailable") {
		t.Fatalf("list with wrong credentials: %q; want one line naming the credentials", msg)
	}
}

func testMissingBucket(t *testing.T, b *backend) {
	s, err := store.OpenExistingStore(t.Context(), b.missing)
	if err == nil {
		defer s.Close()
		_, err = s.Snapshots().List(t.Context())
	}
	if !errors.Is(err, snapshot.ErrStoreNotFound) {
		t.Fatalf("list a missing bucket: %v, want ErrStoreNotFound", err)
	}
	oneLine(t, "list a missing bucket", err)
	if b.name == "file" {
		return
	}
	s, err = store.OpenStore(t.Context(), b.missing)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Snapshots().Put(t.Context(), small("nowhere"))
	oneLine(t, "put into a missing bucket", err)
}

func testManyObjects(t *testing.T, b *backend) {
	s := open(t, b)
	const n = 1050 // past a 1,000-key page
	var g errgroup.Group
	g.SetLimit(16)
	for range n {
		g.Go(func() error {
			_, err := s.Snapshots().Put(t.Context(), small("many"))
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	infos, err := s.Snapshots().List(t.Context())
	if err != nil || len(infos) != n {
		t.Fatalf("List: %d snapshots, %v; want %d", len(infos), err, n)
	}
}

func testAbortedUpload(t *testing.T, b *backend) {
	s, _, prefix := openPrefixed(t, b)
	b.proxy.SetDelay(2 * time.Millisecond)
	defer b.proxy.SetDelay(0)
	from := b.proxy.Up.Load()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := s.Journal().PutSegment(ctx, bigSegment(t, epochID, 20<<20))
		done <- err
	}()
	waitUp(t, b.proxy, from, 10<<20, done) // past the first part
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a cancelled upload succeeded")
	}
	b.proxy.SetDelay(0)
	l, err := s.Journal().List(t.Context())
	if err != nil || len(l.Epochs) != 0 {
		t.Fatalf("a cancelled upload is listed: %+v, %v", l, err)
	}
	if b.s3 {
		env := b.env
		if env == nil {
			env = map[string]string{"AWS_ACCESS_KEY_ID": os.Getenv("AWS_ACCESS_KEY_ID"), "AWS_SECRET_ACCESS_KEY": os.Getenv("AWS_SECRET_ACCESS_KEY")}
		}
		n, err := storeservers.MultipartUploads(env, endpointOf(t, b.url), storeservers.Bucket, prefix)
		if err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Fatalf("%d multipart uploads left on the server after the abort", n)
		}
	}
}

func endpointOf(t *testing.T, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("endpoint")
}

// childEnv names the store URL a child process uploads to (see TestMain).
const childEnv = "OFFSETKEEPER_STORETEST_UPLOAD"

// listEnv names a store URL a child process lists, printing the error
// and whether it is a store error.
const listEnv = "OFFSETKEEPER_STORETEST_LIST"

func TestMain(m *testing.M) {
	if raw := os.Getenv(listEnv); raw != "" {
		s, err := store.OpenStore(context.Background(), raw)
		if err == nil {
			_, err = s.Snapshots().List(context.Background())
		}
		if err != nil {
			if errors.Is(err, store.ErrStore) {
				err = fmt.Errorf("%w (%v)", err, store.ErrStore)
			}
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if raw := os.Getenv(childEnv); raw != "" {
		s, err := store.OpenStore(context.Background(), raw)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		t := &testing.T{}
		_, err = s.Journal().PutSegment(context.Background(), bigSegment(t, epochID, 20<<20))
		fmt.Fprintln(os.Stderr, "upload ended:", err)
		os.Exit(3)
	}
	os.Exit(m.Run())
}

func testSIGKILLUpload(t *testing.T, b *backend) {
	s, raw, _ := openPrefixed(t, b)
	b.proxy.SetDelay(2 * time.Millisecond)
	defer b.proxy.SetDelay(0)
	from := b.proxy.Up.Load()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+raw)
	var out bytes.Buffer
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	waitUp(t, b.proxy, from, 4<<20, done)
	_ = cmd.Process.Kill()
	<-done
	b.proxy.SetDelay(0)
	l, err := s.Journal().List(t.Context())
	if err != nil || len(l.Epochs) != 0 {
		t.Fatalf("an upload killed mid-way is listed: %+v, %v (child: %s)", l, err, out.String())
	}
	infos, err := s.Snapshots().List(t.Context())
	if err != nil || len(infos) != 0 {
		t.Fatalf("List after the kill: %v, %v", infos, err)
	}
}

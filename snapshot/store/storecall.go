package store

// This file is the store's boundary: every call to the bucket goes through
// it, with a deadline (Store.SetTimeout, --store-timeout) and a recover, so
// that a driver that hangs (the Cloud Storage client retries a dead endpoint
// until its context ends) or panics (gocloud's azureblob did, on every failed
// write, before v0.49) fails the one call, in an error naming the store,
// instead of the command or the daemon.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"gocloud.dev/blob"
)

// Errors of the store itself, rather than of what it holds.
var (
	// ErrStore: the store could not be used (unreachable, credentials
	// refused, its bucket missing, its driver failed).
	ErrStore = errors.New("store unavailable")
	// ErrStoreTimeout: a store call made no progress within the store
	// timeout (see Store.SetTimeout).
	ErrStoreTimeout = errors.New("store timed out")
)

// DefaultStoreTimeout is how long a store call may go without progress
// (a reply, or bytes read or written) before it fails.
const DefaultStoreTimeout = 60 * time.Second

// SetTimeout sets how long one store call may go without progress before
// it fails with ErrStoreTimeout; 0 is DefaultStoreTimeout, a negative
// duration none. An upload or a read of a large object may take longer
// as long as bytes keep moving.
func (s *Store) SetTimeout(d time.Duration) { s.timeout = d }

func (s *Store) callTimeout() time.Duration {
	if s.timeout == 0 {
		return DefaultStoreTimeout
	}
	return s.timeout
}

// watch is the deadline of one store call: its context is cancelled when
// kick has not been called for the store's timeout.
type watch struct {
	ctx    context.Context
	cancel context.CancelFunc
	timer  *time.Timer
	d      time.Duration
	fired  atomic.Bool
	// The commit of a write (see commit in storecommit.go): parent is the
	// call's own context, for the liveness checks; probe, set before
	// committing is, asks the store something small; extended counts the
	// deadlines passed while the store answered.
	parent     context.Context
	probe      func(context.Context) error
	committing atomic.Bool
	finished   atomic.Bool
	extended   atomic.Int32
	sent       atomic.Int64
}

func (s *Store) watch(parent context.Context) *watch {
	ctx, cancel := context.WithCancel(parent)
	w := &watch{ctx: ctx, cancel: cancel, d: s.callTimeout(), parent: parent}
	if w.d > 0 {
		w.timer = time.AfterFunc(w.d, w.expire)
	}
	return w
}

// kick restarts the deadline: the call made progress.
func (w *watch) kick() {
	if w.timer != nil && !w.fired.Load() {
		w.timer.Reset(w.d)
	}
}

// done ends the call.
func (w *watch) done() {
	w.finished.Store(true)
	if w.timer != nil {
		w.timer.Stop()
	}
	w.cancel()
}

// err returns err, or the timeout when the deadline ended the call.
func (w *watch) err(s *Store, err error) error {
	if err != nil && w.fired.Load() {
		t := &storeTimeout{store: s.name(), d: w.d, err: err}
		if w.committing.Load() {
			t.sent, t.answered = w.sent.Load(), int(w.extended.Load())
		}
		return t
	}
	return err
}

// storeTimeout is a call that made no progress within the store timeout.
type storeTimeout struct {
	store string
	d     time.Duration
	err   error
	// sent is set when the call was the commit of a write of that many
	// bytes; answered counts the store's answers to liveness checks while
	// the commit ran.
	sent     int64
	answered int
}

func (e *storeTimeout) Error() string {
	if e.answered > 0 {
		return fmt.Sprintf("store %s answered, but the upload of %d bytes did not finish within %v, %d times the store timeout of %v "+
			"(--store-timeout / OFFSETKEEPER_STORE_TIMEOUT): a link this slow needs a longer store timeout", e.store, e.sent, e.d*time.Duration(e.answered+1), e.answered+1, e.d)
	}
	return fmt.Sprintf("store %s did not answer within %v (--store-timeout / OFFSETKEEPER_STORE_TIMEOUT): check the endpoint, the network and any proxy", e.store, e.d)
}

func (e *storeTimeout) Is(target error) bool {
	return target == ErrStoreTimeout || target == ErrStore || target == context.DeadlineExceeded
}

func (e *storeTimeout) Unwrap() error { return e.err }

// name names the store in messages: its URL, credentials removed, or the
// bucket's driver when the Store was made by NewStore.
func (s *Store) name() string {
	if s.where != "" {
		return s.where
	}
	return "(bucket)"
}

// recovered turns a panic in a driver into an error naming the store. Use
// as defer s.recovered(&err, "what").
func (s *Store) recovered(err *error, op string) {
	r := recover()
	if r == nil {
		return
	}
	stack := string(debug.Stack())
	where := ""
	for _, line := range strings.Split(stack, "\n") {
		if strings.Contains(line, "gocloud.dev/") || strings.Contains(line, "azure-sdk-for-go") || strings.Contains(line, "aws-sdk-go") || strings.Contains(line, "cloud.google.com/") {
			where = " at " + strings.TrimSpace(line)
			break
		}
	}
	*err = &driverPanic{msg: fmt.Sprintf("%s in store %s: the store's driver panicked (%v%s): a bug in the driver, not in the store's data; retry, and report it if it persists", op, s.name(), r, where)}
}

// driverPanic is a panic of a store driver, recovered.
type driverPanic struct{ msg string }

func (e *driverPanic) Error() string        { return e.msg }
func (e *driverPanic) Is(target error) bool { return target == ErrStore }

// readAll reads the object key whole.
func (s *Store) readAll(ctx context.Context, key string) (data []byte, err error) {
	w := s.watch(ctx)
	defer w.done()
	defer s.recovered(&err, "read "+key)
	r, err := s.bucket.NewReader(w.ctx, key, nil)
	if err != nil {
		return nil, w.err(s, s.describe(err))
	}
	defer r.Close()
	size := r.Size()
	if size < 0 || size > 1<<30 {
		size = 0
	}
	buf := make([]byte, 0, size+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, rerr := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		w.kick()
		if rerr == io.EOF {
			return buf, nil
		}
		if rerr != nil {
			return nil, w.err(s, s.describe(rerr))
		}
	}
}

// newReader opens the object key for reading; the deadline restarts with
// every read, and ends when the reader is closed.
func (s *Store) newReader(ctx context.Context, key string) (_ io.ReadCloser, err error) {
	w := s.watch(ctx)
	defer s.recovered(&err, "read "+key)
	r, err := s.bucket.NewReader(w.ctx, key, nil)
	if err != nil {
		w.done()
		return nil, w.err(s, s.describe(err))
	}
	return &watchedReader{s: s, w: w, r: r}, nil
}

type watchedReader struct {
	s *Store
	w *watch
	r *blob.Reader
}

func (r *watchedReader) Read(p []byte) (n int, err error) {
	defer r.s.recovered(&err, "read")
	n, err = r.r.Read(p)
	r.w.kick()
	if err != nil && err != io.EOF {
		err = r.w.err(r.s, r.s.describe(err))
	}
	return n, err
}

func (r *watchedReader) Close() error {
	defer r.w.done()
	return r.r.Close()
}

// exists reports whether the object key is stored.
func (s *Store) exists(ctx context.Context, key string) (ok bool, err error) {
	w := s.watch(ctx)
	defer w.done()
	defer s.recovered(&err, "look up "+key)
	ok, err = s.bucket.Exists(w.ctx, key)
	return ok, w.err(s, s.describe(err))
}

// attributes reads the attributes of the object key.
func (s *Store) attributes(ctx context.Context, key string) (a *blob.Attributes, err error) {
	w := s.watch(ctx)
	defer w.done()
	defer s.recovered(&err, "read attributes of "+key)
	a, err = s.bucket.Attributes(w.ctx, key)
	return a, w.err(s, s.describe(err))
}

// deleteKey removes the object key.
func (s *Store) deleteKey(ctx context.Context, key string) (err error) {
	w := s.watch(ctx)
	defer w.done()
	defer s.recovered(&err, "delete "+key)
	err = w.err(s, s.describe(s.bucket.Delete(w.ctx, key)))
	if err == nil || notFound(err) {
		s.unclaimLocal(key)
	}
	return err
}

// eachObject calls fn with every object a LIST with opts returns; the
// deadline restarts with every page.
func (s *Store) eachObject(ctx context.Context, opts *blob.ListOptions, fn func(*blob.ListObject) error) (err error) {
	w := s.watch(ctx)
	defer w.done()
	defer s.recovered(&err, "list "+opts.Prefix)
	if s.dir != "" {
		return s.eachLocal(w.ctx, opts, fn)
	}
	it := s.bucket.List(opts)
	for {
		obj, err := it.Next(w.ctx)
		w.kick()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return w.err(s, s.describe(err))
		}
		if err := fn(obj); err != nil {
			return err
		}
	}
}

// put writes the object key with opts, its bytes written by body, and
// commits it when body and the close succeed; hook, when set, runs just
// before the commit. A write that fails is aborted: nothing is stored (a
// multipart upload's parts are removed).
func (s *Store) put(ctx context.Context, key string, opts *blob.WriterOptions, body func(io.Writer) error, hook func()) (err error) {
	w := s.watch(ctx)
	defer w.done()
	defer s.recovered(&err, "write "+key)
	if s.dir != "" && opts.IfNotExist {
		release, cerr := s.claimLocal(key)
		if cerr != nil {
			return cerr
		}
		defer func() {
			if err != nil && !alreadyExists(err) {
				release()
			}
		}()
	}
	bw, err := s.bucket.NewWriter(w.ctx, key, opts)
	if err != nil {
		return w.err(s, s.describe(err))
	}
	if err := body(&kickWriter{w: bw, kick: w.kick, sent: &w.sent}); err != nil {
		abort(bw, w)
		return w.err(s, s.describe(err))
	}
	if hook != nil {
		hook()
	}
	w.kick()
	if err := w.commit(s, key, bw); err != nil {
		if notFound(err) {
			// A write finds no object missing: its bucket is.
			return s.bucketMissing(err)
		}
		return w.err(s, s.describe(err))
	}
	return nil
}

// abort drops a write: gocloud commits on Close only, and not at all once
// the writer's context is done.
func abort(bw *blob.Writer, w *watch) {
	w.cancel()
	_ = bw.Close()
}

type kickWriter struct {
	w    io.Writer
	kick func()
	sent *atomic.Int64
}

func (k *kickWriter) Write(p []byte) (int, error) {
	n, err := k.w.Write(p)
	k.kick()
	if k.sent != nil {
		k.sent.Add(int64(n))
	}
	return n, err
}

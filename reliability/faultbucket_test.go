package reliability

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"

	"gocloud.dev/blob"
	"gocloud.dev/blob/driver"
	"gocloud.dev/gcerrors"
)

// faultBucket is a gocloud blob driver over a real bucket (memblob or
// fileblob, opened as usual) that injects store faults: writes that fail,
// hang until their context ends, or have their context cancelled at a given
// byte; a bucket that cannot be reached; reads that come back truncated or
// corrupted. Everything else goes to the real bucket untouched. Wrap it with
// blob.NewBucket.
type faultBucket struct {
	real *blob.Bucket

	mu sync.Mutex
	// failWriteAt fails a write once the object reaches this many bytes
	// (the bytes before it reach the real writer); -1 never.
	failWriteAt int64
	// hangWriteAt blocks a write at this byte until its context ends; -1
	// never.
	hangWriteAt int64
	// onWriteAt runs (once) when a write reaches byte writeHookAt.
	writeHookAt int64
	onWriteAt   func()
	// failClose fails the commit of a write (Close) after all bytes went
	// through, and nothing is stored; lostAck commits it but reports an
	// error, as a commit whose answer was lost; hangClose blocks the commit
	// until its context ends.
	failClose, lostAck, hangClose bool
	// unreachable fails every call, as a store that cannot be reached.
	unreachable bool
	// truncateReadAt ends every read after this many bytes; -1 never.
	truncateReadAt int64
	// corruptReadAt flips the bits of the byte at this offset in every
	// read; -1 never.
	corruptReadAt int64
	// failReadAt fails every read after this many bytes; -1 never.
	failReadAt int64
	// denyReadPrefix refuses reads of the objects under it, as a
	// credential that may write them but not read them ("" none).
	denyReadPrefix string

	// closeFaults counts the commits failClose or lostAck answered with an
	// error, for tests that wait until a fault has acted.
	closeFaults atomic.Int64
}

func newFaultBucket(real *blob.Bucket) *faultBucket {
	return &faultBucket{real: real, failWriteAt: -1, hangWriteAt: -1, writeHookAt: -1, truncateReadAt: -1, corruptReadAt: -1, failReadAt: -1}
}

// set changes the faults under the lock.
func (b *faultBucket) set(fn func(b *faultBucket)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	fn(b)
}

// reset removes every fault.
func (b *faultBucket) reset() {
	b.set(func(b *faultBucket) {
		b.failWriteAt, b.hangWriteAt, b.writeHookAt, b.onWriteAt = -1, -1, -1, nil
		b.failClose, b.lostAck, b.hangClose, b.unreachable = false, false, false, false
		b.truncateReadAt, b.corruptReadAt, b.failReadAt = -1, -1, -1
		b.denyReadPrefix = ""
	})
}

// errInjected is what a failing fault returns.
var errInjected = errors.New("injected store fault")

// errUnreachable is what every call of an unreachable store returns.
var errUnreachable = fmt.Errorf("%w: dial tcp 203.0.113.1:443: connect: connection refused", errInjected)

func (b *faultBucket) check() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.unreachable {
		return errUnreachable
	}
	return nil
}

// errDenied is what a read the credential may not make returns.
var errDenied = errors.New("AccessDenied: Access Denied (injected)")

func (b *faultBucket) ErrorCode(err error) gcerrors.ErrorCode {
	if errors.Is(err, errDenied) {
		return gcerrors.PermissionDenied
	}
	if errors.Is(err, errInjected) {
		return gcerrors.Unknown
	}
	return gcerrors.Code(err)
}

func (b *faultBucket) As(any) bool { return false }

func (b *faultBucket) ErrorAs(error, any) bool { return false }

func (b *faultBucket) Attributes(ctx context.Context, key string) (*driver.Attributes, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	a, err := b.real.Attributes(ctx, key)
	if err != nil {
		return nil, err
	}
	return &driver.Attributes{
		CacheControl: a.CacheControl, ContentDisposition: a.ContentDisposition, ContentEncoding: a.ContentEncoding,
		ContentLanguage: a.ContentLanguage, ContentType: a.ContentType, Metadata: a.Metadata,
		CreateTime: a.CreateTime, ModTime: a.ModTime, Size: a.Size, MD5: a.MD5, ETag: a.ETag,
	}, nil
}

func (b *faultBucket) ListPaged(ctx context.Context, opts *driver.ListOptions) (*driver.ListPage, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	// Drivers get nil for the first page; the portable ListPage wants
	// FirstPageToken (nil is its end of the listing).
	token := opts.PageToken
	if len(token) == 0 {
		token = blob.FirstPageToken
	}
	objs, next, err := b.real.ListPage(ctx, token, max(opts.PageSize, 1000), &blob.ListOptions{Prefix: opts.Prefix, Delimiter: opts.Delimiter})
	if errors.Is(err, io.EOF) {
		return &driver.ListPage{}, nil
	}
	if err != nil {
		return nil, err
	}
	page := &driver.ListPage{NextPageToken: next}
	for _, o := range objs {
		page.Objects = append(page.Objects, &driver.ListObject{Key: o.Key, ModTime: o.ModTime, Size: o.Size, MD5: o.MD5, IsDir: o.IsDir})
	}
	return page, nil
}

func (b *faultBucket) NewRangeReader(ctx context.Context, key string, offset, length int64, _ *driver.ReaderOptions) (driver.Reader, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	b.mu.Lock()
	denied := b.denyReadPrefix != "" && strings.HasPrefix(key, b.denyReadPrefix)
	b.mu.Unlock()
	if denied {
		return nil, fmt.Errorf("read %s: %w", key, errDenied)
	}
	r, err := b.real.NewRangeReader(ctx, key, offset, length, nil)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	fr := &faultReader{r: r, pos: offset, truncateAt: b.truncateReadAt, corruptAt: b.corruptReadAt, failAt: b.failReadAt}
	b.mu.Unlock()
	fr.attrs = driver.ReaderAttributes{ContentType: r.ContentType(), ModTime: r.ModTime(), Size: r.Size()}
	if fr.truncateAt >= 0 && fr.attrs.Size > fr.truncateAt {
		// What a proxy that cut the object short would report.
		fr.attrs.Size = fr.truncateAt
	}
	return fr, nil
}

// faultReader reads the real object with the read faults applied.
type faultReader struct {
	r                             *blob.Reader
	attrs                         driver.ReaderAttributes
	pos                           int64
	truncateAt, corruptAt, failAt int64
}

func (r *faultReader) Read(p []byte) (int, error) {
	if r.truncateAt >= 0 {
		if r.pos >= r.truncateAt {
			return 0, io.EOF
		}
		p = p[:min(int64(len(p)), r.truncateAt-r.pos)]
	}
	if r.failAt >= 0 {
		if r.pos >= r.failAt {
			return 0, fmt.Errorf("%w: read: connection reset by peer", errInjected)
		}
		p = p[:min(int64(len(p)), r.failAt-r.pos)]
	}
	n, err := r.r.Read(p)
	if r.corruptAt >= r.pos && r.corruptAt < r.pos+int64(n) {
		p[r.corruptAt-r.pos] ^= 0xff
	}
	r.pos += int64(n)
	return n, err
}

func (r *faultReader) Close() error                         { return r.r.Close() }
func (r *faultReader) Attributes() *driver.ReaderAttributes { return &r.attrs }
func (r *faultReader) As(any) bool                          { return false }

func (b *faultBucket) NewTypedWriter(ctx context.Context, key, contentType string, opts *driver.WriterOptions) (driver.Writer, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(ctx)
	w, err := b.real.NewWriter(wctx, key, &blob.WriterOptions{
		ContentType: contentType, Metadata: opts.Metadata, IfNotExist: opts.IfNotExist,
		CacheControl: opts.CacheControl, ContentDisposition: opts.ContentDisposition,
		ContentEncoding: opts.ContentEncoding, ContentLanguage: opts.ContentLanguage,
	})
	if err != nil {
		cancel()
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return &faultWriter{ctx: ctx, cancel: cancel, w: w, failAt: b.failWriteAt, hangAt: b.hangWriteAt, hookAt: b.writeHookAt, hook: b.onWriteAt,
		failClose: b.failClose, lostAck: b.lostAck, hangClose: b.hangClose, faults: &b.closeFaults}, nil
}

// faultWriter writes to the real writer with the write faults applied.
type faultWriter struct {
	ctx                    context.Context
	cancel                 context.CancelFunc
	w                      *blob.Writer
	n                      int64
	failAt, hangAt, hookAt int64
	hook                   func()
	failClose, lostAck     bool
	hangClose              bool
	faults                 *atomic.Int64
}

func (w *faultWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		// The next byte a fault acts on, if it falls in p.
		chunk := int64(len(p))
		for _, at := range []int64{w.failAt, w.hangAt, w.hookAt} {
			if at >= w.n && at < w.n+chunk {
				chunk = at - w.n
			}
		}
		if chunk > 0 {
			n, err := w.w.Write(p[:chunk])
			written += n
			w.n += int64(n)
			if err != nil {
				return written, err
			}
			p = p[chunk:]
			continue
		}
		switch w.n {
		case w.failAt:
			return written, fmt.Errorf("%w: write at byte %d: connection reset by peer", errInjected, w.n)
		case w.hangAt:
			<-w.ctx.Done()
			return written, w.ctx.Err()
		case w.hookAt:
			w.hookAt = -1
			w.hook()
		}
	}
	return written, nil
}

func (w *faultWriter) Close() error {
	defer w.cancel()
	switch {
	case w.failClose:
		w.cancel() // aborts the real write
		_ = w.w.Close()
		w.faults.Add(1)
		return fmt.Errorf("%w: complete upload: 503 Slow Down", errInjected)
	case w.hangClose:
		// Regression: this closed the real writer after cancelling it
		// and returned its error, which was "context canceled" when the
		// cancel ran before the deadline reached the child context (one
		// run in three under -race). The commit hung until w.ctx ended:
		// that is the cause to report.
		<-w.ctx.Done()
		w.cancel()
		_ = w.w.Close()
		return w.ctx.Err()
	}
	err := w.w.Close()
	if err == nil && w.lostAck {
		w.faults.Add(1)
		err = fmt.Errorf("%w: complete upload: read: connection reset by peer", errInjected)
	}
	return err
}

func (b *faultBucket) Copy(ctx context.Context, dstKey, srcKey string, _ *driver.CopyOptions) error {
	if err := b.check(); err != nil {
		return err
	}
	return b.real.Copy(ctx, dstKey, srcKey, nil)
}

func (b *faultBucket) Delete(ctx context.Context, key string, _ *driver.DeleteOptions) error {
	if err := b.check(); err != nil {
		return err
	}
	return b.real.Delete(ctx, key)
}

func (b *faultBucket) SignedURL(context.Context, string, *driver.SignedURLOptions) (string, error) {
	return "", errors.New("faultBucket: no signed URLs")
}

func (b *faultBucket) Close() error { return nil } // the test closes the real bucket

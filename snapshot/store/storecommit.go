package store

import (
	"context"

	"gocloud.dev/blob"
)

// The S3, Cloud Storage and Azure drivers buffer an object below their
// multipart threshold (and the last part of a larger one) and send it when
// the write is committed, inside Close: the bytes offsetkeeper hands them
// move no deadline then, and over a slow link a small object can take
// longer than --store-timeout to send while it is moving (issue 41 item 7:
// a 5.3 KB snapshot at 200 B/s failed at 15 s as "did not answer"). Even
// a transport that counted the bytes read from the request would not see
// it: the kernel takes a small body whole into its socket buffer.
//
// So while a commit runs, a deadline that passes asks the store something
// small (does a key next to it exist) on a connection of its own. A store that
// answers within the timeout is alive, and the commit gets another
// deadline, up to maxCommitExtensions times; a store that does not answer
// fails the write as before, within one more timeout.

// maxCommitExtensions bounds the deadlines a commit may pass while the
// store answers: a commit may take up to 1+maxCommitExtensions store
// timeouts (9 minutes at the default 60 s).
const maxCommitExtensions = 8

// commit closes bw, the write of key, under w's deadline with liveness
// checks.
func (w *watch) commit(s *Store, key string, bw *blob.Writer) error {
	// Not key itself: MinIO holds a read of an object while a write of
	// it is under way.
	w.probe = func(ctx context.Context) error {
		_, err := s.bucket.Exists(ctx, key+".alive")
		return err
	}
	w.committing.Store(true)
	return bw.Close()
}

// expire is w's deadline passing. During a commit it first asks the store
// whether it is alive (see above); otherwise, or when the store does not
// answer, it ends the call.
func (w *watch) expire() {
	if w.finished.Load() {
		return
	}
	if w.committing.Load() && w.extended.Load() < maxCommitExtensions && w.alive() {
		if w.finished.Load() {
			return
		}
		w.extended.Add(1)
		w.timer.Reset(w.d)
		return
	}
	w.fired.Store(true)
	w.cancel()
}

// alive reports whether the store answers w's probe within the timeout.
func (w *watch) alive() (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false // a driver that panics is no sign of life
		}
	}()
	ctx, cancel := context.WithTimeout(w.parent, w.d)
	defer cancel()
	return w.probe(ctx) == nil
}

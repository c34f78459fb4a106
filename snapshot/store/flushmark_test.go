package store_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A moment read while the daemon rewrites the flush mark is read, not
// failed: fileblob rewrites an object's attributes file in place (truncate,
// then write), and a reader in between saw it empty and failed the page's
// newest state with "read journal epoch …: EOF". The test leaves the
// attributes file as a rewrite leaves it midway, and completes the rewrite
// a moment after the read began.
func TestFlushMarkReadWhileRewritten(t *testing.T) {
	w := newJournalWorld(t, nil)
	ctx := context.Background()
	w.flush()
	if err := w.store.Journal().PutFlushMark(ctx, w.chain.Epoch, w.chain.Seq, time.Now(), time.Minute); err != nil {
		t.Fatal(err)
	}
	var attrs string
	_ = filepath.WalkDir(w.dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && filepath.Base(p) == "flushed.json.attrs" && filepath.Base(filepath.Dir(p)) == w.chain.Epoch {
			attrs = p
		}
		return nil
	})
	whole, err := os.ReadFile(attrs)
	if attrs == "" || err != nil {
		t.Fatalf("the flush mark's attributes file of fileblob (%q): %v", attrs, err)
	}
	if err := os.WriteFile(attrs, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rewritten := time.AfterFunc(20*time.Millisecond, func() { _ = os.WriteFile(attrs, whole, 0o644) })
	defer rewritten.Stop()
	if _, _, err := w.store.Journal().StateAt(ctx, time.Now()); err != nil {
		t.Fatalf("read the newest state while the flush mark is rewritten: %v", err)
	}
}

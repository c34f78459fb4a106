package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// A mistyped --store beside a real store names the store meant; one
// beside nothing of the kind says snapshot creates it, as before.
func TestOpenStoreDidYouMean(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "offsetkeeper-snapshots")
	if err := os.MkdirAll(filepath.Join(real, "snapshots"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "offsetkeeper-snapshotz-not-a-store"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ store, want string }{
		{filepath.Join(dir, "offsetkeeper-snapshot"), "did you mean " + real + "?"},
		{filepath.Join(dir, "ofsetkeeper-snapshots"), "did you mean " + real + "?"},
		{filepath.Join(dir, "elsewhere"), "'offsetkeeper snapshot' creates it"},
	} {
		_, err := OpenExistingStore(context.Background(), tt.store)
		if !errors.Is(err, snapshot.ErrStoreNotFound) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("OpenExistingStore(%s) = %v, want %q", tt.store, err, tt.want)
		}
	}
	if d := editDistance("kitten", "sitting"); d != 3 {
		t.Errorf("editDistance(kitten, sitting) = %d", d)
	}
}

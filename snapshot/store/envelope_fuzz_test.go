package store

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"gocloud.dev/blob/memblob"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// FuzzUnseal: an object in the bucket (anyone with write access to it may
// have put it there) is read as plain, decrypted with the key, or refused;
// nothing panics, and only an object that authenticates decrypts, to a
// document that decodes.
func FuzzUnseal(f *testing.F) {
	for _, name := range []string{"v1-encrypted.snap", "v1-encrypted-bound.snap", "v1.snap"} {
		if b, err := os.ReadFile(filepath.Join("testdata", name)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"format":"offsetkeeper-snapshot","version":1,"encryption":"secrets-v1","key_id":"sha256:0"}` + "\nxx"))
	keyURL, _ := testKey(fixtureKeySeed)
	k, err := OpenKeeper(context.Background(), keyURL)
	if err != nil {
		f.Fatal(err)
	}
	st := NewStore(memblob.OpenBucket(nil))
	st.SetKeeper(k)
	f.Cleanup(func() { st.Close() })
	f.Fuzz(func(t *testing.T, data []byte) {
		out, sealed, err := st.unseal(context.Background(), fixtureID, data)
		if err != nil {
			if sealed != nil || out != nil {
				t.Fatalf("error %v with a result", err)
			}
			return
		}
		if sealed == nil {
			if !bytes.Equal(out, data) {
				t.Fatal("a plain object came back changed")
			}
			return
		}
		if _, err := snapshot.Decode(out); err != nil && !errors.Is(err, snapshot.ErrCorrupt) {
			t.Fatalf("decrypted object does not decode: %v", err)
		}
	})
}

package snapshot

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"gocloud.dev/blob/memblob"
)

var storeUpdate = flag.Bool("update", false, "rewrite the stored objects of testdata of the current format version")

// storeFixtureID is the ID of the format's fixture.
const storeFixtureID = "20261130T134920.123456Z-0a1b2c"

// fixtureSnapshot is the format's fixture, read from its document (the
// snapshot package's tests build it and check the document holds it).
func storeFixtureSnapshot() *Snapshot {
	doc, err := os.ReadFile(filepath.Join(fixtureDir, fmt.Sprintf("v%d.json", Version)))
	if err != nil {
		panic(err)
	}
	s, err := Decode(doc)
	if err != nil {
		panic(err)
	}
	return s
}

// checkFixtureV1 checks that s is the format's fixture.
func storeCheckFixtureV1(t *testing.T, s *Snapshot) {
	t.Helper()
	if !reflect.DeepEqual(s, storeFixtureSnapshot()) {
		t.Errorf("snapshot %s is not the fixture", s.ID)
	}
}

// fixtureDir holds the format's fixtures: v<N>.json, the document, and
// v<N>.snap, the object Store.Put wrote of it.
const fixtureDir = "testdata"

// writeObjectFixture writes testdata/v<Version>.snap: the object Put
// writes of the current version's document.
func writeObjectFixture(t *testing.T) {
	ctx := context.Background()
	doc, err := os.ReadFile(filepath.Join(fixtureDir, fmt.Sprintf("v%d.json", Version)))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := Decode(doc)
	if err != nil {
		t.Fatal(err)
	}
	st := NewStore(memblob.OpenBucket(nil))
	defer st.Close()
	if _, err := st.Put(ctx, snap); err != nil {
		t.Fatal(err)
	}
	obj, err := st.bucket.ReadAll(ctx, objectKey(snap.ID))
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("v%d.snap", Version)
	if err := os.WriteFile(filepath.Join(fixtureDir, name), obj, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s/%s", fixtureDir, name)
}

// TestObjectFixtures reads the stored object of every format version
// through a store, as a restore would, and checks it holds the document.
func TestObjectFixtures(t *testing.T) {
	if *storeUpdate {
		writeObjectFixture(t)
	}
	ctx := context.Background()
	for v := MinVersion; v <= Version; v++ {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			doc, err := os.ReadFile(filepath.Join(fixtureDir, fmt.Sprintf("v%d.json", v)))
			if err != nil {
				t.Fatal(err)
			}
			fromJSON, err := Decode(doc)
			if err != nil {
				t.Fatalf("Decode(v%d.json): %v", v, err)
			}
			obj, err := os.ReadFile(filepath.Join(fixtureDir, fmt.Sprintf("v%d.snap", v)))
			if err != nil {
				t.Fatal(err)
			}
			st := NewStore(memblob.OpenBucket(nil))
			defer st.Close()
			if err := st.bucket.WriteAll(ctx, objectKey(fromJSON.ID), obj, nil); err != nil {
				t.Fatal(err)
			}
			fromSnap, info, err := st.Get(ctx, "latest")
			if err != nil {
				t.Fatalf("Get(v%d.snap): %v", v, err)
			}
			if !reflect.DeepEqual(fromJSON, fromSnap) {
				t.Errorf("v%d.json and v%d.snap hold different snapshots", v, v)
			}
			if info.Size != int64(len(obj)) || info.SourceKeys != len(fromSnap.SourceOffsets) {
				t.Errorf("Info = %+v", info)
			}
		})
	}
}

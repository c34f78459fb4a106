package store

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"gocloud.dev/blob/memblob"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

var update = flag.Bool("update", false, "rewrite the stored objects of testdata of the current format version")

// fixtureID is the ID of the format's fixture.
const fixtureID = "20261130T134920.123456Z-0a1b2c"

// fixtureSnapshot is the format's fixture, read from its document (the
// snapshot package's tests build it and check the document holds it).
func fixtureSnapshot() *snapshot.Snapshot {
	doc, err := os.ReadFile(filepath.Join(docDir, fmt.Sprintf("v%d.json", snapshot.Version)))
	if err != nil {
		panic(err)
	}
	s, err := snapshot.Decode(doc)
	if err != nil {
		panic(err)
	}
	return s
}

// checkFixtureV1 checks that s is the format's fixture.
func checkFixtureV1(t *testing.T, s *snapshot.Snapshot) {
	t.Helper()
	if !reflect.DeepEqual(s, fixtureSnapshot()) {
		t.Errorf("snapshot %s is not the fixture", s.ID)
	}
}

// docDir holds the format's documents (v<N>.json, the snapshot package's
// fixtures); testdata here the objects Store.Put wrote of them (v<N>.snap).
const docDir = "../testdata"

// writeObjectFixture writes testdata/v<Version>.snap: the object Put
// writes of the current version's document.
func writeObjectFixture(t *testing.T) {
	ctx := context.Background()
	doc, err := os.ReadFile(filepath.Join(docDir, fmt.Sprintf("v%d.json", snapshot.Version)))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.Decode(doc)
	if err != nil {
		t.Fatal(err)
	}
	st := NewStore(memblob.OpenBucket(nil))
	defer st.Close()
	if _, err := st.Snapshots().Put(ctx, snap); err != nil {
		t.Fatal(err)
	}
	obj, err := st.bucket.ReadAll(ctx, objectKey(snap.ID))
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("v%d.snap", snapshot.Version)
	if err := os.WriteFile(filepath.Join("testdata", name), obj, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote testdata/%s", name)
}

// TestObjectFixtures reads the stored object of every format version
// through a store, as a restore would, and checks it holds the document.
func TestObjectFixtures(t *testing.T) {
	if *update {
		writeObjectFixture(t)
	}
	ctx := context.Background()
	for v := snapshot.MinVersion; v <= snapshot.Version; v++ {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			doc, err := os.ReadFile(filepath.Join(docDir, fmt.Sprintf("v%d.json", v)))
			if err != nil {
				t.Fatal(err)
			}
			fromJSON, err := snapshot.Decode(doc)
			if err != nil {
				t.Fatalf("Decode(v%d.json): %v", v, err)
			}
			obj, err := os.ReadFile(filepath.Join("testdata", fmt.Sprintf("v%d.snap", v)))
			if err != nil {
				t.Fatal(err)
			}
			st := NewStore(memblob.OpenBucket(nil))
			defer st.Close()
			if err := st.bucket.WriteAll(ctx, objectKey(fromJSON.ID), obj, nil); err != nil {
				t.Fatal(err)
			}
			fromSnap, info, err := st.Snapshots().GetWith(ctx, "latest", nil)
			if err != nil {
				t.Fatalf("Get(v%d.snap): %v", v, err)
			}
			if !reflect.DeepEqual(fromJSON, fromSnap) {
				t.Errorf("v%d.json and v%d.snap hold different snapshots", v, v)
			}
			if info.Size != int64(len(obj)) || info.SourceKeys != fromSnap.SourceKeys() {
				t.Errorf("Info = %+v", info)
			}
		})
	}
}

package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob/memblob"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
)

// The two header types the store had before the one envelope (issue #38),
// exactly as they were declared: every header line they wrote must read,
// and what the store writes now must be what they read.
type (
	oldSnapshotHeader struct {
		Format      string `json:"format"`
		Version     *int   `json:"version"`
		Compression string `json:"compression"`
		Encryption  string `json:"encryption,omitempty"`
		KeyID       string `json:"key_id,omitempty"`
		SHA256      string `json:"sha256"`
		BodySize    *int64 `json:"body_size"`
	}
	oldSegmentHeader struct {
		Format      string `json:"format"`
		Version     int    `json:"version"`
		Epoch       string `json:"epoch"`
		Level       int    `json:"level"`
		FirstSeq    uint64 `json:"first_seq"`
		LastSeq     uint64 `json:"last_seq"`
		FirstTimeMs int64  `json:"first_time_ms"`
		LastTimeMs  int64  `json:"last_time_ms"`
		PrevDigest  string `json:"prev_digest"`
		LastDigest  string `json:"last_digest"`
		Entries     int    `json:"entries"`
		Compression string `json:"compression"`
		Encryption  string `json:"encryption,omitempty"`
		KeyID       string `json:"key_id,omitempty"`
		SHA256      string `json:"sha256"`
		BodySize    int64  `json:"body_size"`
		IntervalMs  int64  `json:"interval_ms,omitempty"`
	}
)

// sameLine checks that line, a header line of the object named what,
// reads with parseHeader and writes back to the same bytes, and that the
// old header type of its kind reads and writes it the same way too. It
// returns the header read.
func sameLine(t *testing.T, what string, line, body []byte) objectHeader {
	t.Helper()
	h, err := parseHeader(line)
	if err != nil {
		t.Fatalf("%s: parseHeader: %v", what, err)
	}
	again, err := json.Marshal(h)
	if err != nil || !bytes.Equal(again, line) {
		t.Fatalf("%s: the header writes back as\n%s\nnot\n%s (%v)", what, again, line, err)
	}
	var old any = &oldSnapshotHeader{}
	if h.Format == segmentFormat {
		old = &oldSegmentHeader{}
	} else if h.segmentFields != nil {
		t.Fatalf("%s: a %s header with a segment's fields", what, h.Format)
	}
	if err := json.Unmarshal(line, old); err != nil {
		t.Fatalf("%s: the old header type does not read it: %v", what, err)
	}
	if was, _ := json.Marshal(old); !bytes.Equal(was, line) {
		t.Fatalf("%s: the old header type writes\n%s\nnot\n%s", what, was, line)
	}
	sum := sha256.Sum256(body)
	if h.SHA256 != hex.EncodeToString(sum[:]) || h.bodySize() != int64(len(body)) {
		t.Fatalf("%s: the header's sha256 and body_size are not its body's", what)
	}
	return h
}

// TestOneEnvelopeReadsEveryFixture: every object under testdata, snapshots
// and journal segments, plain and encrypted, of every envelope ever
// written (v1.snap, v1-encrypted.snap with the first "gocloud-secrets",
// v1-encrypted-bound.snap, journal-v1, journal-v1-encrypted), has its
// header read by the one objectHeader and written back byte for byte.
func TestOneEnvelopeReadsEveryFixture(t *testing.T) {
	kinds := map[string]int{}
	err := filepath.WalkDir("testdata", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(path, keySuffix) || strings.HasSuffix(path, ".seg")) {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		line, body, ok := cutHeader(data)
		if !ok {
			t.Fatalf("%s: no header line", path)
		}
		h := sameLine(t, path, line, body)
		kinds[h.Format+"/"+h.Encryption]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{objectFormat + "/", objectFormat + "/" + encryptionSecrets, objectFormat + "/" + encryptionBound,
		segmentFormat + "/", segmentFormat + "/" + encryptionBound} {
		if kinds[k] == 0 {
			t.Errorf("no fixture of %s under testdata (found %v)", k, kinds)
		}
	}
}

// TestOneEnvelopeWrites: what the store writes now, a snapshot and a
// segment, plain and encrypted, is one envelope: one header type whose
// lines are those the old header types wrote (an older build reads them),
// one seal (the shared fields say encryptionBound and the key's ID), and
// an object of one kind is refused as the other.
func TestOneEnvelopeWrites(t *testing.T) {
	ctx := context.Background()
	keyURL, _ := testKey(fixtureKeySeed)
	k, err := OpenKeeper(ctx, keyURL)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for _, keeper := range []*Keeper{nil, k} {
		st := NewStore(memblob.OpenBucket(nil))
		if keeper != nil {
			st.SetKeeper(keeper)
		}
		snap := fixtureSnapshot()
		if _, err := st.Snapshots().Put(ctx, snap); err != nil {
			t.Fatal(err)
		}
		snapObj, err := st.bucket.ReadAll(ctx, objectKey(snap.ID))
		if err != nil {
			t.Fatal(err)
		}
		var segObjs [][]byte
		for _, seg := range []*journal.Segment{
			{Epoch: fixtureID, FirstSeq: 1, LastSeq: 2, FirstTime: t0, LastTime: t0.Add(time.Second), Entries: []journal.Entry{
				{Kind: journal.EntryPosition, Topic: "connect-offsets", Partition: 1, Offset: 5}}},
			{Epoch: fixtureID, Level: 1, FirstSeq: 3, LastSeq: 9, FirstTime: t0, LastTime: t0.Add(time.Minute), PrevDigest: "ab",
				Interval: 3 * time.Second, Entries: []journal.Entry{{Kind: journal.EntryPosition, Topic: "connect-offsets", Partition: 2, Offset: 7}}},
		} {
			if err := st.encodeSegment(ctx, seg); err != nil {
				t.Fatal(err)
			}
			segObjs = append(segObjs, seg.Obj)
		}
		for i, obj := range append([][]byte{snapObj}, segObjs...) {
			line, body, ok := cutHeader(obj)
			if !ok {
				t.Fatalf("object %d: no header line", i)
			}
			h := sameLine(t, "a new object", line, body)
			if keeper != nil && (h.Encryption != encryptionBound || h.KeyID != keeper.ID()) {
				t.Errorf("object %d: encryption %q, key %q; want %q, %q", i, h.Encryption, h.KeyID, encryptionBound, keeper.ID())
			}
			if keeper == nil && h.Encryption != "" {
				t.Errorf("object %d: encryption %q without a key", i, h.Encryption)
			}
		}
		// A segment is not a snapshot, nor a snapshot a segment.
		if _, _, err := decodeObject(snap.ID, segObjs[0]); !errors.Is(err, snapshot.ErrCorrupt) || !strings.Contains(err.Error(), "not an offsetkeeper snapshot") {
			t.Errorf("a segment read as a snapshot: %v", err)
		}
		si, ok := journal.ParseSegmentKey(journal.SegmentKey(fixtureID, 0, 1, 2, t0.Add(time.Second)))
		if !ok {
			t.Fatal("segment key does not parse")
		}
		if err := st.bucket.WriteAll(ctx, si.Key, snapObj, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Journal().ReadSegment(ctx, si); !errors.Is(err, journal.ErrJournalBroken) || !strings.Contains(err.Error(), "not a journal segment header") {
			t.Errorf("a snapshot read as a segment: %v", err)
		}
		st.Close()
	}
}

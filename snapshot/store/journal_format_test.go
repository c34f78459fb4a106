package store_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"gocloud.dev/blob/fileblob"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

var updateJournal = flag.Bool("update-journal", false, "rewrite testdata/journal-v1")

// fixtureEntries holds one entry of every kind.
func fixtureEntries() []journal.Entry {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC).UnixMilli()
	return []journal.Entry{
		{Kind: journal.EntrySource, Topic: "connect-offsets", Partition: 20, Offset: 1204, Time: t0 + 1,
			Key: []byte(`["eu->us.MirrorSourceConnector",{"cluster":"eu","partition":1,"topic":"orders"}]`), Value: []byte(`{"offset":42}`)},
		{Kind: journal.EntrySource, Topic: "connect-offsets", Partition: 4, Offset: 77, Time: t0 + 2, Key: []byte(`["mongodb-connector",{"rs":"rs0","server_id":"mongo1"}]`)},
		{Kind: journal.EntrySink, Group: "connect-es-sink", Topic: "orders", Partition: 3, Offset: 19, LeaderEpoch: -1, Time: t0 + 3,
			LastConsumed: &snapshot.LastConsumed{Offset: 18, Timestamp: t0 - 5000}},
		{Kind: journal.EntrySink, Group: "connect-es-sink", Topic: "orders", Partition: 4, Time: t0 + 3, Deleted: true},
		{Kind: journal.EntryGroup, Group: "connect-es-sink", Connector: "es-sink", State: "Empty", Members: 0, Time: t0 + 3},
		{Kind: journal.EntryConfig, Offset: 90, Time: t0 + 4, Key: []byte("target-state-es-sink"), Value: []byte(`{"state":"PAUSED","state.v2":"STOPPED"}`), Connector: "es-sink",
			Conn: &snapshot.Connector{Name: "es-sink", Type: snapshot.TypeSink, Class: "io.confluent.connect.elasticsearch.ElasticsearchSinkConnector", HasConfig: true, ConfigHash: "ab", TargetState: snapshot.StateStopped, Tasks: 0, Group: "connect-es-sink"}},
		{Kind: journal.EntryConfig, Offset: 91, Time: t0 + 5, Key: []byte("connector-old"), Connector: "old", Deleted: true},
		{Kind: journal.EntryGap, Time: t0 - 60000, Until: t0, Reason: "the daemon was not journaling"},
		{Kind: journal.EntryEvent, Time: t0 + 2, Connector: "mongodb-connector", Reason: snapshot.EventSourceTombstoned, Count: 1, Before: t0 + 1},
		{Kind: journal.EntryPosition, Topic: "connect-offsets", Partition: 20, Offset: 1205},
	}
}

// The journal format version 1 has a fixture that must read forever:
// testdata/journal-v1 holds an epoch and a segment with every entry kind.
// go test ./snapshot -run TestJournalFormatV1 -update-journal rewrites it.
func TestJournalFormatV1(t *testing.T) {
	testJournalFixture(t, filepath.Join("testdata", "journal-v1"), "")
}

// TestJournalFormatV1Encrypted: the encrypted segments of journal format
// version 1 read forever too. testdata/journal-v1-encrypted was written by
// the build that still sealed segments apart from snapshots (issue #38),
// with the key of the encrypted snapshot fixtures; -update-journal
// rewrites it with this build's writer.
func TestJournalFormatV1Encrypted(t *testing.T) {
	sum := sha256.Sum256([]byte("offsetkeeper encrypted fixture key"))
	key := "base64key://" + base64.URLEncoding.EncodeToString(sum[:])
	testJournalFixture(t, filepath.Join("testdata", "journal-v1-encrypted"), key)
	// Without the key the segment is ErrEncrypted, its header still read.
	tmp := t.TempDir()
	if err := os.CopyFS(tmp, os.DirFS(filepath.Join("testdata", "journal-v1-encrypted"))); err != nil {
		t.Fatal(err)
	}
	b, err := fileblob.OpenBucket(tmp, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := store.NewStore(b)
	defer s.Close()
	l, err := s.Journal().List(context.Background())
	if err != nil || len(l.Epochs) != 1 || len(l.Epochs[0].Segments) != 1 {
		t.Fatalf("listing: %+v %v", l, err)
	}
	seg, err := s.Journal().ReadSegment(context.Background(), l.Epochs[0].Segments[0])
	if !errors.Is(err, snapshot.ErrEncrypted) || seg == nil || seg.LastSeq != 1 || len(seg.Entries) != 0 {
		t.Fatalf("read without the key: %+v, %v; want the header and ErrEncrypted", seg, err)
	}
}

// testJournalFixture reads the journal fixture in dir (rewriting it first
// with -update-journal), decrypting with keyURL if not empty.
func testJournalFixture(t *testing.T, dir, keyURL string) {
	const epoch = "20261201T090000.000000Z-0a1b2c"
	open := func(s *store.Store) *store.Store {
		if keyURL != "" {
			k, err := store.OpenKeeper(context.Background(), keyURL)
			if err != nil {
				t.Fatal(err)
			}
			s.SetKeeper(k)
		}
		return s
	}
	if *updateJournal {
		os.RemoveAll(dir)
		os.MkdirAll(dir, 0o755)
		b, err := fileblob.OpenBucket(dir, &fileblob.Options{NoTempDir: true})
		if err != nil {
			t.Fatal(err)
		}
		s := open(store.NewStore(b))
		ctx := context.Background()
		if err := s.Journal().PutEpoch(ctx, &journal.Epoch{ID: epoch, Reason: journal.EpochFirstRun, StartedAt: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC),
			Topics: []journal.EpochTopic{{Name: "connect-offsets", Role: snapshot.RoleOffsets, TopicID: "00112233445566778899aabbccddeeff", Partitions: 25, Worker: true, Start: []journal.PartitionNext{{Partition: 20, Next: 1204}}}}}); err != nil {
			t.Fatal(err)
		}
		t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
		if _, err := s.Journal().PutSegment(ctx, &journal.Segment{Epoch: epoch, FirstSeq: 1, LastSeq: 1, FirstTime: t0, LastTime: t0.Add(10 * time.Second), Entries: fixtureEntries()}); err != nil {
			t.Fatal(err)
		}
		s.Close()
		// fileblob's attribute sidecars are not part of the format.
		matches, _ := filepath.Glob(filepath.Join(dir, "journal", "*", "*", "*.attrs"))
		more, _ := filepath.Glob(filepath.Join(dir, "journal", "*", "*.attrs"))
		for _, m := range append(matches, more...) {
			os.Remove(m)
		}
	}
	tmp := t.TempDir()
	if err := os.CopyFS(tmp, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	b, err := fileblob.OpenBucket(tmp, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := open(store.NewStore(b))
	defer s.Close()
	ctx := context.Background()
	ep, err := s.Journal().GetEpoch(ctx, epoch)
	if err != nil || ep.Reason != journal.EpochFirstRun || len(ep.Topics) != 1 || !ep.Topics[0].Worker {
		t.Fatalf("epoch: %+v %v", ep, err)
	}
	l, err := s.Journal().List(ctx)
	if err != nil || len(l.Epochs) != 1 || len(l.Epochs[0].Segments) != 1 {
		t.Fatalf("listing: %+v %v", l, err)
	}
	seg, err := s.Journal().ReadSegment(ctx, l.Epochs[0].Segments[0])
	if err != nil {
		t.Fatal(err)
	}
	want := fixtureEntries()
	if len(seg.Entries) != len(want) {
		t.Fatalf("%d entries, want %d", len(seg.Entries), len(want))
	}
	for i, e := range seg.Entries {
		w := want[i]
		if e.Kind != w.Kind || e.Topic != w.Topic || e.Offset != w.Offset || e.Time != w.Time || !bytes.Equal(e.Key, w.Key) || !bytes.Equal(e.Value, w.Value) ||
			(e.Value == nil) != (w.Value == nil) || e.Group != w.Group || e.Deleted != w.Deleted || e.Reason != w.Reason || e.Count != w.Count || e.Before != w.Before || e.Until != w.Until {
			t.Errorf("entry %d: %+v, want %+v", i, e, w)
		}
		if (w.LastConsumed == nil) != (e.LastConsumed == nil) || w.LastConsumed != nil && *w.LastConsumed != *e.LastConsumed {
			t.Errorf("entry %d: last consumed %+v, want %+v", i, e.LastConsumed, w.LastConsumed)
		}
		if w.Conn != nil && (e.Conn == nil || !reflect.DeepEqual(*e.Conn, *w.Conn)) {
			t.Errorf("entry %d: connector %+v, want %+v", i, e.Conn, w.Conn)
		}
	}
}

// A segment body that does not decode is an error, never a panic.
func FuzzDecodeEntries(f *testing.F) {
	f.Add(journal.EncodeEntries(fixtureEntries()))
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, body []byte) {
		entries, err := journal.DecodeEntries(body, len(body))
		if err != nil {
			return
		}
		if again := journal.EncodeEntries(entries); !bytes.Equal(again, body) {
			// A body that decodes encodes back the same, except where a
			// varint had a longer form than needed.
			if _, err := journal.DecodeEntries(again, len(again)); err != nil {
				t.Fatalf("re-encoded entries do not decode: %v", err)
			}
		}
	})
}

package storetest

import (
	"bytes"
	"crypto/rand"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// The faults of issue 41 (items 4-6 and the restore records), on every
// backend of the suite.
func init() {
	cases = append(cases,
		conformanceCase{name: "DamagedObjects", run: testDamagedObjects},
		conformanceCase{name: "RestoreIntents", run: testRestoreIntents},
		conformanceCase{name: "RestoreIntentsStoreDown", run: testRestoreIntentsDown, network: true},
	)
}

// rawBucket opens the bucket of a store URL as gocloud does, to write
// objects as another tool would (no metadata).
func rawBucket(t *testing.T, raw string) *blob.Bucket {
	t.Helper()
	if strings.HasPrefix(raw, "file://") {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		raw = "file://" + u.Path + "?create_dir=true"
	}
	b, err := blob.OpenBucket(t.Context(), raw)
	if err != nil {
		t.Fatalf("open bucket %s: %v", raw, err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// testDamagedObjects: a zero-byte and a foreign object named like
// snapshots (a copy tool that drops metadata), and objects under
// snapshots/ not named like one (a temporary file, a README), in a store
// with two snapshots. List shows the two snapshots and the two damaged
// objects, and nothing else; latest is the newest snapshot; Verify fails
// the damaged ones; Delete removes them.
func testDamagedObjects(t *testing.T, b *backend) {
	if b.name == "mem" {
		t.Skip("mem: another opener of mem:// gets a bucket of its own, so no other tool can write to the store's")
	}
	s, raw, _ := openPrefixed(t, b)
	ctx := t.Context()
	var ids []string
	for _, r := range []string{"first", "second"} {
		info, err := s.Snapshots().Put(ctx, small(r))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, info.ID)
	}
	bk := rawBucket(t, raw)
	now := time.Now().UTC()
	empty, foreign := snapshot.NewID(now.Add(time.Minute)), snapshot.NewID(now.Add(2*time.Minute))
	for key, body := range map[string]string{
		"snapshots/" + empty + ".snap":        "",
		"snapshots/" + foreign + ".snap":      "PK\x03\x04 a zip file, say\n",
		"snapshots/" + ids[0] + ".snap.tmp":   "partial",
		"snapshots/README.txt":                "not a snapshot",
		"snapshots/" + foreign + "-copy.snap": "not an ID",
	} {
		if err := bk.WriteAll(ctx, key, []byte(body), nil); err != nil {
			t.Fatalf("write %s: %v", key, err)
		}
	}
	infos, err := s.Snapshots().List(ctx)
	if err != nil {
		t.Fatalf("list with damaged objects: %v", err)
	}
	ok, damaged := store.Damaged(infos)
	var okIDs, badIDs []string
	for _, i := range ok {
		okIDs = append(okIDs, i.ID)
	}
	for _, i := range damaged {
		badIDs = append(badIDs, i.ID)
	}
	if !slices.Equal(okIDs, ids) || !slices.Equal(badIDs, []string{empty, foreign}) {
		t.Fatalf("list: snapshots %v, damaged %v; want %v and [%s %s]", okIDs, badIDs, ids, empty, foreign)
	}
	if id, err := s.Snapshots().Resolve(ctx, "latest"); err != nil || id != ids[1] {
		t.Errorf("latest = %s, %v; want %s (damaged objects are never latest)", id, err, ids[1])
	}
	for _, id := range []string{empty, foreign} {
		if _, err := s.Snapshots().Verify(ctx, id); err == nil {
			t.Errorf("verify of damaged object %s passed", id)
		}
		if err := s.Snapshots().Delete(ctx, id); err != nil {
			t.Errorf("delete damaged object %s: %v", id, err)
		}
	}
	if infos, err = s.Snapshots().List(ctx); err != nil || len(infos) != 2 {
		t.Errorf("list after deleting the damaged objects: %v, %v; want the two snapshots", infos, err)
	}
}

// testRestoreIntents: a restore's record is written, overwritten as the
// restore goes on, listed oldest first, never listed as a snapshot, and
// removed; a foreign object under restores/ is skipped.
func testRestoreIntents(t *testing.T, b *backend) {
	s, raw, _ := openPrefixed(t, b)
	ctx := t.Context()
	t0 := time.Now().UTC().Truncate(time.Second)
	first := store.RestoreIntent{ID: "r-1", Snapshot: "s-1", ClusterID: "c", Started: t0, Stage: store.IntentStarted,
		Topics: []store.IntentTopic{{Topic: "connect-offsets", TransactionalID: "offsetkeeper-restore-connect-offsets"}}}
	second := store.RestoreIntent{ID: "r-2", Snapshot: "s-2", ClusterID: "c", Started: t0.Add(time.Second), Stage: store.IntentStarted}
	for _, in := range []store.RestoreIntent{second, first} {
		if err := s.Restores().Put(ctx, in); err != nil {
			t.Fatalf("record restore %s: %v", in.ID, err)
		}
	}
	first.Stage, first.Undo = store.IntentWriting, "u-1"
	if err := s.Restores().Put(ctx, first); err != nil {
		t.Fatalf("overwrite the record of %s: %v", first.ID, err)
	}
	if err := rawBucket(t, raw).WriteAll(ctx, "restores/notes.json", []byte(`{"format":"something else"}`), nil); err != nil {
		t.Fatal(err)
	}
	got, err := s.Restores().List(ctx)
	if err != nil || len(got) != 2 || got[0].ID != "r-1" || got[1].ID != "r-2" || got[0].Stage != store.IntentWriting || got[0].Undo != "u-1" ||
		len(got[0].Topics) != 1 || got[0].Topics[0].TransactionalID != first.Topics[0].TransactionalID {
		t.Fatalf("records: %+v, %v; want r-1 (writing, undo u-1) then r-2", got, err)
	}
	if infos, err := s.Snapshots().List(ctx); err != nil || len(infos) != 0 {
		t.Errorf("restore records listed as snapshots: %v, %v", infos, err)
	}
	for _, id := range []string{"r-1", "r-1"} { // the second finds it gone: no error
		if err := s.Restores().Delete(ctx, id); err != nil {
			t.Errorf("remove the record of %s: %v", id, err)
		}
	}
	if got, err := s.Restores().List(ctx); err != nil || len(got) != 1 || got[0].ID != "r-2" {
		t.Errorf("records after removing r-1: %+v, %v", got, err)
	}
}

// testRestoreIntentsDown: with a store that takes requests and drops
// every reply, recording a restore (which the restore does before it changes
// anything) and reading the records (which every command does first) fail
// within the store timeout, in one line that names the store, instead of
// holding the command.
func testRestoreIntentsDown(t *testing.T, b *backend) {
	s := open(t, b)
	s.SetTimeout(3 * time.Second)
	ctx := t.Context()
	if _, err := s.Restores().List(ctx); err != nil {
		t.Fatal(err)
	}
	b.proxy.DropReplies(true)
	defer b.proxy.DropReplies(false)
	in := store.RestoreIntent{ID: "r-down", Snapshot: "s", Started: time.Now(), Stage: store.IntentStarted}
	err := s.Restores().Put(ctx, in)
	oneLine(t, "record a restore with the store not answering", err)
	_, err = s.Restores().List(ctx)
	oneLine(t, "read the records with the store not answering", err)
	if errors.Is(err, store.ErrStoreTimeout) {
		t.Logf("timed out as --store-timeout says: %v", err)
	}
}

func init() {
	cases = append(cases, conformanceCase{name: "SlowCommit", run: testSlowCommit, network: true})
}

// testSlowCommit (issue 41 item 7): an object below the driver's multipart
// threshold is sent when the write commits, where no progress is seen. Over
// a link that takes about three store timeouts to carry it, the write
// succeeds (the store answers a check each time the deadline passes), and
// the object reads back; with the store dropping every reply the same
// write fails, saying so in one line.
func testSlowCommit(t *testing.T, b *backend) {
	s := open(t, b)
	s.SetTimeout(2 * time.Second)
	v := make([]byte, 6000)
	_, _ = rand.Read(v)
	seg := rawSegment(1, "", time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), "")
	seg.Entries[0].Value = v
	b.proxy.SetRate(1500)
	info, err := s.Journal().PutSegment(t.Context(), seg)
	b.proxy.SetRate(0)
	if err != nil {
		t.Fatalf("a write moving at 1500 B/s (store timeout 2s): %v", err)
	}
	t.Logf("wrote %s (%d bytes) over a 1500 B/s link", info.Key, info.Size)
	back, err := s.Journal().ReadSegment(t.Context(), info)
	if err != nil || !bytes.Equal(back.Entries[0].Value, v) {
		t.Fatalf("read back: %v", err)
	}

	b.proxy.SetRate(1500)
	b.proxy.DropReplies(true)
	defer b.proxy.DropReplies(false)
	defer b.proxy.SetRate(0)
	seg2 := rawSegment(2, "", time.Date(2026, 12, 1, 9, 1, 0, 0, time.UTC), "")
	seg2.Entries[0].Value = v
	_, err = s.Journal().PutSegment(t.Context(), seg2)
	oneLine(t, "a write to a store that drops every reply", err)
}

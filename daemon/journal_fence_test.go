package daemon

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/s3test"
	"github.com/offsetkeeper/offsetkeeper/internal/storeservers"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// writer is one daemon's journal writing epoch base of store, leading (as
// with leader election off), its log in log.
type writer struct {
	j   *journalWriter
	log *testkit.SyncBuffer
}

func newWriter(t *testing.T, st *store.Store, base *snapshot.Snapshot, topics []journal.EpochTopic) *writer {
	t.Helper()
	log := &testkit.SyncBuffer{}
	d := &Daemon{Store: st, Snapshot: func(context.Context) (*snapshot.Snapshot, error) { return nil, nil },
		Logger: slog.New(slog.NewTextHandler(log, nil)),
		Config: Config{Journal: JournalConfig{Interval: 10 * time.Second}}}
	d.init()
	d.lead.begin()
	j := newJournal(d)
	j.tail = capture.NewTail(nil, capture.Options{}, base, nil, topics, base.CreatedAt)
	j.chain.Epoch, j.chain.Last, j.term = base.ID, base.CreatedAt, 1
	return &writer{j: j, log: log}
}

// flush is what a tick does once the tail is polled: the segment a failed
// flush left, then the entries.
func (w *writer) flush(ctx context.Context, entries []journal.Entry, at time.Time) {
	if w.j.fenced == w.j.term {
		return
	}
	if w.j.pending != nil && !w.j.flushPending(ctx) {
		return
	}
	if w.j.tail != nil {
		w.j.write(ctx, entries, at)
	}
}

// journalWorld is a store with a base snapshot and its epoch.
func journalWorld(t *testing.T, storeURL string) (*store.Store, *snapshot.Snapshot, []journal.EpochTopic) {
	t.Helper()
	ctx := t.Context()
	st, err := store.OpenStore(ctx, storeURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	st.SetTimeout(5 * time.Second)
	base := &snapshot.Snapshot{CreatedAt: time.Now().UTC().Add(-time.Hour).Truncate(time.Millisecond), Topics: []snapshot.Topic{{Name: snapshot.DefaultOffsetsTopic, Role: snapshot.RoleOffsets,
		Partitions: []snapshot.TopicPartition{{Partition: 0}}}}}
	if _, err := st.Snapshots().Put(ctx, base); err != nil {
		t.Fatal(err)
	}
	topics := []journal.EpochTopic{{Name: snapshot.DefaultOffsetsTopic, Role: snapshot.RoleOffsets, Partitions: 1, Worker: true,
		Start: []journal.PartitionNext{{Partition: 0}}}}
	if err := st.Journal().PutEpoch(ctx, &journal.Epoch{ID: base.ID, Reason: journal.EpochFirstRun, StartedAt: base.CreatedAt, Topics: topics}); err != nil {
		t.Fatal(err)
	}
	return st, base, topics
}

func record(offset int64, at time.Time) []journal.Entry {
	return []journal.Entry{{Kind: journal.EntrySource, Topic: snapshot.DefaultOffsetsTopic, Offset: offset, Time: at.UnixMilli(),
		Key: []byte(`["c",{"file":"f"}]`), Value: []byte(`{"position":` + string(rune('0'+offset%10)) + `}`)}}
}

// verifyJournal checks every epoch of store verifies, its chain whole,
// with segments raw segments, and returns the listing.
func verifyJournal(t *testing.T, st *store.Store, segments int) {
	t.Helper()
	checks, err := st.Journal().Verify(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) != 1 || checks[0].Err != nil || checks[0].Segments != segments {
		t.Fatalf("verify: %+v; want one epoch of %d segments, clean", checks, segments)
	}
}

// Two daemons with leader election off journal one epoch of one store:
// the first to claim a sequence number keeps writing, the other stops with
// an error naming the epoch and writes nothing more (no epoch either), and
// the journal verifies.
func TestJournalTwoWritersFenced(t *testing.T) {
	st, base, topics := journalWorld(t, "file://"+t.TempDir())
	ctx := t.Context()
	a, b := newWriter(t, st, base, topics), newWriter(t, st, base, topics)
	at := base.CreatedAt
	for i := int64(0); i < 6; i++ {
		at = at.Add(10 * time.Second)
		a.flush(ctx, record(i, at), at)
		b.flush(ctx, record(100+i, at), at.Add(time.Millisecond))
	}
	if a.j.chain.Seq != 6 || a.j.fenced != 0 {
		t.Fatalf("the first writer is at seq %d (fenced %d), want 6", a.j.chain.Seq, a.j.fenced)
	}
	if b.j.fenced != b.j.term {
		t.Fatalf("the second writer is not fenced; its log:\n%s", b.log.String())
	}
	if !strings.Contains(b.log.String(), "level=ERROR") || !strings.Contains(b.log.String(), "journal stopped") || !strings.Contains(b.log.String(), "epoch="+base.ID) {
		t.Fatalf("the second writer's log does not say it stopped, naming the epoch:\n%s", b.log.String())
	}
	// A snapshot the fenced daemon takes starts no epoch.
	b.j.stored(snapshot.Info{ID: base.ID})
	verifyJournal(t, st, 6)
	l, err := st.Journal().List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, hole := l.Epochs[0].Chain(); hole != nil {
		t.Fatal(hole)
	}
}

// A proxy in front of the S3 server lets a segment write through and drops
// the reply, for several flushes: the daemon writes the same segment again
// until it finds it stored, never a second one for the sequence number,
// and the journal stays restorable and verifies. On gofakes3 and, when
// installed, MinIO.
func TestJournalReplyLost(t *testing.T) {
	for _, name := range []string{"gofakes3", "minio"} {
		t.Run(name, func(t *testing.T) {
			var storeURL string
			var proxy *storeservers.Proxy
			if name == "minio" {
				srv := storeservers.MinIO(t)
				srv.Use(t)
				storeURL, proxy = srv.URL, srv.Proxy
			} else {
				raw := s3test.Start(t)
				u, _ := url.Parse(raw)
				q := u.Query()
				ep, _ := url.Parse(q.Get("endpoint"))
				proxy = storeservers.NewProxy(t, ep.Host)
				q.Set("endpoint", "http://"+proxy.Addr)
				u.RawQuery = q.Encode()
				storeURL = u.String()
			}
			st, base, topics := journalWorld(t, storeURL)
			ctx := t.Context()
			w := newWriter(t, st, base, topics)
			at := base.CreatedAt
			var want []journal.Entry
			for i := int64(0); i < 8; i++ {
				at = at.Add(10 * time.Second)
				lost := i == 2 || i == 3 // two flushes whose replies are all dropped
				proxy.DropReplies(lost)
				e := record(i, at)
				want = append(want, e...)
				w.flush(ctx, e, at)
				proxy.DropReplies(false)
				if lost && w.j.pending == nil {
					t.Fatalf("flush %d: no segment pending with every reply dropped", i)
				}
			}
			if proxy.Dropped.Load() == 0 {
				t.Fatal("no reply was dropped")
			}
			if w.j.pending != nil || w.j.fenced != 0 || w.j.tail == nil {
				t.Fatalf("the writer did not recover: pending %v, fenced %d; log:\n%s", w.j.pending != nil, w.j.fenced, w.log.String())
			}
			verifyJournal(t, st, int(w.j.chain.Seq))
			snap, _, err := st.Journal().StateAt(ctx, at)
			if err != nil {
				t.Fatalf("state at the last flush: %v", err)
			}
			if got := snap.SourceKeys(); got != 1 {
				t.Fatalf("state holds %d source keys, want 1", got)
			}
		})
	}
}

// Azurite stopped under a journaling daemon: flushes fail with an ERROR
// (no panic) and keep their segment pending; once Azurite is back the
// next flush writes it and the journal verifies.
func TestJournalAzuriteDown(t *testing.T) {
	srv := storeservers.Azurite(t)
	srv.Use(t)
	st, base, topics := journalWorld(t, srv.URL)
	ctx := t.Context()
	w := newWriter(t, st, base, topics)
	at := base.CreatedAt
	for i := int64(0); i < 6; i++ {
		at = at.Add(10 * time.Second)
		if i == 2 {
			srv.Stop()
		}
		if i == 4 {
			srv.Restart()
		}
		w.flush(ctx, record(i, at), at)
	}
	if !strings.Contains(w.log.String(), "level=ERROR") || strings.Contains(w.log.String(), "panic") {
		t.Fatalf("the outage is not an ERROR, or panicked:\n%s", w.log.String())
	}
	if w.j.pending != nil || w.j.tail == nil {
		t.Fatalf("the journal did not recover once Azurite was back:\n%s", w.log.String())
	}
	verifyJournal(t, st, int(w.j.chain.Seq))
}

// A journal that stopped says so: a moment past its last flush plus two
// intervals is not covered yet, naming the last flush; a flush that wrote
// nothing (nothing changed) but its mark keeps the moments after it
// covered.
func TestJournalStoppedNotCovered(t *testing.T) {
	st, base, topics := journalWorld(t, "file://"+t.TempDir())
	ctx := t.Context()
	w := newWriter(t, st, base, topics)
	at := base.CreatedAt
	for i := int64(0); i < 3; i++ {
		at = at.Add(10 * time.Second)
		w.flush(ctx, record(i, at), at)
	}
	if _, _, err := st.Journal().StateAt(ctx, at); err != nil {
		t.Fatalf("state at the last flush: %v", err)
	}
	_, _, err := st.Journal().StateAt(ctx, time.Now())
	if !errors.Is(err, journal.ErrNotRestorable) || !strings.Contains(err.Error(), "not covered yet: the journal's last flush was at "+at.UTC().Format("2006-01-02T15:04:05.000Z")) {
		t.Fatalf("state now, an hour after the journal stopped: %v", err)
	}
	// The daemon flushes, nothing changed: no segment, a mark.
	now := time.Now()
	w.j.write(ctx, nil, now)
	if _, _, err := st.Journal().StateAt(ctx, now); err != nil {
		t.Fatalf("state at a flush that wrote nothing: %v", err)
	}
}

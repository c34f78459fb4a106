package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// startDaemon runs the daemon command against c until the test ends;
// args may set --listen.
func (c *cluster) startDaemon(args ...string) *testkit.SyncBuffer {
	c.t.Helper()
	if !slices.Contains(args, "--listen") {
		args = append(args, "--listen", freeAddr(c.t)) // never the default port another test (or daemon) holds
	}
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr testkit.SyncBuffer
	exit := make(chan int, 1)
	go func() {
		// No HTTP unless the test asks for it (a later --listen wins): the
		// default :9464 may be held by anything else on the machine.
		exit <- run(ctx, append([]string{"daemon", "--brokers", c.brokers, "--store", c.store, "--listen", "",
			"--leader-election=false", "--log-format", "json", "--log-level", "debug"}, args...), &stdout, &stderr)
	}()
	c.t.Cleanup(func() {
		cancel()
		select {
		case <-exit:
		case <-time.After(30 * time.Second):
			c.t.Error("daemon did not stop")
		}
	})
	return &stderr
}

// waitJournal waits until the journal in the store covers the moment at:
// a segment after it, or a flush mark after it. A flush that found nothing
// new writes only the mark (a segment follows a heartbeat later), so a
// flush that saw the test's last change before at covers at by its mark
// alone; that race flaked the tests under load.
func (c *cluster) waitJournal(at time.Time, logs *testkit.SyncBuffer) {
	c.t.Helper()
	s, err := store.OpenStore(context.Background(), c.store)
	if err != nil {
		c.t.Fatal(err)
	}
	defer s.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		cov, err := s.Journal().Coverage(context.Background())
		if err == nil && len(cov) > 0 && (cov[len(cov)-1].To.After(at) || c.markedAfter(cov[len(cov)-1], at)) {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("the journal does not cover %v after 30s (coverage %+v, %v)\n%s", at, cov, err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// markedAfter reports whether the flush mark of the epoch of cov, which
// follows its last segment, is after at. The tests' stores are
// directories; the mark is journal/<epoch>/flushed.json (see
// store.Journal.PutFlushMark).
func (c *cluster) markedAfter(cov snapshot.Coverage, at time.Time) bool {
	data, err := os.ReadFile(filepath.Join(c.store, journal.JournalPrefix, cov.Epoch, "flushed.json"))
	var m struct {
		Epoch  string `json:"epoch"`
		Seq    uint64 `json:"seq"`
		TimeMs int64  `json:"time_ms"`
	}
	if err != nil || json.Unmarshal(data, &m) != nil {
		return false // none yet, or read while rewritten
	}
	return m.Epoch == cov.Epoch && m.Seq >= cov.LastSeq && time.UnixMilli(m.TimeMs).After(at)
}

// moment returns now, once the clock has moved past the journal's
// millisecond from anything written before, and waits until it has moved
// as far past it before anything is written after: explicit waits on the
// clock, where sleeps only made that likely.
func moment() time.Time {
	t := clockPassed(time.Now())
	clockPassed(t)
	return t
}

// clockPassed waits until the clock is more than a millisecond past t and
// returns it.
func clockPassed(t time.Time) time.Time {
	for !time.Now().After(t.Add(time.Millisecond)) {
		runtime.Gosched()
	}
	return time.Now()
}

// The acceptance scenario of the journal, as a user runs it: the daemon
// journals every second while connectors commit; after a bad reset,
// restore --at T brings back exactly the offsets at T, sources and sinks;
// restore --at T1 earlier rewinds further; show --at T --output
// connect-rest matches; the reset is in events with the command that
// undoes it.
func TestJournalRestoreAt(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	addr := freeAddr(t)
	logs := c.startDaemon("--journal-interval", "1s", "--schedule", "@every 1h", "--listen", addr)
	c.waitJournal(time.Now(), logs)

	jdbc := key(connectdemo.ConnJDBC, `{"protocol":"1","table":"shop.orders"}`)
	commitStep := func(n int64, pos string) {
		c.produce(&kgo.Record{Topic: connectdemo.DefaultOffsetsTopic, Key: jdbc, Value: []byte(`{"incrementing":` + pos + `}`)})
		c.commit(connectdemo.GroupSinkS3, kadm.Offset{Topic: "clicks", Partition: 0, At: n})
	}
	// A moment after a commit and after the journal observed it: sink
	// offsets are as exact as the journal interval, source offsets as
	// exact as the record time.
	observed := func() time.Time {
		c.waitJournal(moment(), logs)
		return moment()
	}
	commitStep(61, "100")
	t1 := observed()
	want1 := c.capture()
	commitStep(62, "200")
	t2 := observed()
	want2 := c.capture()

	c.badReset()
	reset := moment()
	c.waitJournal(reset, logs)

	// The metrics count the resets by kind and show the journal's lag.
	_, metrics, err := httpGet("http://" + addr + "/metrics")
	if err != nil || !strings.Contains(metrics, "offsetkeeper_journal_lag_seconds ") ||
		!strings.Contains(metrics, "offsetkeeper_journal_last_flush_timestamp_seconds ") ||
		strings.Contains(metrics, `offsetkeeper_reset_events_total{kind="source-tombstoned"} 0`) {
		t.Errorf("/metrics: %v\n%s", err, metrics)
	}

	// The reset is in events, each with the command that undoes it.
	out, _ := c.mustRun(0, "events", "--output", "json", "--since", t2.Format(time.RFC3339Nano))
	var evs []eventJSON
	if err := json.Unmarshal([]byte(out), &evs); err != nil {
		t.Fatalf("events --output json: %v\n%s", err, out)
	}
	kinds := map[string]eventJSON{}
	for _, e := range evs {
		kinds[e.Connector+" "+e.Kind] = e
	}
	for _, k := range []string{
		connectdemo.ConnMongo + " " + snapshot.EventSourceTombstoned,
		connectdemo.ConnJDBC + " " + snapshot.EventSourceRewound,
		connectdemo.ConnSinkS3 + " " + snapshot.EventSinkRewound,
		connectdemo.ConnSinkES + " " + snapshot.EventSinkDeleted,
	} {
		if _, ok := kinds[k]; !ok {
			t.Errorf("events lacks %s:\n%s", k, out)
		}
	}
	text, _ := c.mustRun(0, "events", "--since", t2.Format(time.RFC3339Nano), "--connector", connectdemo.ConnMongo)
	undo := kinds[connectdemo.ConnMongo+" "+snapshot.EventSourceTombstoned].Undo
	if undo == "" || !strings.Contains(text, undo) {
		t.Fatalf("events text does not give the undo command %q:\n%s", undo, text)
	}
	// Its command puts the connector back as it was before the reset.
	args := strings.Fields(strings.TrimPrefix(undo, "offsetkeeper "))
	c.mustRun(0, args...)
	diffMaps(t, "mongo after the events undo", sourceState(c.capture().Filter([]string{connectdemo.ConnMongo})), sourceState(want2.Filter([]string{connectdemo.ConnMongo})))

	// show --at T --output connect-rest is the REST body of the state at T.
	rest, _ := c.mustRun(0, "show", "--at", t2.Format(time.RFC3339Nano), "--output", "connect-rest", "--connector", connectdemo.ConnJDBC)
	body, err := want2.ConnectREST(connectdemo.ConnJDBC)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(rest) != strings.TrimSpace(string(body)) {
		t.Errorf("show --at --output connect-rest:\n%s\nwant\n%s", rest, body)
	}

	// restore --at T: exactly the state at T, sources and sinks.
	out, _ = c.mustRun(0, "restore", "--at", t2.Format(time.RFC3339Nano))
	if !strings.Contains(out, "state at ") || !strings.Contains(out, "(exact; sink offsets ") || !strings.Contains(out, "verified: ") {
		t.Errorf("restore --at output lacks the state's moment, precision or verification:\n%s", out)
	}
	after := c.capture()
	diffMaps(t, "source offsets at T", sourceState(after), sourceState(want2))
	diffMaps(t, "group offsets at T", groupState(after), groupState(want2))

	// restore --at T1, earlier, rewinds further.
	c.mustRun(0, "restore", "--at", t1.Format(time.RFC3339Nano))
	after = c.capture()
	diffMaps(t, "source offsets at T1", sourceState(after), sourceState(want1))
	diffMaps(t, "group offsets at T1", groupState(after), groupState(want1))

	// list shows the journal's coverage.
	list, _ := c.mustRun(0, "list")
	if !strings.Contains(list, "journal (restore --at TIME):") {
		t.Errorf("list shows no journal coverage:\n%s", list)
	}

	// verify checks the segments and their chain, and names a bad one.
	if out, _ := c.mustRun(0, "verify"); !strings.Contains(out, "ok   journal epoch ") {
		t.Errorf("verify does not check the journal:\n%s", out)
	}
	segs, _ := filepath.Glob(filepath.Join(c.store, "journal", "*", "0", "*.seg"))
	if len(segs) == 0 {
		t.Fatal("no segment files in the store")
	}
	data, _ := os.ReadFile(segs[0])
	data[len(data)-1] ^= 0xff
	os.WriteFile(segs[0], data, 0o644)
	out, _ = c.mustRun(exitError, "verify")
	if !strings.Contains(out, "FAIL journal epoch ") || !strings.Contains(out, filepath.Base(segs[0])) {
		t.Errorf("verify does not name the damaged segment %s:\n%s", segs[0], out)
	}
}

// Bad moments: the future, before anything stored: exit 1, nothing
// written; a malformed TIME: exit 2.
func TestJournalRestoreAtBadInput(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	logs := c.startDaemon("--journal-interval", "1s", "--schedule", "@every 1h", "--listen", "")
	c.waitJournal(time.Now(), logs)
	ends := c.ends(offsetsTopics()...)
	for _, tc := range []struct {
		at   string
		code int
		msg  string
	}{
		{time.Now().Add(time.Hour).Format(time.RFC3339), exitError, "is in the future"},
		{"2001-01-01T00:00:00Z", exitError, "before the earliest restorable moment"},
		{"yesterday", exitUsage, "want an RFC 3339 time"},
		{"15m", exitUsage, "want an RFC 3339 time"},
	} {
		code, _, stderr := c.run("restore", "--at", tc.at)
		if code != tc.code || !strings.Contains(stderr, tc.msg) {
			t.Errorf("restore --at %s: exit %d, want %d with %q\n%s", tc.at, code, tc.code, tc.msg, stderr)
		}
	}
	for _, args := range [][]string{
		{"show", "--at", "yesterday"},
		{"show", "latest", "--at", "-1m"},
		{"restore", "latest", "--at", "-1m"},
		{"diff", "--at", "-1m", "--at", "-2m", "--at", "-3m"},
		{"diff", "--at", "-1m", "--at", "-2m", "--live"},
		{"events", "--since", "later"},
	} {
		if code, _, stderr := c.run(args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d\n%s", args, code, exitUsage, stderr)
		}
	}
	// diff between two moments and a moment and the live cluster.
	at := moment()
	c.waitJournal(at, logs)
	out, _ := c.mustRun(0, "diff", "--at", at.Format(time.RFC3339Nano), "--live")
	if !strings.Contains(out, "diff at ") {
		t.Errorf("diff --at --live names no moment:\n%s", out)
	}
	if got := c.ends(offsetsTopics()...); len(got) != len(ends) || got[connectdemo.DefaultOffsetsTopic][0] != ends[connectdemo.DefaultOffsetsTopic][0] {
		t.Errorf("a refused restore --at wrote: %v, was %v", got, ends)
	}
}

// Two daemons on one store with leader election: when the leader stops,
// the standby takes over and continues the journal from the store, in the
// same epoch, without a gap; a change committed meanwhile is restorable.
func TestJournalLeaderTakeover(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	ctx, cancel := context.WithCancel(context.Background())
	var first testkit.SyncBuffer
	exit := make(chan int, 1)
	go func() {
		exit <- run(ctx, []string{"daemon", "--brokers", c.brokers, "--store", c.store, "--listen", "", "--journal-interval", "1s",
			"--schedule", "@every 1h", "--leader-session-timeout", "6s", "--log-format", "json"}, io.Discard, &first)
	}()
	c.waitJournal(time.Now(), &first)
	second := c.startDaemon("--journal-interval", "1s", "--schedule", "@every 1h", "--listen", "", "--leader-election=true", "--leader-session-timeout", "6s")
	jdbc := key(connectdemo.ConnJDBC, `{"protocol":"1","table":"shop.orders"}`)
	c.produce(&kgo.Record{Topic: connectdemo.DefaultOffsetsTopic, Key: jdbc, Value: []byte(`{"incrementing":777}`)})
	committed := moment()
	cancel() // the leader leaves; the standby takes over
	<-exit
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(second.String(), "journal continues from the store") {
		if time.Now().After(deadline) {
			t.Fatalf("the standby did not continue the journal:\n%s", second.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if strings.Contains(second.String(), "could not continue") {
		t.Fatalf("the standby could not continue the journal:\n%s", second.String())
	}
	c.waitJournal(time.Now(), second)
	out, _ := c.mustRun(0, "show", "--at", committed.Format(time.RFC3339Nano), "--output", "connect-rest", "--connector", connectdemo.ConnJDBC)
	if !strings.Contains(out, `"incrementing":777`) {
		t.Fatalf("the change committed before the takeover is not in the state at %v:\n%s", committed, out)
	}
}

// Continuity is proven: partitions added to the offsets topic end the
// epoch, and the daemon takes a full snapshot at once to start the next,
// saying why.
func TestJournalBreakStartsEpoch(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	logs := c.startDaemon("--journal-interval", "1s", "--schedule", "@every 1h", "--listen", "")
	c.waitJournal(time.Now(), logs)
	if _, err := c.adm.CreatePartitions(context.Background(), 1, connectdemo.DefaultOffsetsTopic); err != nil {
		t.Fatal(err)
	}
	s, err := store.OpenStore(context.Background(), c.store)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		l, err := s.Journal().List(context.Background())
		if err == nil && len(l.Epochs) > 0 {
			last := l.Epochs[len(l.Epochs)-1]
			if ep, err := s.Journal().GetEpoch(context.Background(), last.ID); err == nil && ep.Reason == journal.EpochPartitions {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no epoch started for the changed partition count\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "journal epoch ends") {
		t.Errorf("the daemon did not log why the epoch ended:\n%s", logs.String())
	}
	list, _ := c.mustRun(0, "list")
	if strings.Count(list, " ok\n") < 2 {
		t.Errorf("list does not show the two epochs:\n%s", list)
	}
}

package capture

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/build"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
)

// This file keeps the sink group read as it was before fetchCommitted
// (kadm's DescribeGroups of every group and FetchManyOffsets, then
// newSinkGroup), and the tail's diff of it, to check that the new read
// gives the same groups to a snapshot and the same entries to the
// journal.

// oldTail is the group side of a Tail before the read kept unchanged
// slices: its own Capturer (for its last consumed records), groups and
// last poll.
type oldTail struct {
	capt     *Capturer
	conf     *build.ConfigState
	groups   map[string]snapshot.SinkGroup
	lastPoll time.Time
}

// oldCaptureGroups is captureGroups as it was before fetchCommitted: it reads the sink groups: their state, members and committed
// offsets, in batched requests.
func (c *Capturer) oldCaptureGroups(ctx context.Context, connectors map[string]*snapshot.Connector, inScope func(string) bool, scoped bool) (_ []snapshot.SinkGroup, warnings []string, _ error) {
	owner := make(map[string]string) // group -> connector
	for name, conn := range connectors {
		if conn.Type == snapshot.TypeSink && conn.Group != "" {
			owner[conn.Group] = name
		}
	}
	want := make(map[string]bool)
	for g := range owner {
		want[g] = true
	}
	listed, err := c.adm.ListGroups(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("list consumer groups: %w", err)
	}
	exists := make(map[string]bool, len(listed))
	for _, g := range listed {
		exists[g.Group] = true
		if scoped || !strings.HasPrefix(g.Group, c.opts.GroupPrefix) {
			continue
		}
		if _, owned := owner[g.Group]; !owned {
			// A group by prefix whose connector has no config here: name it
			// after the group, the prefix taken off (Connect's convention
			// is connect-<name>, the default prefix).
			name := strings.TrimPrefix(g.Group, c.opts.GroupPrefix)
			if name == g.Group || !inScope(name) {
				name = ""
			}
			owner[g.Group] = name
		}
		want[g.Group] = true
	}
	var names []string
	for g := range want {
		if exists[g] {
			names = append(names, g)
		} else if conn := owner[g]; conn != "" {
			// Kafka lists only the groups a principal may describe, so a
			// missing ACL shrinks the list without an error.
			warnings = append(warnings, fmt.Sprintf("sink connector %q: its group %q does not exist or is not visible (no commit yet, or a missing DESCRIBE ACL on the group)", conn, g))
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return []snapshot.SinkGroup{}, warnings, nil
	}
	// Described and fetched at once: one round trip per coordinator less.
	// The describe is DescribeTyped's (every group type), the fetch
	// FetchManyOffsets, the reference for fetchCommitted.
	var (
		described   map[string]GroupDescription
		describeErr error
		done        = make(chan struct{})
	)
	go func() {
		defer close(done)
		described, describeErr = DescribeTyped(ctx, c.adm, names, listed)
	}()
	var fetched kadm.FetchOffsetsResponses
	err = retryDropped(ctx, func() error {
		fetched = c.adm.FetchManyOffsets(ctx, names...)
		return fetched.Error()
	})
	<-done
	if describeErr != nil {
		return nil, nil, fmt.Errorf("describe %d consumer groups: %w", len(names), describeErr)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("fetch committed offsets of %d consumer groups: %w", len(names), err)
	}
	out := make([]snapshot.SinkGroup, 0, len(names))
	for _, g := range names {
		d := described[g]
		if d.Err != nil {
			return nil, nil, d.Err
		}
		f, ok := fetched[g]
		if !ok && !d.Gone {
			return nil, nil, fmt.Errorf("fetch offsets of consumer group %q: no answer from its coordinator", g)
		}
		if d.Gone || errors.Is(f.Err, kerr.GroupIDNotFound) {
			continue // deleted between list and describe
		}
		if f.Err != nil {
			return nil, nil, fmt.Errorf("fetch offsets of consumer group %q: %w", g, f.Err)
		}
		sg, err := newSinkGroup(g, owner[g], d, f.Fetched)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, sg)
	}
	setProtocolTypes(out, listed)
	return out, warnings, nil
}

// readGroups reads the sink groups as a snapshot does.
func (t *oldTail) readGroups(ctx context.Context) (map[string]snapshot.SinkGroup, error) {
	conns := map[string]*snapshot.Connector{}
	for name := range t.conf.Connectors {
		c := t.conf.Connector(name)
		conns[name] = &c
	}
	gs, _, err := t.capt.oldCaptureGroups(ctx, conns, func(string) bool { return true }, false)
	if err != nil {
		return nil, err
	}
	t.lastConsumed(ctx, gs)
	out := make(map[string]snapshot.SinkGroup, len(gs))
	for _, g := range gs {
		out[g.Group] = g
	}
	return out, nil
}

// wantGroupEntries is what the journal must write when the sink groups go
// from was to now, by definition rather than by the tail's walk (maps, no
// order): a group entry for a group new or changed, a sink entry for every
// partition new or changed and a deleted one for every partition gone, and
// per group an event for the partitions that went back and one for those
// deleted. A group gone deletes its partitions and itself. The order is
// left to the caller (sortedEntries).
func wantGroupEntries(was, now map[string]snapshot.SinkGroup, before, at int64) []journal.Entry {
	var out []journal.Entry
	byTP := func(g snapshot.SinkGroup) map[journal.SinkTP]snapshot.SinkOffset {
		m := map[journal.SinkTP]snapshot.SinkOffset{}
		for _, o := range g.Offsets {
			m[journal.SinkTP{Topic: o.Topic, Part: o.Partition}] = o
		}
		return m
	}
	for name, g := range now {
		old, existed := was[name]
		if !existed || g.State != old.State || g.Members != old.Members || g.Connector != old.Connector {
			out = append(out, journal.Entry{Kind: journal.EntryGroup, Group: name, Connector: g.Connector, State: g.State, Members: int32(g.Members), Time: at})
		}
		oldOffs, newOffs := byTP(old), byTP(g)
		back, gone := 0, 0
		for tp, o := range newOffs {
			w, ok := oldOffs[tp]
			if ok && sameSinkOffset(w, o) {
				continue
			}
			if ok && o.Offset < w.Offset {
				back++
			}
			out = append(out, journal.Entry{Kind: journal.EntrySink, Group: name, Topic: o.Topic, Partition: o.Partition, Offset: o.Offset, LeaderEpoch: o.LeaderEpoch, Metadata: o.Metadata, LastConsumed: o.LastConsumed, Time: at})
		}
		for tp := range oldOffs {
			if _, ok := newOffs[tp]; !ok {
				gone++
				out = append(out, journal.Entry{Kind: journal.EntrySink, Group: name, Topic: tp.Topic, Partition: tp.Part, Time: at, Deleted: true})
			}
		}
		conn := cmpOr(g.Connector, name)
		if back > 0 {
			out = append(out, journal.Entry{Kind: journal.EntryEvent, Time: at, Connector: conn, Group: name, Reason: snapshot.EventSinkRewound, Count: int32(back), Before: before})
		}
		if gone > 0 {
			out = append(out, journal.Entry{Kind: journal.EntryEvent, Time: at, Connector: conn, Group: name, Reason: snapshot.EventSinkDeleted, Count: int32(gone), Before: before})
		}
	}
	for name, old := range was {
		if _, ok := now[name]; ok {
			continue
		}
		for _, o := range old.Offsets {
			out = append(out, journal.Entry{Kind: journal.EntrySink, Group: name, Topic: o.Topic, Partition: o.Partition, Time: at, Deleted: true})
		}
		out = append(out, journal.Entry{Kind: journal.EntryGroup, Group: name, Connector: old.Connector, Time: at, Deleted: true})
		if len(old.Offsets) > 0 {
			out = append(out, journal.Entry{Kind: journal.EntryEvent, Time: at, Connector: cmpOr(old.Connector, name), Group: name, Reason: snapshot.EventSinkDeleted, Count: int32(len(old.Offsets)), Before: before})
		}
	}
	return out
}

// sortedEntries returns es in one order, for comparing entries as sets.
func sortedEntries(es []journal.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = fmt.Sprintf("%+v", e)
	}
	slices.Sort(out)
	return out
}

// lastConsumed sets the sink offsets' LastConsumed as a capture does, from
// the last read for a position that did not move (most of them, every
// interval) and through the snapshot's read for the others.
func (t *oldTail) lastConsumed(ctx context.Context, gs []snapshot.SinkGroup) {
	var (
		moved []snapshot.SinkGroup
		where [][2]int // group and offset index of each moved offset
	)
	for gi := range gs {
		g := &gs[gi]
		prev := t.groups[g.Group].Offsets // sorted like g.Offsets
		var m snapshot.SinkGroup
		j := 0
		for oi := range g.Offsets {
			o := &g.Offsets[oi]
			for j < len(prev) && cmpTP(journal.SinkTP{Topic: prev[j].Topic, Part: prev[j].Partition}, journal.SinkTP{Topic: o.Topic, Part: o.Partition}) < 0 {
				j++
			}
			if j < len(prev) && prev[j].Topic == o.Topic && prev[j].Partition == o.Partition && prev[j].Offset == o.Offset {
				o.LastConsumed = prev[j].LastConsumed
				continue
			}
			m.Offsets = append(m.Offsets, *o)
			where = append(where, [2]int{gi, oi})
		}
		if len(m.Offsets) > 0 {
			m.Group = g.Group
			moved = append(moved, m)
		}
	}
	if len(moved) == 0 {
		return
	}
	t.capt.captureLastConsumed(ctx, moved)
	k := 0
	for _, m := range moved {
		for _, o := range m.Offsets {
			w := where[k]
			gs[w[0]].Offsets[w[1]].LastConsumed = o.LastConsumed
			k++
		}
	}
}

// groupWorld is a kfake cluster with two data topics, records in them
// (for the last consumed records) and consumer groups that the test
// commits, rewinds, deletes and creates.
type groupWorld struct {
	t      *testing.T
	cl     *kgo.Client
	adm    *kadm.Client
	topics map[string]int32
	live   []*kgo.Client // members of groups, closed at the end
}

func newGroupWorld(t *testing.T) *groupWorld {
	t.Helper()
	topics := map[string]int32{"sink-b": 3, "sink-a": 6}
	kc := testkit.Kfake(t, kfake.NumBrokers(3), kfake.SeedTopics(6, "sink-a"), kfake.SeedTopics(3, "sink-b"))
	cl := testkit.Client(t, kc, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var rs []*kgo.Record
	for topic, n := range topics {
		for p := range n {
			for i := range 30 {
				rs = append(rs, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "r%d", i)})
			}
		}
	}
	if err := cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	w := &groupWorld{t: t, cl: cl, adm: kadm.NewClient(cl), topics: topics}
	t.Cleanup(func() {
		for _, m := range w.live {
			m.Close()
		}
	})
	return w
}

// commit commits random offsets to random partitions of group: some
// forward, some back, some with metadata or a leader epoch.
func (w *groupWorld) commit(rng *rand.Rand, group string) {
	w.t.Helper()
	var os kadm.Offsets
	for topic, n := range w.topics {
		for p := range n {
			if rng.Intn(3) > 0 {
				continue
			}
			o := kadm.Offset{Topic: topic, Partition: p, At: int64(rng.Intn(31)), LeaderEpoch: -1}
			if rng.Intn(5) == 0 {
				o.Metadata = fmt.Sprintf("m%d", rng.Intn(3))
			}
			if rng.Intn(5) == 0 {
				o.LeaderEpoch = 0
			}
			os.Add(o)
		}
	}
	if len(os) == 0 {
		os.Add(kadm.Offset{Topic: "sink-a", Partition: 0, At: int64(rng.Intn(31)), LeaderEpoch: -1})
	}
	if err := w.adm.CommitAllOffsets(context.Background(), group, os); err != nil {
		w.t.Fatalf("commit %s: %v", group, err)
	}
}

// join makes a member of group, which then has a member and is not
// Empty: its read describes it.
func (w *groupWorld) join(group string) {
	w.t.Helper()
	m, err := kgo.NewClient(kgo.SeedBrokers(w.cl.OptValue(kgo.SeedBrokers).([]string)...), kgo.ConsumerGroup(group),
		kgo.ConsumeTopics("sink-b"), kgo.DisableAutoCommit())
	if err != nil {
		w.t.Fatal(err)
	}
	w.live = append(w.live, m)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		m.PollRecords(ctx, 1)
		d, err := w.adm.DescribeGroups(ctx, group)
		if err == nil && d[group].State == "Stable" && len(d[group].Members) > 0 {
			return
		}
		if ctx.Err() != nil {
			w.t.Fatalf("member of %s never joined: %v", group, err)
		}
	}
}

// TestSinkGroupReadMatchesOld: over rounds of groups committed forward and
// back, partitions' offsets deleted, groups deleted and created, a group
// with a member and rounds where nothing changes, the new read gives a
// snapshot the same groups as the old one, and the journal the same
// entries.
func TestSinkGroupReadMatchesOld(t *testing.T) {
	w := newGroupWorld(t)
	ctx := context.Background()
	rng := rand.New(rand.NewSource(7))
	var groups []string
	for i := range 12 {
		g := fmt.Sprintf("connect-sink%02d", i)
		groups = append(groups, g)
		w.commit(rng, g)
	}
	w.join("connect-sink03")
	start := time.Now()
	newT := &Tail{capt: NewCapturer(w.cl, Options{}), conf: build.NewConfigState(), groups: map[string]snapshot.SinkGroup{}, LastPoll: start}
	oldT := &oldTail{capt: NewCapturer(w.cl, Options{}), conf: build.NewConfigState(), groups: map[string]snapshot.SinkGroup{}, lastPoll: start}
	reused := 0
	events := map[string]int{}
	for round := range 14 {
		quiet := round%3 == 2 // nothing changes in these rounds
		if !quiet {
			for _, g := range groups {
				switch r := rng.Intn(10); {
				case r < 3 && (g != "connect-sink03" || w.live == nil): // a group with members takes no admin commit
					w.commit(rng, g)
				case r == 3:
					// A partition's commit deleted (the group must be Empty).
					if d, err := w.adm.DescribeGroups(ctx, g); err == nil && d[g].State == "Empty" {
						w.deleteOffset(g, false)
					}
				case r == 4 && g != "connect-sink03":
					if _, err := w.adm.DeleteGroup(ctx, g); err != nil {
						t.Fatalf("delete group %s: %v", g, err)
					}
				}
			}
			g := fmt.Sprintf("connect-new%02d", round)
			groups = append(groups, g)
			w.commit(rng, g)
			if round == 4 {
				// Every commit of a group deleted: listed Empty with no
				// commit, which the new read describes after all.
				w.deleteOffset("connect-sink05", true)
			}
			if round == 7 {
				w.live[0].Close() // the member leaves: connect-sink03 is Empty again
				w.live = nil
			}
		}
		rd, err := newT.capt.captureGroups(ctx, nil, func(string) bool { return true }, false)
		if err != nil {
			t.Fatal(err)
		}
		snapNew := rd.groups
		snapOld, _, err := oldT.capt.oldCaptureGroups(ctx, nil, func(string) bool { return true }, false)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(snapNew, snapOld) {
			t.Fatalf("round %d: the snapshot's groups differ:\nnew %+v\nold %+v", round, snapNew, snapOld)
		}
		prev := newT.groups
		observed := start.Add(time.Duration(round+1) * 10 * time.Second)
		gNew, err := newT.readGroups(ctx)
		if err != nil {
			t.Fatal(err)
		}
		gOld, err := oldT.readGroups(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for name, g := range gNew {
			if p, ok := prev[name]; ok && len(g.Offsets) > 0 && sameSlice(g.Offsets, p.Offsets) {
				reused++
			}
		}
		want := wantGroupEntries(prev, gNew, journal.Ms(newT.LastPoll), journal.Ms(observed))
		eNew := newT.diffGroups(gNew, observed)
		oldT.groups = gOld
		newT.LastPoll, oldT.lastPoll = observed, observed
		if got, want := sortedEntries(eNew), sortedEntries(want); !slices.Equal(got, want) {
			t.Fatalf("round %d: the journal's entries differ from their definition:\ngot  %v\nwant %v", round, got, want)
		}
		for _, e := range eNew {
			events[e.Reason]++
		}
		if quiet && round > 2 && len(eNew) != 0 {
			t.Errorf("round %d: nothing changed, yet %d entries", round, len(eNew))
		}
		if !quiet && len(eNew) == 0 {
			t.Errorf("round %d: groups changed, no entries", round)
		}
		if !reflect.DeepEqual(gNew, gOld) {
			t.Fatalf("round %d: the tail's groups differ", round)
		}
	}
	if reused == 0 {
		t.Error("no group's offsets were kept from the last read")
	}
	if events[snapshot.EventSinkRewound] == 0 || events[snapshot.EventSinkDeleted] == 0 {
		t.Errorf("events seen %v: the rounds should rewind and delete", events)
	}
}

// deleteOffset deletes the commit of one partition of group, or with all
// every one.
func (w *groupWorld) deleteOffset(group string, all bool) {
	w.t.Helper()
	fetched, err := w.adm.FetchOffsets(context.Background(), group)
	if err != nil {
		w.t.Fatal(err)
	}
	var ts kadm.TopicsSet
	fetched.Each(func(o kadm.OffsetResponse) {
		if (all || len(ts) == 0) && o.At >= 0 {
			if ts == nil {
				ts = kadm.TopicsSet{}
			}
			ts.Add(o.Topic, o.Partition)
		}
	})
	if len(ts) == 0 {
		return
	}
	if _, err := w.adm.DeleteOffsets(context.Background(), group, ts); err != nil {
		w.t.Fatalf("delete an offset of %s: %v", group, err)
	}
}

// TestSortFetchedPartitions: answered partitions come out sorted, whether
// their numbers are a consecutive run (swapped into place), have gaps or
// repeat.
func TestSortFetchedPartitions(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, nums := range [][]int32{
		{}, {4}, {0, 1, 2, 3, 4, 5, 6, 7}, {10, 11, 12, 13}, {0, 2, 5, 9}, {3, 3, 4, 5}, {1, 1}, {7, 5, 5, 6}, {0, 0, 2}, {5, 7, 7}, {2, 0, 2, 1, 4},
	} {
		for range 20 {
			ps := make([]kmsg.OffsetFetchResponseGroupTopicPartition, len(nums))
			for i, n := range nums {
				ps[i] = kmsg.OffsetFetchResponseGroupTopicPartition{Partition: n, Offset: int64(n) * 10}
			}
			rng.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
			sortFetchedPartitions(ps)
			var got []int32
			for _, p := range ps {
				if p.Offset != int64(p.Partition)*10 {
					t.Fatalf("%v: partition %d lost its offset", nums, p.Partition)
				}
				got = append(got, p.Partition)
			}
			want := slices.Sorted(slices.Values(nums))
			if !slices.Equal(got, want) && len(want) > 0 {
				t.Fatalf("sorted %v: %v", nums, got)
			}
		}
	}
}

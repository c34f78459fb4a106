// Command journalday writes a day of journal straight into a file:// store,
// for the restore --at benchmark of docs/benchmarks.md: a full snapshot of
// a running cluster (bench/cluster), dated --span before --end, as an
// epoch's base, then the segments the daemon would have written over the
// span while busy source connectors rewrote random keys of the offsets
// topic at --rate changes a second (random positions, as bench/journal
// writes them): one raw segment every --interval with the journal's real
// writer (Store.PutSegment: names, digest chain, positions, the
// source-rewound events the tail would have seen), and the merged levels
// with the daemon's real compaction (Levels.Compact, and the
// retention of --journal-keep-within: Store.DropRaw, Store.ThinMinutes) at each tick of the daemon's
// compaction loop, under a clock the command moves instead of waiting.
//
// It prints what it wrote per level, the storage the store holds per
// level at the end, and how long the merges took (CPU).
//
// Usage: journalday --brokers B --store DIR [--rate 2000] [--span 24h]
//
//	[--interval 10s] [--end TIME] [--keep-within 168h] [--cpu-profile FILE]
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

func main() {
	var c config
	flag.StringVar(&c.brokers, "brokers", "127.0.0.1:23092", "bootstrap brokers of the cluster the base snapshot is taken of")
	flag.StringVar(&c.store, "store", "", "store directory (file://)")
	flag.IntVar(&c.rate, "rate", 2000, "offset changes per second")
	flag.DurationVar(&c.span, "span", 24*time.Hour, "journal between the base snapshot and --end")
	flag.DurationVar(&c.interval, "interval", 10*time.Second, "the journal interval")
	flag.DurationVar(&c.keep, "keep-within", 7*24*time.Hour, "--journal-keep-within")
	end := flag.String("end", "", "the journal's last moment, RFC 3339 (default: now)")
	prof := flag.String("cpu-profile", "", "write a CPU profile of the run here")
	flag.Parse()
	c.end = time.Now()
	if *end != "" {
		t, err := time.Parse(time.RFC3339Nano, *end)
		if err != nil {
			fmt.Fprintln(os.Stderr, "journalday: --end:", err)
			os.Exit(2)
		}
		c.end = t
	}
	if c.store == "" || c.rate <= 0 || c.interval <= 0 || c.span < c.interval {
		fmt.Fprintln(os.Stderr, "journalday: want --store DIR, --rate > 0, --span >= --interval > 0")
		os.Exit(2)
	}
	if *prof != "" {
		f, err := os.Create(*prof)
		if err != nil {
			fmt.Fprintln(os.Stderr, "journalday:", err)
			os.Exit(1)
		}
		_ = pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	if err := run(context.Background(), c); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "journalday:", err)
		os.Exit(1)
	}
}

type config struct {
	brokers, store       string
	rate                 int
	span, interval, keep time.Duration
	end                  time.Time
}

// key is one live source key of the offsets topic the day rewrites.
type key struct {
	topic     string
	partition int32
	connector string
	key       []byte
	base      []byte // the base snapshot's value; nil once rewritten
	pos       int64  // the position last written
}

// day is the journal being written.
type day struct {
	c     config
	s     *store.Store
	rng   *rand.Rand
	keys  []key
	next  map[string]map[int32]int64 // next offset per offsets topic partition
	conf  []journal.Entry            // positions of the topics that do not change
	epoch journal.EpochInfo
	chain journal.ChainWriter
	// What was written, per level, and the merges' cost; raw segments and
	// level 1 segments the retention deleted (--keep-within, as the
	// daemon's retainEpoch).
	written   [3]int64
	segments  [3]int
	records   int64
	events    int64
	mergeCPU  time.Duration
	mergeWall time.Duration
	dropped   int
	thinned   int
}

func run(ctx context.Context, c config) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(c.brokers, ",")...))
	if err != nil {
		return err
	}
	defer cl.Close()
	s, err := store.OpenStore(ctx, "file://"+c.store)
	if err != nil {
		return err
	}
	defer s.Close()
	snap, err := capture.Capture(ctx, cl, capture.Options{})
	if err != nil {
		return err
	}
	start := c.end.Add(-c.span).UTC().Truncate(time.Microsecond)
	snap.CreatedAt, snap.ID = start, snapshot.NewID(start)
	if _, err := s.Snapshots().Put(ctx, snap); err != nil {
		return err
	}
	topics, err := capture.EpochTopicsOf(ctx, cl, capture.Options{}, snap)
	if err != nil {
		return err
	}
	if err := s.Journal().PutEpoch(ctx, &journal.Epoch{ID: snap.ID, Reason: journal.EpochFirstRun, StartedAt: start, Topics: topics}); err != nil {
		return err
	}
	d := &day{c: c, s: s, rng: rand.New(rand.NewPCG(1, 2)), next: map[string]map[int32]int64{}, epoch: journal.EpochInfo{ID: snap.ID, HasFile: true}, chain: journal.ChainWriter{Epoch: snap.ID, Last: start}}
	for _, et := range topics {
		if et.Role != snapshot.RoleOffsets {
			for _, p := range et.Start {
				d.conf = append(d.conf, journal.Entry{Kind: journal.EntryPosition, Topic: et.Name, Partition: p.Partition, Offset: p.Next})
			}
			continue
		}
		d.next[et.Name] = map[int32]int64{}
		for _, p := range et.Start {
			d.next[et.Name][p.Partition] = p.Next
		}
	}
	for _, o := range snap.SourceTable().All() {
		if o.Topic == snapshot.DefaultOffsetsTopic && o.Connector != "" {
			d.keys = append(d.keys, key{topic: o.Topic, partition: o.Partition, connector: o.Connector, key: o.Key, base: o.Value, pos: -1})
		}
	}
	if len(d.keys) == 0 {
		return fmt.Errorf("the cluster's offsets topic %s holds no connector keys", snapshot.DefaultOffsetsTopic)
	}
	fmt.Printf("base=%s created_at=%s keys=%d end=%s\n", snap.ID, start.Format(time.RFC3339Nano), len(d.keys), c.end.UTC().Format(time.RFC3339Nano))
	began := time.Now()
	if err := d.write(ctx, start); err != nil {
		return err
	}
	fmt.Printf("generated_in=%s\n", time.Since(began).Round(time.Second))
	return d.report(ctx)
}

// compactEvery is the daemon's compaction tick (daemon.compactEvery).
const compactEvery = 15 * time.Second

// write writes every flush and every compaction tick of the span, in the
// order of their moments, as the daemon's two loops would.
func (d *day) write(ctx context.Context, start time.Time) error {
	flush, tick := start.Add(d.c.interval), start.Add(compactEvery)
	var done time.Time // the minute boundary compacted last, as compactLoop keeps it
	for !flush.After(d.c.end) {
		if tick.Before(flush) {
			if b := tick.UTC().Truncate(time.Minute); !b.Equal(done) {
				if err := d.compact(ctx, tick); err != nil {
					return err
				}
				done = b
			}
			tick = tick.Add(compactEvery)
			continue
		}
		if err := d.flush(ctx, flush); err != nil {
			return err
		}
		if d.chain.Seq%360 == 0 {
			fmt.Fprintf(os.Stderr, "%s: %d segments, %d records, raw %d MB, level 1 %d MB, level 2 %d MB\n",
				flush.UTC().Format(time.RFC3339), d.chain.Seq, d.records, d.written[0]>>20, d.written[1]>>20, d.written[2]>>20)
		}
		flush = flush.Add(d.c.interval)
	}
	return nil
}

// flush writes the raw segment of the interval ending at t: the records
// the connectors wrote in it, spread over it, with the events the tail
// would have seen, then the positions.
func (d *day) flush(ctx context.Context, t time.Time) error {
	n := int(int64(d.c.rate) * int64(d.c.interval) / int64(time.Second))
	from := d.chain.Last
	entries := make([]journal.Entry, 0, n+len(d.next)*32)
	type rc struct {
		rewound int32
		first   int64
	}
	resets := map[string]*rc{}
	span := t.Sub(from).Milliseconds()
	for i := 0; i < n; i++ {
		k := &d.keys[d.rng.IntN(len(d.keys))]
		at := from.UnixMilli() + 1 + int64(i)*span/int64(n)
		pos := d.rng.Int64N(1e12)
		v := strconv.AppendInt([]byte(`{"position":`), pos, 10)
		v = append(v, '}')
		back := false
		if k.base != nil {
			back = journal.Rewound(k.base, v)
		} else {
			back = pos < k.pos
		}
		k.base, k.pos = nil, pos
		if back {
			r := resets[k.connector]
			if r == nil {
				r = &rc{first: at}
				resets[k.connector] = r
			}
			r.rewound++
		}
		off := d.next[k.topic][k.partition]
		d.next[k.topic][k.partition] = off + 1
		entries = append(entries, journal.Entry{Kind: journal.EntrySource, Topic: k.topic, Partition: k.partition, Offset: off, Time: at, Key: k.key, Value: v})
	}
	for _, name := range sortedKeys(resets) {
		r := resets[name]
		entries = append(entries, journal.Entry{Kind: journal.EntryEvent, Time: r.first, Connector: name, Reason: snapshot.EventSourceRewound, Count: r.rewound, Before: r.first - 1})
		d.events++
	}
	entries = append(entries, d.positions()...)
	seg := d.chain.Next(entries, t)
	si, err := d.s.Journal().PutSegment(ctx, seg)
	if err != nil {
		return err
	}
	d.chain.Wrote(seg)
	d.records += int64(n)
	d.add(si)
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// positions are where the tail stands after a flush, as Tail.Positions.
func (d *day) positions() []journal.Entry {
	var out []journal.Entry
	for _, name := range sortedKeys(d.next) {
		parts := d.next[name]
		ps := make([]int32, 0, len(parts))
		for p := range parts {
			ps = append(ps, p)
		}
		slices.Sort(ps)
		for _, p := range ps {
			out = append(out, journal.Entry{Kind: journal.EntryPosition, Topic: name, Partition: p, Offset: parts[p]})
		}
	}
	out = append(out, d.conf...)
	slices.SortStableFunc(out, func(a, b journal.Entry) int { return strings.Compare(a.Topic, b.Topic) })
	return out
}

func (d *day) add(si journal.SegmentInfo) {
	d.epoch.Segments = append(d.epoch.Segments, si)
	d.written[si.Level] += si.Size
	d.segments[si.Level]++
}

// compact is one pass of the daemon's compaction loop at now: the merged
// segments the epoch lacks, then the retention of raw segments.
func (d *day) compact(ctx context.Context, now time.Time) error {
	cpu0, wall0 := cpuTime(), time.Now()
	segs, err := d.s.Levels().Compact(ctx, d.epoch, now)
	if err != nil {
		return err
	}
	for _, si := range segs {
		d.add(si)
	}
	journal.SortSegments(d.epoch.Segments)
	n, err := d.s.Levels().DropRaw(ctx, d.epoch, d.c.keep, now)
	if err != nil {
		return err
	}
	thinned, err := d.s.Levels().ThinMinutes(ctx, d.epoch, d.c.keep, now)
	if err != nil {
		return err
	}
	if n+thinned > 0 {
		l, err := d.s.Journal().List(ctx)
		if err != nil {
			return err
		}
		e, _ := l.Epoch(d.epoch.ID)
		d.epoch = *e
		d.dropped += n
		d.thinned += thinned
	}
	d.mergeCPU += cpuTime() - cpu0
	d.mergeWall += time.Since(wall0)
	return nil
}

// report prints what was written and what the store holds per level.
func (d *day) report(ctx context.Context) error {
	l, err := d.s.Journal().List(ctx)
	if err != nil {
		return err
	}
	e, ok := l.Epoch(d.epoch.ID)
	if !ok {
		return fmt.Errorf("epoch %s is not in the store", d.epoch.ID)
	}
	var held [3]int64
	var heldN [3]int
	for _, si := range e.Segments {
		held[si.Level] += si.Size
		heldN[si.Level]++
	}
	fmt.Printf("records=%d events=%d segments_written=%d/%d/%d raw_dropped=%d level_1_thinned=%d\n", d.records, d.events, d.segments[0], d.segments[1], d.segments[2], d.dropped, d.thinned)
	days := d.c.span.Hours() / 24
	for level := range held {
		fmt.Printf("level_%d written_bytes=%d held_segments=%d held_bytes=%d written_gb_per_day=%.2f\n",
			level, d.written[level], heldN[level], held[level], float64(d.written[level])/1e9/days)
	}
	fmt.Printf("merge_cpu=%s merge_wall=%s\n", d.mergeCPU.Round(time.Millisecond), d.mergeWall.Round(time.Millisecond))
	fmt.Printf("last=%s\n", d.chain.Last.UTC().Format(time.RFC3339Nano))
	return nil
}

// cpuTime is the CPU time (user and system) of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Command journal measures the daemon's journal for docs/benchmarks.md: it
// rewrites source offsets of a running cluster at a fixed rate (as busy
// source connectors would), then reads the journal the daemon wrote into
// the store and reports, for every record it wrote, the lag from its
// commit on the broker to the segment holding it landing in the store
// (the segment file's modification time), and the journal's size (raw
// segments, and apart the merged levels).
//
// Usage: journal --brokers B --store DIR [--rate 2000] [--duration 2m]
package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

func main() {
	var (
		brokers  = flag.String("brokers", "127.0.0.1:19092", "bootstrap brokers")
		sto      = flag.String("store", "", "the daemon's store directory")
		rate     = flag.Int("rate", 2000, "offset changes per second")
		duration = flag.Duration("duration", 2*time.Minute, "how long to write")
		settle   = flag.Duration("settle", 30*time.Second, "how long to wait for the last flush after writing")
	)
	flag.Parse()
	if err := run(*brokers, *sto, *rate, *duration, *settle); err != nil {
		fmt.Fprintln(os.Stderr, "journal:", err)
		os.Exit(1)
	}
}

func run(brokers, dir string, rate int, duration, settle time.Duration) error {
	ctx := context.Background()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	snap, err := capture.Capture(ctx, cl, capture.Options{})
	if err != nil {
		return err
	}
	var keys [][]byte
	for _, o := range snap.SourceTable().All() {
		if o.Topic == snapshot.DefaultOffsetsTopic {
			keys = append(keys, o.Key)
		}
	}
	began := time.Now()
	fmt.Printf("began=%s keys=%d\n", began.UTC().Format(time.RFC3339Nano), len(keys))
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	per := rate / 10
	written := 0
	for time.Since(began) < duration {
		<-tick.C
		rs := make([]*kgo.Record, per)
		for i := range rs {
			rs[i] = &kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Key: keys[rand.IntN(len(keys))], Value: fmt.Appendf(nil, `{"position":%d}`, rand.Int64N(1e12))}
		}
		if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			return err
		}
		written += per
	}
	ended := time.Now()
	fmt.Printf("ended=%s written=%d\n", ended.UTC().Format(time.RFC3339Nano), written)
	time.Sleep(settle)
	return report(ctx, dir, began, ended, written)
}

// report reads the segments written since began and prints the lag of
// every record written between began and ended, and the journal's size.
func report(ctx context.Context, dir string, began, ended time.Time, written int) error {
	s, err := store.OpenStore(ctx, dir)
	if err != nil {
		return err
	}
	defer s.Close()
	l, err := s.Journal().List(ctx)
	if err != nil {
		return err
	}
	var lags []time.Duration
	var bytes int64
	segs := 0
	var merged [10]int64 // bytes of merged segments per level
	var mergedN [10]int
	for _, e := range l.Epochs {
		for _, si := range e.Segments {
			if si.Level != journal.LevelRaw {
				// The lag is the raw segments'; merged ones are counted apart.
				merged[si.Level] += si.Size
				mergedN[si.Level]++
				continue
			}
			st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(si.Key)))
			if err != nil {
				if os.IsNotExist(err) || err == fs.ErrNotExist {
					continue
				}
				return err
			}
			if st.ModTime().Before(began) {
				continue
			}
			seg, err := s.Journal().ReadSegment(ctx, si)
			if err != nil {
				return err
			}
			segs++
			bytes += si.Size
			for _, en := range seg.Entries {
				t := time.UnixMilli(en.Time)
				if en.Kind == journal.EntrySource && !t.Before(began) && !t.After(ended) {
					lags = append(lags, st.ModTime().Sub(t))
				}
			}
		}
	}
	slices.Sort(lags)
	q := func(p float64) time.Duration {
		if len(lags) == 0 {
			return 0
		}
		return lags[min(len(lags)-1, int(p*float64(len(lags))))].Round(time.Millisecond)
	}
	secs := ended.Sub(began).Seconds()
	fmt.Printf("records_journaled=%d of %d\n", len(lags), written)
	fmt.Printf("lag_p50=%s lag_p99=%s lag_max=%s\n", q(0.5), q(0.99), q(1))
	fmt.Printf("segments=%d bytes=%d bytes_per_second=%.0f bytes_per_day=%.0f\n", segs, bytes, float64(bytes)/secs, float64(bytes)/secs*86400)
	for level, b := range merged {
		if mergedN[level] > 0 {
			fmt.Printf("level_%d_segments=%d bytes=%d\n", level, mergedN[level], b)
		}
	}
	return nil
}

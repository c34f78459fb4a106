// Command cluster runs a seeded 3-broker kfake cluster for the benchmark
// harness (bench/run.sh) as a process of its own, so that what the harness
// measures with /usr/bin/time is only the program under test.
//
// It seeds a Connect cluster of an exact size through internal/connectdemo:
// --records records over --keys live keys in the offsets topic (25
// partitions), every key written records/keys times, spread over
// --connectors stopped FileStreamSource connectors; and --groups stopped
// sink connectors bulk-sink-NNNN whose groups connect-bulk-sink-NNNN each
// hold a committed offset for --group-partitions partitions of the data
// topic bulk-sink-data. Then it prints key=value lines (brokers, control,
// records, keys, live_bytes, ...) and a last line "ready", and runs until
// SIGINT or SIGTERM.
//
// A small HTTP server on --control (loopback) drives the measurements:
//
//	POST /change?percent=1          give 1% of the live keys a new value (plain writes, murmur2 partitions)
//	POST /topic?name=T&partitions=N create an empty compacted topic T (an empty offsets topic to restore into)
//	GET  /requests                  requests the brokers handled since the last reset, by API name (JSON)
//	POST /requests/reset            zero those counts
package main

import (
	"context"
	crand "crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		port            = flag.Int("port", 19092, "first of the three loopback ports the brokers listen on")
		control         = flag.String("control", "127.0.0.1:19099", "loopback address of the control HTTP server")
		records         = flag.Int("records", 400_000, "records to write to the offsets topic; a multiple of --keys")
		keys            = flag.Int("keys", 0, "live keys in the offsets topic (default records/2); a multiple of --connectors")
		connectors      = flag.Int("connectors", 1000, "bulk source connectors the keys are spread over")
		groups          = flag.Int("groups", 2000, "sink connectors, each with its consumer group")
		groupPartitions = flag.Int("group-partitions", 50, "partitions of the data topic each sink group has an offset for")
		seed            = flag.Int64("seed", 1, "seed of the random positions and offsets")
	)
	flag.Parse()
	if *keys == 0 {
		*keys = *records / 2
	}
	switch {
	case *keys <= 0 || *records < *keys || *records%*keys != 0:
		return fmt.Errorf("--records %d must be a positive multiple of --keys %d", *records, *keys)
	case *connectors <= 0 || *keys%*connectors != 0:
		return fmt.Errorf("--keys %d must be a multiple of --connectors %d", *keys, *connectors)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	c, err := connectdemo.NewCluster(kfake.Ports(*port, *port+1, *port+2))
	if err != nil {
		return fmt.Errorf("start kfake on ports %d-%d: %w", *port, *port+2, err)
	}
	defer c.Close()
	counts := newCounter()
	// A Kafka broker asks clients for KIP-714 metrics only when an operator
	// configured a client-metrics subscription (there is none by default);
	// kfake subscribes every client to all of them, and a kgo client then
	// compresses a push with lz4 (two 4 MiB buffers) every 30 s. Answer as
	// a broker without a subscription does: nothing requested, so the
	// measured programs carry no telemetry a default broker would not ask
	// for.
	c.ControlKey(int16(kmsg.GetTelemetrySubscriptions), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		counts.add(kmsg.NameForKey(req.Key()))
		greq := req.(*kmsg.GetTelemetrySubscriptionsRequest)
		resp := greq.ResponseKind().(*kmsg.GetTelemetrySubscriptionsResponse)
		resp.ClientInstanceID = greq.ClientInstanceID
		if resp.ClientInstanceID == [16]byte{} {
			_, _ = crand.Read(resp.ClientInstanceID[:])
		}
		resp.PushIntervalMillis = 300000
		resp.TelemetryMaxBytes = 1 << 20
		return resp, nil, true
	})
	c.Control(func(req kmsg.Request) (kmsg.Response, error, bool) {
		counts.add(kmsg.NameForKey(req.Key()))
		return nil, nil, false // observe only: the broker handles it
	})

	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		return fmt.Errorf("connect to kfake: %w", err)
	}
	defer cl.Close()

	spec := connectdemo.Spec{
		ExtraFileConnectors: *connectors,
		FilesPerConnector:   *keys / *connectors,
		HistoryPerKey:       *records / *keys - 1,
		BulkStopped:         true,
		ExtraSinkGroups:     *groups,
		GroupPartitions:     *groupPartitions,
		Seed:                *seed,
	}
	began := time.Now()
	sctx, cancel := context.WithTimeout(ctx, 20*time.Minute)
	exp, err := connectdemo.Seed(sctx, cl, spec)
	cancel()
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	seeded := time.Since(began)

	offsets := exp.Topics.Offsets
	live := newLiveKeys(exp.LiveKeys(offsets))
	ln, err := net.Listen("tcp", *control)
	if err != nil {
		return fmt.Errorf("listen for control on %s: %w", *control, err)
	}
	srv := &http.Server{Handler: handler(cl, offsets, live, counts, *seed), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	keyBytes, valueBytes := live.sizes()
	fmt.Printf("brokers=%s\n", strings.Join(c.ListenAddrs(), ","))
	fmt.Printf("control=http://%s\n", ln.Addr())
	fmt.Printf("offsets_topic=%s\n", offsets)
	fmt.Printf("records=%d\n", *records)
	fmt.Printf("keys=%d\n", live.len())
	fmt.Printf("live_bytes=%d\n", keyBytes+valueBytes)
	fmt.Printf("key_bytes=%d\nvalue_bytes=%d\n", keyBytes, valueBytes)
	fmt.Printf("groups=%d\ngroup_partitions=%d\n", *groups, *groupPartitions)
	fmt.Printf("seed_seconds=%.1f\n", seeded.Seconds())
	fmt.Println("ready")
	_ = os.Stdout.Sync()

	<-ctx.Done()
	return nil
}

// counter counts requests by API name.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func newCounter() *counter { return &counter{n: map[string]int{}} }

func (c *counter) add(name string) {
	c.mu.Lock()
	c.n[name]++
	c.mu.Unlock()
}

func (c *counter) snapshot(reset bool) map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.n
	if reset {
		c.n = map[string]int{}
	} else {
		out = make(map[string]int, len(c.n))
		for k, v := range c.n {
			out[k] = v
		}
	}
	return out
}

// liveKeys are the live keys of the offsets topic and their values, kept
// up to date by /change.
type liveKeys struct {
	mu     sync.Mutex
	keys   []string
	values map[string][]byte
}

func newLiveKeys(byPart map[int32]map[string][]byte) *liveKeys {
	l := &liveKeys{values: map[string][]byte{}}
	for _, m := range byPart {
		for k, v := range m {
			l.values[k] = v
			l.keys = append(l.keys, k)
		}
	}
	slices.Sort(l.keys) // deterministic choices for a given seed
	return l
}

func (l *liveKeys) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.keys)
}

func (l *liveKeys) sizes() (keys, values int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range l.keys {
		keys += len(k)
		values += len(l.values[k])
	}
	return keys, values
}

func handler(cl *kgo.Client, offsets string, live *liveKeys, counts *counter, seed int64) http.Handler {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6368616e6765))
	mux := http.NewServeMux()
	fail := func(w http.ResponseWriter, code int, err error) {
		slog.Error("control request failed", "err", err)
		http.Error(w, err.Error(), code)
	}
	mux.HandleFunc("POST /change", func(w http.ResponseWriter, r *http.Request) {
		pct, err := strconv.ParseFloat(r.URL.Query().Get("percent"), 64)
		if err != nil || pct <= 0 || pct > 100 {
			fail(w, http.StatusBadRequest, errors.New("percent must be in (0, 100]"))
			return
		}
		live.mu.Lock()
		defer live.mu.Unlock()
		n := int(float64(len(live.keys)) * pct / 100)
		var rs []*kgo.Record
		for _, i := range rng.Perm(len(live.keys))[:n] {
			k := live.keys[i]
			v := fmt.Appendf(nil, `{"position":%d}`, rng.Int64N(1<<30))
			live.values[k] = v
			rs = append(rs, &kgo.Record{Topic: offsets, Key: []byte(k), Value: v})
		}
		if err := cl.ProduceSync(r.Context(), rs...).FirstErr(); err != nil {
			fail(w, http.StatusInternalServerError, fmt.Errorf("produce changes: %w", err))
			return
		}
		fmt.Fprintf(w, "changed=%d\n", n)
	})
	mux.HandleFunc("POST /topic", func(w http.ResponseWriter, r *http.Request) {
		name := r.URL.Query().Get("name")
		parts, err := strconv.Atoi(r.URL.Query().Get("partitions"))
		if name == "" || err != nil || parts <= 0 {
			fail(w, http.StatusBadRequest, errors.New("want name=T&partitions=N"))
			return
		}
		compact := "compact"
		resp, err := kadm.NewClient(cl).CreateTopic(r.Context(), int32(parts), -1, map[string]*string{"cleanup.policy": &compact}, name)
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			fail(w, http.StatusInternalServerError, fmt.Errorf("create topic %q: %w", name, err))
			return
		}
		fmt.Fprintf(w, "created=%s\n", name)
	})
	mux.HandleFunc("GET /requests", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(counts.snapshot(false))
	})
	mux.HandleFunc("POST /requests/reset", func(w http.ResponseWriter, r *http.Request) {
		counts.snapshot(true)
		fmt.Fprintln(w, "reset")
	})
	return mux
}

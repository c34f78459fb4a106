package connect

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/realconnect"
)

// Names of the pipeline every test here runs: FileStreamSource reads in.txt
// into the topic lines (1 partition); FileStreamSink writes lines and
// events (3 partitions, written by the test) to out.txt.
const (
	srcName   = "file-src"
	sinkName  = "file-sink"
	sinkGroup = "connect-file-sink"
	linesT    = "lines"
	eventsT   = "events"
	eventsN   = 3
)

// pipeline is one Kafka cluster, one worker and the two connectors, with
// what the test has fed them.
type pipeline struct {
	t       *testing.T
	c       *realconnect.Cluster
	w       *realconnect.Worker
	rest    *realconnect.REST
	adm     *kadm.Client
	prod    *kgo.Client
	store   string
	in, out string
	lines   int             // lines written to in.txt
	events  [eventsN]int    // events written per partition
	extra   []string        // settings of the source connector
	fed     map[string]bool // every value fed, for the exactly-once check
}

// newPipeline starts a cluster and a worker (opts), with the topics of the
// pipeline, and creates no connector.
func newPipeline(t *testing.T, opts realconnect.Options, store string) *pipeline {
	t.Helper()
	c := realconnect.NewCluster(t)
	return newPipelineOn(t, c, opts, store)
}

func newPipelineOn(t *testing.T, c *realconnect.Cluster, opts realconnect.Options, store string) *pipeline {
	t.Helper()
	c.CreateTopic(t, linesT, 1, false)
	c.CreateTopic(t, eventsT, eventsN, false)
	dir := t.TempDir()
	p := &pipeline{t: t, c: c, adm: kadm.NewClient(c.Client), prod: producer(t, c), store: store,
		in: filepath.Join(dir, "in.txt"), out: filepath.Join(dir, "out.txt"), fed: map[string]bool{}}
	if err := os.WriteFile(p.in, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p.w = realconnect.Start(t, c, opts)
	p.rest = p.w.REST(t)
	return p
}

// env points the binary at this cluster, the store and the worker.
func (p *pipeline) env(extra ...string) []string {
	return env(append([]string{
		"OFFSETKEEPER_BROKERS=" + p.c.Brokers,
		"OFFSETKEEPER_STORE=" + p.store,
		"OFFSETKEEPER_KAFKA_TIMEOUT=20s",
		"OFFSETKEEPER_CONNECT_URL=" + p.w.URL,
	}, extra...)...)
}

func (p *pipeline) bin(want int, args ...string) result {
	p.t.Helper()
	r := run(p.t, p.env(), args...)
	if r.code != want {
		p.t.Fatalf("offsetkeeper %s: want exit %d, got %s", strings.Join(args, " "), want, r)
	}
	return r
}

// snapshot takes a snapshot with the binary and returns its ID.
func (p *pipeline) snapshot() string {
	p.t.Helper()
	return lastLine(p.bin(0, "snapshot").stdout)
}

// createSource creates the FileStreamSource (initial state "" or STOPPED).
func (p *pipeline) createSource(initial string) {
	p.t.Helper()
	p.rest.Create(srcName, realconnect.FileSource(p.in, linesT, p.extra...), initial)
	if initial == "" {
		p.rest.WaitState(srcName, "RUNNING", 1)
	}
}

// createSink creates the FileStreamSink. It reads with
// auto.offset.reset=none, so a sink whose offsets are gone fails instead of
// quietly reading again from the start; the group starts at 0.
func (p *pipeline) createSink() {
	p.t.Helper()
	var offs kadm.Offsets
	offs.Add(kadm.Offset{Topic: linesT, Partition: 0, At: 0, LeaderEpoch: -1})
	for i := int32(0); i < eventsN; i++ {
		offs.Add(kadm.Offset{Topic: eventsT, Partition: i, At: 0, LeaderEpoch: -1})
	}
	if err := p.adm.CommitAllOffsets(context.Background(), sinkGroup, offs); err != nil {
		p.t.Fatalf("commit %s: %v", sinkGroup, err)
	}
	p.rest.Create(sinkName, realconnect.FileSink(p.out, linesT+","+eventsT, "consumer.override.auto.offset.reset=none"), "")
	p.rest.WaitState(sinkName, "RUNNING", 1)
}

// feed appends n lines to in.txt and writes n events to each partition of
// events.
func (p *pipeline) feed(n int) {
	p.t.Helper()
	var lines []string
	for i := 0; i < n; i++ {
		p.lines++
		l := fmt.Sprintf("line-%04d", p.lines)
		lines = append(lines, l)
		p.fed[l] = true
	}
	realconnect.AppendLines(p.t, p.in, lines...)
	var recs []*kgo.Record
	for part := int32(0); part < eventsN; part++ {
		for i := 0; i < n; i++ {
			p.events[part]++
			v := fmt.Sprintf("ev-%d-%04d", part, p.events[part])
			p.fed[v] = true
			recs = append(recs, &kgo.Record{Topic: eventsT, Partition: part, Value: []byte(strconv.Quote(v))})
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		p.t.Fatal(err)
	}
}

// inSize is the byte size of in.txt: where the source's offset ends.
func (p *pipeline) inSize() int64 {
	fi, err := os.Stat(p.in)
	if err != nil {
		p.t.Fatal(err)
	}
	return fi.Size()
}

// settleSource waits until the source's committed position is the end of
// in.txt and lines holds every line.
func (p *pipeline) settleSource() {
	p.t.Helper()
	realconnect.Eventually(p.t, "source offset at the end of in.txt", func() (bool, string) {
		body := p.rest.Offsets(srcName)
		return realconnect.SourcePosition(p.t, body, p.in) == p.inSize(), string(body)
	})
}

// settle waits until both connectors have committed everything fed: the
// source's position is the end of in.txt, the sink's offsets are the ends
// of lines and events, and out.txt holds every record.
func (p *pipeline) settle() {
	p.t.Helper()
	p.settleSource()
	realconnect.Eventually(p.t, "sink offsets at the ends of its topics", func() (bool, string) {
		want := ends(p.t, p.adm, linesT, eventsT)
		if want[linesT+"/0"] != int64(p.lines) {
			return false, "lines end " + mapString(want)
		}
		got := realconnect.SinkOffsets(p.t, p.rest.Offsets(sinkName))
		return mapString(got) == mapString(want), "committed " + mapString(got) + ", ends " + mapString(want)
	})
	total := p.lines + p.events[0] + p.events[1] + p.events[2]
	realconnect.Eventually(p.t, "out.txt holds every record", func() (bool, string) {
		n := len(realconnect.Lines(p.t, p.out))
		return n >= total, fmt.Sprintf("%d lines of %d", n, total)
	})
	p.checkExactlyOnce()
}

// checkExactlyOnce asserts that out.txt holds every value fed exactly once,
// the lines in the order of in.txt, the events in order per partition.
func (p *pipeline) checkExactlyOnce() {
	p.t.Helper()
	seen := map[string]int{}
	nextLine, nextEv := 1, [eventsN]int{1, 1, 1}
	var bad []string
	for _, v := range realconnect.Lines(p.t, p.out) {
		seen[v]++
		if seen[v] > 1 {
			bad = append(bad, "twice: "+v)
			continue
		}
		var part, seq int
		switch {
		case strings.HasPrefix(v, "line-"):
			fmt.Sscanf(v, "line-%d", &seq)
			if seq != nextLine {
				bad = append(bad, fmt.Sprintf("%s where line %d was due", v, nextLine))
			}
			nextLine = seq + 1
		case strings.HasPrefix(v, "ev-"):
			fmt.Sscanf(v, "ev-%d-%d", &part, &seq)
			if seq != nextEv[part] {
				bad = append(bad, fmt.Sprintf("%s where event %d of partition %d was due", v, nextEv[part], part))
			}
			nextEv[part] = seq + 1
		default:
			bad = append(bad, "unexpected: "+v)
		}
	}
	for v := range p.fed {
		if seen[v] == 0 {
			bad = append(bad, "missing: "+v)
		}
	}
	if len(bad) > 0 {
		if len(bad) > 10 {
			bad = append(bad[:10], fmt.Sprintf("... %d more", len(bad)-10))
		}
		p.t.Fatalf("out.txt is not every record exactly once, in order:\n%s", strings.Join(bad, "\n"))
	}
}

// badReset is the mistake: both connectors stopped and their offsets
// deleted through the worker.
func (p *pipeline) badReset(names ...string) {
	p.t.Helper()
	for _, n := range names {
		p.rest.Stop(n)
		// A sink's tasks may still be leaving its group when the status
		// says STOPPED: Connect then says the request can be retried.
		realconnect.Eventually(p.t, "DELETE offsets of "+n, func() (bool, string) {
			r := p.rest.DeleteOffsets(n)
			if r.Code != 200 && !strings.Contains(r.Message(), "can be safely retried") && !strings.Contains(r.Message(), "haven't stopped completely yet") {
				p.t.Fatalf("DELETE offsets of %s: %s", n, r)
			}
			return r.Code == 200, r.String()
		})
	}
}

// resume resumes both connectors and waits until they and their task run.
func (p *pipeline) resume(names ...string) {
	p.t.Helper()
	for _, n := range names {
		p.rest.Resume(n)
	}
	for _, n := range names {
		p.rest.WaitState(n, "RUNNING", 1)
	}
}

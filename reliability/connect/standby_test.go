package connect

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/realconnect"
)

// TestStandbyFailoverRealWorkers is issue 39's acceptance on the real
// Connect 3.8 worker: two kfake clusters, one worker each; on the primary
// FileStreamSource -> lines -> FileStreamSink; lines mirrored to the
// standby record by record (a fresh topic of the same name: the same
// offsets, --standby-translate none); the daemon keeps the standby in
// step. While in.txt keeps growing, the primary's worker is killed
// (SIGKILL), the mirror catches up, the daemon applies the last change, and `failover` resumes
// both connectors on the standby. Then: the standby's lines holds every
// line of in.txt exactly once (the primary's part mirrored, the rest
// written by the standby's source), out.txt holds every line, and the
// lines written twice are no more than the bound failover printed. With
// --standby-translate none the standby's sink starts where the primary's
// committed; by timestamp with a margin it starts earlier (as a
// translation between topics whose offsets differ would), and the lines
// written twice must stay within the bound.
func TestStandbyFailoverRealWorkers(t *testing.T) {
	for _, tc := range []struct {
		name      string
		translate []string
	}{
		{"none", []string{"--standby-translate", "none"}},
		{"timestamp", []string{"--standby-translate", "timestamp", "--standby-translate-margin", "500ms"}},
	} {
		t.Run(tc.name, func(t *testing.T) { testStandbyFailover(t, tc.translate) })
	}
}

func testStandbyFailover(t *testing.T, translate []string) {
	const total, before = 300, 100
	store := "file://" + t.TempDir()
	a := realconnect.NewCluster(t, kfake.ClusterID("primary"))
	b := realconnect.NewCluster(t, kfake.ClusterID("standby"))
	p := newPipelineOn(t, a, realconnect.Options{}, store)
	sb := newPipelineOn(t, b, realconnect.Options{}, store)
	p.createSource("")
	p.createSink()

	mirrorCtx, stopMirror := context.WithCancel(context.Background())
	mirrored := mirrorLines(t, mirrorCtx, a, b)
	defer stopMirror()

	daemonEnv := env("OFFSETKEEPER_BROKERS="+a.Brokers, "OFFSETKEEPER_STORE="+store, "OFFSETKEEPER_KAFKA_TIMEOUT=20s")
	logs := daemon(t, daemonEnv, append([]string{"--schedule", "@every 1h", "--journal-interval", "200ms", "--standby-interval", "200ms",
		"--standby-brokers", b.Brokers, "--standby-connect-url", sb.w.URL}, translate...)...)

	feed := func(from, to int) {
		var lines []string
		for i := from; i <= to; i++ {
			lines = append(lines, fmt.Sprintf("line-%04d", i))
		}
		realconnect.AppendLines(t, p.in, lines...)
	}
	feed(1, before)
	realconnect.Eventually(t, "the standby's source created STOPPED with an offset", func() (bool, string) {
		st, ok := sb.rest.Status(srcName)
		if !ok || st.Connector.State != "STOPPED" {
			return false, fmt.Sprintf("%+v\n%s", st, tailOf(logs(), 5))
		}
		body := sb.rest.Offsets(srcName)
		return realconnect.SourcePosition(t, body, p.in) > 0, string(body)
	})

	// Connect's source is at least once: a line is both in the topic and
	// past the committed offset until the next commit. The worker is
	// killed (SIGKILL: the sink commits nothing more) once the source has
	// committed what it produced, so that no line can come twice into the
	// topics; the sink may be anywhere.
	feed(before+1, before+50)
	p.lines = before + 50
	p.settleSource()
	p.w.Kill()
	// The stream goes on with the primary down: lines no worker has read.
	feed(before+51, before+100)
	pos := primarySourcePosition(t, a, p.in)
	if pos <= 0 {
		t.Fatalf("the primary's source committed no position")
	}
	primaryEnd := ends(t, p.adm, linesT)[linesT+"/0"]
	realconnect.Eventually(t, "the mirror caught up", func() (bool, string) {
		n := mirrored()
		return n == primaryEnd, fmt.Sprintf("%d of %d", n, primaryEnd)
	})
	stopMirror()
	realconnect.Eventually(t, "the daemon applied the primary's last source position", func() (bool, string) {
		body := sb.rest.Offsets(srcName)
		return realconnect.SourcePosition(t, body, p.in) == pos, fmt.Sprintf("want %d: %s", pos, body)
	})

	r := run(t, env("OFFSETKEEPER_STORE="+store, "OFFSETKEEPER_KAFKA_TIMEOUT=20s"), append([]string{"failover",
		"--standby-brokers", b.Brokers, "--standby-connect-url", sb.w.URL, "--output", "json"}, translate...)...)
	if r.code != 0 {
		t.Fatalf("failover: %s", r)
	}
	var doc struct {
		Resumed         []string `json:"resumed"`
		DuplicatesBound int64    `json:"duplicates_bound"`
		DuplicateBounds []struct {
			Topic     string `json:"topic"`
			Partition int32  `json:"partition"`
			Records   int64  `json:"records"`
		} `json:"duplicate_bounds"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("failover --output json: %v\n%s", err, r.stdout)
	}
	if strings.Join(doc.Resumed, ",") != sinkName+","+srcName {
		t.Fatalf("failover resumed %v, want both connectors", doc.Resumed)
	}
	t.Logf("failover: source position %d bytes, %d lines in the primary's topic; duplicates bound %d %+v",
		pos, primaryEnd, doc.DuplicatesBound, doc.DuplicateBounds)
	// And after the failover.
	feed(before+101, total)

	// Every line exactly once in the standby's topic.
	realconnect.Eventually(t, "the standby's lines holds every line", func() (bool, string) {
		n := ends(t, sb.adm, linesT)[linesT+"/0"]
		return n >= total, fmt.Sprintf("%d of %d", n, total)
	})
	checkLines(t, "the standby's lines topic", realconnect.ReadTopic(t, b, linesT, total), total, 0)
	// Every line in out.txt, duplicates within the bound.
	realconnect.Eventually(t, "out.txt holds every line", func() (bool, string) {
		seen := map[string]bool{}
		for _, l := range realconnect.Lines(t, p.out) {
			seen[l] = true
		}
		return len(seen) == total, fmt.Sprintf("%d distinct of %d", len(seen), total)
	})
	dups := checkLines(t, "out.txt", realconnect.Lines(t, p.out), total, doc.DuplicatesBound)
	t.Logf("out.txt: %d lines written twice, bound %d", dups, doc.DuplicatesBound)
}

// checkLines asserts that got holds line-0001..line-<total> each at least
// once and no more than bound of them twice (none more than twice), and
// returns how many came twice.
func checkLines(t *testing.T, what string, got []string, total int, bound int64) int64 {
	t.Helper()
	seen := map[string]int{}
	for _, v := range got {
		seen[strings.Trim(v, `"`)]++
	}
	var dups int64
	var bad []string
	for i := 1; i <= total; i++ {
		l := fmt.Sprintf("line-%04d", i)
		switch n := seen[l]; {
		case n == 0:
			bad = append(bad, "missing: "+l)
		case n == 2:
			dups++
		case n > 2:
			bad = append(bad, fmt.Sprintf("%d times: %s", n, l))
		}
		delete(seen, l)
	}
	for v := range seen {
		bad = append(bad, "unexpected: "+v)
	}
	if dups > bound {
		bad = append(bad, fmt.Sprintf("%d lines twice, more than the bound %d", dups, bound))
	}
	if len(bad) > 0 {
		if len(bad) > 10 {
			bad = append(bad[:10], fmt.Sprintf("... %d more", len(bad)-10))
		}
		t.Fatalf("%s (%d values):\n%s", what, len(got), strings.Join(bad, "\n"))
	}
	return dups
}

// mirrorLines copies the primary's lines to the standby's, record by
// record in order, until ctx ends; it returns how many it has copied. The
// standby's lines is fresh and written by nothing else until the
// failover, so each record lands at its primary offset.
func mirrorLines(t *testing.T, ctx context.Context, a, b *realconnect.Cluster) func() int64 {
	t.Helper()
	src, err := kgo.NewClient(kgo.SeedBrokers(a.KC.ListenAddrs()...), kgo.ConsumeTopics(linesT),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	dst := producer(t, b)
	var mu sync.Mutex
	var n int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer src.Close()
		for ctx.Err() == nil {
			var recs []*kgo.Record
			src.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
				recs = append(recs, &kgo.Record{Topic: linesT, Partition: 0, Key: r.Key, Value: r.Value,
					Headers: r.Headers, Timestamp: r.Timestamp})
			})
			if len(recs) == 0 {
				continue
			}
			if err := dst.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				if ctx.Err() == nil {
					t.Errorf("mirror: %v", err)
				}
				return
			}
			mu.Lock()
			n += int64(len(recs))
			mu.Unlock()
		}
	}()
	t.Cleanup(func() { <-done })
	return func() int64 {
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}

// primarySourcePosition is the last position the primary's offsets topic
// holds for the source's file (read to its end).
func primarySourcePosition(t *testing.T, c *realconnect.Cluster, file string) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.KC.ListenAddrs()...), kgo.ConsumeTopics(c.Topics.Offsets),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	end := ends(t, kadm.NewClient(c.Client), c.Topics.Offsets)
	pos := int64(-1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got := map[int32]int64{}
	for !caughtUp(got, end, c.Topics.Offsets) && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			got[r.Partition] = r.Offset + 1
			if !strings.Contains(string(r.Key), `"`+srcName+`"`) || !strings.Contains(string(r.Key), file) {
				return
			}
			var off struct {
				Position int64 `json:"position"`
			}
			if json.Unmarshal(r.Value, &off) == nil {
				pos = off.Position
			}
		})
	}
	if ctx.Err() != nil {
		t.Fatalf("read %s to its end: %v", c.Topics.Offsets, ctx.Err())
	}
	return pos
}

// caughtUp says whether got (next offset per partition) reached end
// ("topic/p" -> end offset) on every partition of topic.
func caughtUp(got map[int32]int64, end map[string]int64, topic string) bool {
	for k, e := range end {
		var part int32
		if _, err := fmt.Sscanf(strings.TrimPrefix(k, topic+"/"), "%d", &part); err != nil {
			continue
		}
		if e > 0 && got[part] < e {
			return false
		}
	}
	return true
}

// tailOf is the last n lines of s.
func tailOf(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

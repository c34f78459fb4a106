package connect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/offsetkeeper/offsetkeeper/internal/realconnect"
	"github.com/offsetkeeper/offsetkeeper/restore"
)

// Names of the world of the kill test: one FileStreamSource, created
// STOPPED, whose offsets the test writes itself (one key per file, many
// files), so that a restore's transaction spans every partition of the
// offsets topic.
const (
	bulkName  = "bulk-src"
	bulkFiles = 2000
)

// bulkKey is the key Connect's FileStreamSource writes for file.
func bulkKey(i int) string { return fmt.Sprintf(`["%s",{"filename":"/data/f%04d"}]`, bulkName, i) }

// bulkFile is the file of key i, as GET offsets names it.
func bulkFile(i int) string { return fmt.Sprintf("/data/f%04d", i) }

// killWorld is a cluster and a real worker with the bulk source's offsets
// in two states: good (position 1000+i, snapshotted) and bad (every
// position 0: the reset to undo).
type killWorld struct {
	*pipeline
	good, bad string // snapshot IDs of each state
	gate      *restoreGate
}

// restoreGate holds a restore's request to Kafka at a chosen point and
// tells the test it is there: the kill then lands exactly there. It
// intercepts only offsetkeeper's restore transactions (their transactional
// id), never the worker's own requests.
type restoreGate struct {
	point   atomic.Value // string: "half" or "produced"; "" lets all through
	handled atomic.Int64 // records of restore Produce requests let through
	// dead is the producer (id and epoch) of a held Produce request: the
	// process is about to be killed, and a request of it that the broker
	// reads later is lost with it (so the log is what it was at the kill).
	dead   atomic.Int64
	at     chan string // the point, once a request is held there
	mu     sync.Mutex
	killed chan struct{} // closed once the held process is dead
}

func (g *restoreGate) arm(point string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.handled.Store(0)
	g.dead.Store(-1)
	g.killed = make(chan struct{})
	g.point.Store(point)
	return g.killed
}

func (g *restoreGate) killedCh() chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.killed
}

// isRestore reports whether a transactional id is a restore's.
func isRestore(id *string) bool {
	return id != nil && strings.HasPrefix(*id, restore.TransactionalIDPrefix)
}

// batchRecords counts the records of a produce partition's record batches.
func batchRecords(b []byte) int64 {
	var n int64
	for len(b) >= 12 {
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(b); err != nil {
			return n
		}
		n += int64(rb.NumRecords)
		size := 12 + int(rb.Length)
		if size > len(b) {
			return n
		}
		b = b[size:]
	}
	return n
}

// produceProducer is the producer id and epoch of a Produce request's
// first record batch, as one number (-2 without a batch).
func produceProducer(pr *kmsg.ProduceRequest) int64 {
	for _, t := range pr.Topics {
		for _, p := range t.Partitions {
			var rb kmsg.RecordBatch
			if err := rb.ReadFrom(p.Records); err == nil {
				return rb.ProducerID<<16 | int64(uint16(rb.ProducerEpoch))
			}
		}
	}
	return -2
}

// install adds the gate's control functions to the cluster. "half" holds
// the first restore Produce request that arrives once a quarter of the
// bulk keys were let through (the rest of the transaction not yet in the
// log); "produced" holds the restore's EndTxn (every record in the log,
// nothing committed).
func (g *restoreGate) install(c *realconnect.Cluster) {
	hold := func(point string) (kmsg.Response, error, bool) {
		killed := g.killedCh()
		g.point.Store("")
		g.at <- point
		c.KC.SleepControl(func() { <-killed })
		return nil, errors.New("held for the kill"), true
	}
	c.KC.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KC.KeepControl()
		pr := req.(*kmsg.ProduceRequest)
		if !isRestore(pr.TransactionID) {
			return nil, nil, false
		}
		producer := produceProducer(pr)
		if producer == g.dead.Load() {
			return nil, errors.New("the process is killed"), true
		}
		if g.point.Load() == "half" && g.handled.Load() >= bulkFiles/4 {
			g.dead.Store(producer)
			return hold("half")
		}
		for _, t := range pr.Topics {
			for _, p := range t.Partitions {
				g.handled.Add(batchRecords(p.Records))
			}
		}
		return nil, nil, false
	})
	c.KC.ControlKey(int16(kmsg.EndTxn), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KC.KeepControl()
		et := req.(*kmsg.EndTxnRequest)
		if isRestore(&et.TransactionalID) && et.Commit && g.point.Load() == "produced" {
			return hold("produced")
		}
		return nil, nil, false
	})
}

func newKillWorld(t *testing.T) *killWorld {
	t.Helper()
	c := realconnect.NewCluster(t)
	w := &killWorld{gate: &restoreGate{at: make(chan string, 1)}}
	w.gate.point.Store("")
	w.gate.dead.Store(-1)
	w.gate.install(c)
	w.pipeline = newPipelineOn(t, c, realconnect.Options{}, filepath.Join(t.TempDir(), "store"))
	w.rest.Create(bulkName, realconnect.FileSource(filepath.Join(t.TempDir(), "bulk.txt"), linesT), "STOPPED")
	w.rest.WaitState(bulkName, "STOPPED", 0)
	w.write(func(i int) int { return 1000 + i })
	w.waitWorker("good")
	w.good = w.snapshot()
	w.write(func(int) int { return 0 })
	w.waitWorker("bad")
	w.bad = w.snapshot()
	return w
}

// write writes the bulk source's offsets, position pos(i) for file i, as
// the worker would (the Java client's default partitioner: murmur2 of the
// key, which franz-go's default partitioner shares).
func (w *killWorld) write(pos func(int) int) {
	w.t.Helper()
	recs := make([]*kgo.Record, bulkFiles)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: w.c.Topics.Offsets, Key: []byte(bulkKey(i)), Value: []byte(fmt.Sprintf(`{"position":%d}`, pos(i)))}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := w.c.Client.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		w.t.Fatalf("write bulk offsets: %v", err)
	}
}

// workerPositions is the bulk source's offsets as the worker reports them
// (GET /connectors/bulk-src/offsets): file -> position.
func (w *killWorld) workerPositions() map[string]int64 {
	w.t.Helper()
	body := w.rest.Offsets(bulkName)
	var doc struct {
		Offsets []struct {
			Partition map[string]string `json:"partition"`
			Offset    struct {
				Position int64 `json:"position"`
			} `json:"offset"`
		} `json:"offsets"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		w.t.Fatalf("decode GET offsets of %s: %v\n%.400s", bulkName, err, body)
	}
	out := map[string]int64{}
	for _, o := range doc.Offsets {
		out[o.Partition["filename"]] = o.Offset.Position
	}
	return out
}

// judge says which state the worker reports: "good", "bad", or a mix with
// how many files are at their good position.
func (w *killWorld) judge() (state string, good int) {
	w.t.Helper()
	got := w.workerPositions()
	var bad, other int
	for i := range bulkFiles {
		switch got[bulkFile(i)] {
		case int64(1000 + i):
			good++
		case 0:
			bad++
		default:
			other++
		}
	}
	switch {
	case len(got) != bulkFiles || other > 0:
		return fmt.Sprintf("other (%d files, %d at neither position)", len(got), other), good
	case good == bulkFiles:
		return "good", good
	case bad == bulkFiles:
		return "bad", good
	}
	return fmt.Sprintf("mix (%d of %d files restored)", good, bulkFiles), good
}

func (w *killWorld) mustJudge(when, want string) {
	w.t.Helper()
	if got, _ := w.judge(); got != want {
		w.t.Fatalf("%s: the worker's GET offsets shows the %s state, want %s", when, got, want)
	}
}

// waitWorker waits until the worker reports the state named, written by
// the test itself (the worker reads its offsets topic on each GET, but a
// write may be in flight).
func (w *killWorld) waitWorker(name string) {
	w.t.Helper()
	realconnect.Eventually(w.t, "the worker reports the "+name+" offsets", func() (bool, string) {
		s, _ := w.judge()
		return s == name, s
	})
}

// killRestore runs `restore good` and SIGKILLs it once the gate holds it
// at point. It returns the restore's output until then.
func (w *killWorld) killRestore(point string) result {
	w.t.Helper()
	killed := w.gate.arm(point)
	cmd := exec.Command(binary(w.t), "restore", w.good, "--connector", bulkName)
	cmd.Env = w.env()
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &lockedBuilder{b: &out}, &lockedBuilder{b: &errb}
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case got := <-w.gate.at:
		if got != point {
			w.t.Fatalf("held at %s, want %s", got, point)
		}
	case err := <-done:
		close(killed)
		w.t.Fatalf("the restore ended (%v) before it reached %s:\nstdout:\n%s\nstderr:\n%s", err, point, out.String(), errb.String())
	case <-time.After(3 * time.Minute):
		w.t.Fatalf("the restore did not reach %s:\nstdout:\n%s\nstderr:\n%s", point, out.String(), errb.String())
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	err := <-done // reaped: its pid is gone
	close(killed)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || !ee.Sys().(syscall.WaitStatus).Signaled() {
		w.t.Fatalf("the restore was not killed: %v", err)
	}
	return result{code: -1, stdout: out.String(), stderr: errb.String()}
}

type lockedBuilder struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// diffCount is the number of changes `diff ID --live` reports for the
// bulk source, and what it said on stderr.
func (w *killWorld) diffCount(id string) (int, string) {
	w.t.Helper()
	r := w.bin(0, "diff", id, "--live", "--connector", bulkName, "--output", "json")
	var changes []json.RawMessage
	if err := json.Unmarshal([]byte(r.stdout), &changes); err != nil {
		w.t.Fatalf("diff --output json: %v\n%s", err, r)
	}
	return len(changes), r.stderr
}

// repairSaid checks that a command's output names the restore that did
// not finish and the keys it wrote back.
func repairSaid(t *testing.T, what, out string, keys int) {
	t.Helper()
	flat := strings.Join(strings.Fields(out), " ")
	t.Logf("%s says: %.400s", what, flat)
	for _, want := range []string{"did not finish", fmt.Sprintf("left %d keys of topic connect-offsets visible", keys), "wrote back their committed values"} {
		if !strings.Contains(flat, want) {
			t.Errorf("%s does not say %q:\n%s", what, want, out)
		}
	}
}

// TestRealWorkerKilledRestore is issue 41's acceptance on a real Connect
// 3.8 worker with its default settings (no exactly-once source support:
// it reads its offsets topic read_uncommitted). A restore of 2,000 source
// offsets is killed with SIGKILL at two points inside its transaction:
//
//   - half: a quarter or more of its records in the log, the rest not
//     sent. The worker's GET offsets shows a mix (the defect: records of an
//     open or aborted transaction are applied). The next `diff --live`
//     says the restore did not finish, aborts its transaction and writes
//     the committed values back; the worker then reports exactly the state
//     before the restore, after a worker restart too, and diff --live
//     reports every difference from the snapshot (2,000) and none from the
//     state before.
//   - produced: every record in the log, its commit held. The worker
//     reports every key restored though nothing committed; the next
//     `verify` repairs it to the state before.
//
// After each, running the restore again completes it: the worker reports
// the snapshot and diff --live no difference.
func TestRealWorkerKilledRestore(t *testing.T) {
	realconnect.Dir(t)
	t.Parallel()
	w := newKillWorld(t)

	// Killed half way.
	r := w.killRestore("half")
	state, good := w.judge()
	t.Logf("killed half way (%d records let through): the worker reports %s", w.gate.handled.Load(), state)
	if good == 0 || good == bulkFiles {
		t.Fatalf("killed half way, the worker's GET offsets shows the %s state: the kill did not land inside the transaction\n%s", state, r)
	}
	n, said := w.diffCount(w.good)
	repairSaid(t, "diff --live after the kill", said, good)
	if n != bulkFiles {
		t.Errorf("diff %s --live after the repair: %d changes, want %d (the worker reads the state before the restore)", w.good, n, bulkFiles)
	}
	w.mustJudge("after diff --live", "bad")
	if n, _ := w.diffCount(w.bad); n != 0 {
		t.Errorf("diff %s (the state before the restore) --live after the repair: %d changes, want none", w.bad, n)
	}
	w.w.Stop()
	w.w = realconnect.Start(t, w.c, realconnect.Options{})
	w.rest = w.w.REST(t)
	w.rest.WaitState(bulkName, "STOPPED", 0)
	w.mustJudge("after a worker restart", "bad")

	w.bin(0, "restore", w.good, "--connector", bulkName)
	w.mustJudge("after the restore ran again", "good")
	if n, _ := w.diffCount(w.good); n != 0 {
		t.Errorf("diff %s --live after the restore completed: %d changes, want none", w.good, n)
	}

	// Killed with every record written, before its commit.
	w.write(func(int) int { return 0 })
	w.waitWorker("bad")
	r = w.killRestore("produced")
	if state, _ := w.judge(); state != "good" {
		t.Fatalf("killed before its commit, the worker's GET offsets shows the %s state, want every key restored (read_uncommitted)\n%s", state, r)
	}
	v := w.bin(0, "verify") // exit 0: the restore's topics are repaired, nothing left unsettled
	repairSaid(t, "verify after the kill", v.stdout+v.stderr, bulkFiles)
	w.mustJudge("after verify", "bad")
	if n, _ := w.diffCount(w.good); n != bulkFiles {
		t.Errorf("diff %s --live after verify: %d changes, want %d", w.good, n, bulkFiles)
	}
	w.bin(0, "restore", w.good, "--connector", bulkName)
	w.mustJudge("after the restore ran again", "good")
	if n, said := w.diffCount(w.good); n != 0 || strings.Contains(said, "did not finish") {
		t.Errorf("diff %s --live after the restore completed: %d changes, want none; stderr:\n%s", w.good, n, said)
	}
}

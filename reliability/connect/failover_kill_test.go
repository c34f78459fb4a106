package connect

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/realconnect"
)

// failoverGate holds failover at a chosen point until the test has killed
// it there: "apply" and "commit" in the standby cluster's run loop (the
// first Produce of failover's offsets transaction; its EndTxn that would
// commit it), "resume" in a proxy in front of the standby's worker (the
// resume requests past the first few).
type failoverGate struct {
	point    atomic.Value // string; "" lets everything through
	signaled atomic.Bool  // at was told, since the point was armed
	at       chan string
	mu       sync.Mutex
	killed   chan struct{}
	resumes  atomic.Int64 // resume requests let through while "resume" is armed
	// firstDone ends once the resumes let through are answered: only then
	// is the process killed, so that the worker has done each or none.
	firstDone sync.WaitGroup
	// resumed are the connectors the worker answered a resume for, through
	// the proxy.
	resumed sync.Map
}

// resumesBeforeKill is how many resume requests the "resume" point lets
// through before it holds one.
const resumesBeforeKill = 4

func (g *failoverGate) arm(point string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.killed = make(chan struct{})
	g.resumes.Store(0)
	g.signaled.Store(false)
	if point == "resume" {
		g.firstDone.Add(resumesBeforeKill)
	}
	g.point.Store(point)
	return g.killed
}

// hold tells the test failover is at point (once) and waits until it is
// killed; the point stays armed meanwhile, so that no request of the
// process about to die gets past it.
func (g *failoverGate) hold(point string) {
	g.mu.Lock()
	killed := g.killed
	g.mu.Unlock()
	if g.signaled.CompareAndSwap(false, true) {
		g.at <- point
	}
	<-killed
}

func (g *failoverGate) install(c *realconnect.Cluster) {
	// Held in the run loop (not with SleepControl): the whole standby
	// cluster waits for the kill, as kill_test.go does.
	c.KC.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KC.KeepControl()
		if pr := req.(*kmsg.ProduceRequest); isRestore(pr.TransactionID) && g.point.Load() == "apply" {
			g.hold("apply")
			return nil, errors.New("the process is killed"), true
		}
		return nil, nil, false
	})
	c.KC.ControlKey(int16(kmsg.EndTxn), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KC.KeepControl()
		if et := req.(*kmsg.EndTxnRequest); isRestore(&et.TransactionalID) && et.Commit && g.point.Load() == "commit" {
			g.hold("commit")
			return nil, errors.New("the process is killed"), true
		}
		return nil, nil, false
	})
}

// proxy is the worker's REST API behind the gate's "resume" point.
func (g *failoverGate) proxy(t *testing.T, worker string) string {
	u, err := url.Parse(worker)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(resp *http.Response) error {
		if name, ok := strings.CutSuffix(strings.TrimPrefix(resp.Request.URL.Path, "/connectors/"), "/resume"); ok &&
			resp.Request.Method == http.MethodPut && resp.StatusCode == http.StatusAccepted {
			g.resumed.Store(name, true)
		}
		return nil
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/resume") && g.point.Load() == "resume" {
			if g.resumes.Add(1) > resumesBeforeKill {
				g.firstDone.Wait()
				g.hold("resume")
				http.Error(w, "killed", http.StatusServiceUnavailable)
				return
			}
			defer g.firstDone.Done()
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// killAt starts failover, waits until the gate holds it at point, kills
// it (SIGKILL) and waits until it is gone.
func (g *failoverGate) killAt(t *testing.T, fw *failoverWorld, point string, args []string) {
	t.Helper()
	killed := g.arm(point)
	defer g.point.Store("")
	cmd := exec.Command(binary(t), args...)
	cmd.Env = fw.env()
	out := &lockedBuilder{b: &strings.Builder{}}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	select {
	case <-g.at:
	case <-exited:
		close(killed)
		t.Fatalf("failover ended before it reached %q: %s", point, out.String())
	case <-time.After(5 * time.Minute):
		cmd.Process.Kill()
		<-exited
		close(killed)
		t.Fatalf("failover never reached %q: %s", point, out.String())
	}
	cmd.Process.Kill() // SIGKILL
	<-exited
	close(killed)
	t.Logf("failover killed at %q", point)
}

// TestFailoverKilledAnywhereRealWorker: on the real Connect 3.8 worker
// with exactly-once source support (exactly.once.source.support=enabled,
// each connector exactly.once.support=required), the standby is in step
// with an earlier state (3 lines of each file), the primary moves on (5
// lines) and failover is killed (SIGKILL) in turn: with its offsets
// transaction open (fence stored), with every record of it in the log but
// not committed, and after it resumed a few connectors. Then a rerun of
// failover completes (exit 0, every connector resumed), and each connector
// delivers to the standby's topic exactly the lines of its file after the
// state's position, once: it resumed where the state says, not where the
// earlier sync left it, and the connectors resumed before the kill were
// neither rewound nor resumed twice.
func TestFailoverKilledAnywhereRealWorker(t *testing.T) {
	realconnect.Dir(t)
	const n = 12
	fw := newFailoverWorld(t, n, realconnect.Options{Set: []string{"exactly.once.source.support=enabled"}}, "exactly.once.support=required")
	g := &failoverGate{at: make(chan string, 1)}
	g.point.Store("")
	g.install(fw.b)
	proxied := g.proxy(t, fw.w.URL)

	// The standby in step with an earlier state: positions after 3 lines.
	fw.writePositions(t, func(i int) int64 { return linesLength(i, 3) })
	fw.syncStandby(t)
	// The primary moves on to the state's positions; the daemon journals
	// it but keeps no standby any more (its last sync is the RPO).
	fw.writePositions(t, statePosition)
	fw.journalUntilBehind(t)

	args := append([]string{"failover", "--output", "json"}, fw.standbyFlags(proxied)...)
	for _, point := range []string{"apply", "commit", "resume"} {
		g.killAt(t, fw, point, args)
	}
	var resumed []string
	g.resumed.Range(func(k, _ any) bool { resumed = append(resumed, k.(string)); return true })
	slices.Sort(resumed)
	if len(resumed) != resumesBeforeKill {
		t.Fatalf("the killed run resumed %v, want %d connectors", resumed, resumesBeforeKill)
	}
	realconnect.Eventually(t, "the connectors the killed run resumed run", func() (bool, string) {
		n, example := fw.running(t)
		return n == len(resumed), example
	})
	r := run(t, fw.env(), args...)
	if r.code != 0 {
		t.Fatalf("failover run again: %s", r)
	}
	var doc failoverDoc
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("failover --output json: %v\n%s", err, r.stdout)
	}
	var want []string
	for i := range n {
		want = append(want, connName(i))
	}
	if !slices.Equal(doc.Resumed, want) {
		t.Errorf("the rerun's resumed: %v, want every connector", doc.Resumed)
	}
	if !slices.Equal(doc.ResumedBefore, resumed) {
		t.Errorf("the rerun says the earlier run resumed %v, want %v", doc.ResumedBefore, resumed)
	}
	fw.waitRunning(t, 10*time.Minute)
	fw.checkDelivered(t)
}

// linesLength is the length of the first k lines of file i.
func linesLength(i, k int) int64 {
	var n int64
	for j := 1; j <= k; j++ {
		n += int64(len(fileLine(i, j)) + 1)
	}
	return n
}

// writePositions writes the primary's offsets: position pos(i) of file i.
func (fw *failoverWorld) writePositions(t *testing.T, pos func(int) int64) {
	t.Helper()
	var recs []*kgo.Record
	for i := range fw.n {
		file, _ := json.Marshal(fw.file(i))
		key := []byte(`["` + connName(i) + `",{"filename":` + string(file) + `}]`)
		recs = append(recs, &kgo.Record{Topic: fw.a.Topics.Offsets, Partition: connectdemo.Murmur2Partition(key, fw.a.Topics.OffsetsPartitions),
			Key: key, Value: []byte(`{"position":` + strconv.FormatInt(pos(i), 10) + `}`)})
	}
	if err := producer(t, fw.a).ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// journalUntilBehind runs the daemon without a standby until the store's
// last state is one the standby lacks: failover --dry-run would write
// every connector's offset.
func (fw *failoverWorld) journalUntilBehind(t *testing.T) {
	t.Helper()
	daemon(t, fw.env(), "--schedule", "@every 1h", "--journal-interval", "500ms")
	realconnect.Eventually(t, "the store holds the primary's new positions", func() (bool, string) {
		r := run(t, fw.env(), append([]string{"failover", "--dry-run", "--output", "json"}, fw.standbyFlags(fw.w.URL)...)...)
		var doc struct {
			Counts struct{ SourceWrites int } `json:"counts"`
		}
		json.Unmarshal([]byte(r.stdout), &doc)
		return r.code == 0 && doc.Counts.SourceWrites == fw.n, r.String()
	})
}

package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim/connectsimtest"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
)

// TestFailbackMapsMirrorCopiesBack: after a MirrorMaker 2 failover the
// standby's sinks commit offsets on a.orders, MirrorMaker 2's copy of the
// primary's orders (alias a). Failing back, the old primary has no
// a.orders (MirrorMaker 2 mirrors no topic back to the cluster it came
// from): the failback named those partitions and left them, with no way
// to map them (failover had no --map-topic), and resumed the sinks from
// the offsets the old primary's groups held before the disaster. Now the
// dry run and the run print the failback that maps them
// (--map-topic a.orders=orders, the target's own topic), the run holds
// the sinks STOPPED meanwhile, and the printed command, run as printed,
// writes their offsets translated into orders and resumes them.
func TestFailbackMapsMirrorCopiesBack(t *testing.T) {
	w, st, back, brc := failedOver(t)
	standbyOffsets := groupOffsets(t, w.bcl, connectdemo.GroupSinkES)
	args := []string{"failback", "--store", st, "--standby-brokers", w.primary, "--standby-translate", "timestamp",
		"--standby-connect-url", back.URL}
	out, _ := mustCLI(t, 0, append(args, "--dry-run")...)
	fits(t, "failback --dry-run", out)
	dry := pasted(out, "offsetkeeper failback ")
	if !strings.Contains(dry, "--map-topic a.orders=orders") || !strings.Contains(flat(out), "would not resume: ") {
		t.Fatalf("the dry run prints no failback that maps a.orders back to orders, or does not say it holds the sink:\n%s", out)
	}
	out, _ = mustCLI(t, 0, args...)
	fits(t, "failback", out)
	again := pasted(out, "offsetkeeper failback ")
	if again != dry || !strings.Contains(flat(out), "not resumed: ") {
		t.Fatalf("the run prints %q, the dry run %q; or it does not hold the sink:\n%s", again, dry, out)
	}
	if st := connectorState(t, brc, connectdemo.ConnSinkES); st != connectrest.StateStopped {
		t.Fatalf("%s is %s on the old primary before the printed failback, want STOPPED", connectdemo.ConnSinkES, st)
	}
	out, _ = mustCLI(t, 0, shellArgs(t, again)...)
	t.Logf("the printed failback:\n%s", out)
	if strings.Contains(out, "could not be translated") {
		t.Errorf("the printed failback still misses partitions:\n%s", out)
	}
	mappedBack(t, standbyOffsets, groupOffsets(t, w.acl, connectdemo.GroupSinkES))
	diff := pasted(out, "offsetkeeper diff ")
	// The fence keeps the mapping: the printed diff tells its differences.
	if dout, _ := mustCLI(t, 0, shellArgs(t, diff)...); !strings.Contains(flat(dout), "differences are the translation's, expected; nothing else differs") {
		t.Errorf("the printed %s does not take the mapping's differences as the translation's:\n%s", diff, dout)
	}
	if st := connectorState(t, brc, connectdemo.ConnSinkES); st != connectrest.StateRunning {
		t.Errorf("%s is %s on the old primary after the printed failback, want RUNNING", connectdemo.ConnSinkES, st)
	}
}

// topicPart is a topic's partition.
type topicPart struct {
	topic string
	part  int32
}

// groupOffsets are group's committed offsets on cl's cluster.
func groupOffsets(t *testing.T, cl *kgo.Client, group string) map[topicPart]int64 {
	t.Helper()
	resp, err := kadm.NewClient(cl).FetchOffsets(context.Background(), group)
	if err != nil {
		t.Fatal(err)
	}
	out := map[topicPart]int64{}
	resp.Each(func(o kadm.OffsetResponse) { out[topicPart{o.Topic, o.Partition}] = o.At })
	return out
}

// connectorState is the state Connect reports of name.
func connectorState(t *testing.T, rc *connectrest.Client, name string) string {
	t.Helper()
	states, err := rc.States(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return states[name].Connector.State
}

// failedOver is a standby world failed over (MirrorMaker 2, alias a) with
// the standby's state in the store st, and the old primary back, its
// connectors STOPPED on its Connect (back, brc): ready to fail back.
func failedOver(t *testing.T) (*standbyWorld, string, *connectsimtest.Server, *connectrest.Client) {
	t.Helper()
	w := newStandbyWorld(t, 0)
	ctx := context.Background()
	st := "file://" + t.TempDir()
	mustCLI(t, 0, "snapshot", "--brokers", w.primary, "--store", st)
	mustCLI(t, 0, append([]string{"failover", "--store", st}, w.flags()...)...)
	// The standby is the primary now; its state goes to the same store.
	mustCLI(t, 0, "snapshot", "--brokers", w.standby, "--store", st)
	back, err := connectsimtest.Start(w.acl, connectsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(back.Close)
	brc, err := connectrest.New(connectrest.Config{URLs: []string{back.URL}})
	if err != nil {
		t.Fatal(err)
	}
	conns, err := brc.Connectors(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for name := range conns {
		if err := brc.Stop(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	return w, st, back, brc
}

// mappedBack checks that got, the old primary's offsets of a group, are
// standby's on the copies a.<topic> mapped back to <topic>: timestamps
// find the last consumed record's copy in the topic (the standby's offset
// less one, less the mirror's shift of 50 filler records) and re-deliver
// it, the translation's rule.
func mappedBack(t *testing.T, standby, got map[topicPart]int64) {
	t.Helper()
	n := 0
	for tp, o := range standby {
		if topic, ok := strings.CutPrefix(tp.topic, "a."); ok {
			n++
			if want := o - 51; got[topicPart{topic, tp.part}] != want {
				t.Errorf("%s/%d on the old primary: %d, want %d (%s/%d at %d on the standby)", topic, tp.part, got[topicPart{topic, tp.part}], want, tp.topic, tp.part, o)
			}
		}
	}
	if n == 0 {
		t.Fatalf("the standby's group holds no offsets of a.*: %v", standby)
	}
}

// TestStandbyDaemonMapsCopiesBack: before a failback the new primary's
// daemon keeps the old primary in step, as a standby. Its sinks' offsets
// on a.orders could not be carried there (no such topic: MirrorMaker 2
// mirrors nothing back to its cluster), and the daemon had no setting
// to name the copy: they stayed out of step. Now
// OFFSETKEEPER_STANDBY_MAP_TOPIC (--standby-map-topic's twin) maps them
// back, and the daemon brings every connector in step.
func TestStandbyDaemonMapsCopiesBack(t *testing.T) {
	w, st, back, _ := failedOver(t)
	t.Setenv("OFFSETKEEPER_STANDBY_MAP_TOPIC", "a.orders=orders,a.clicks=clicks,a.legacy.customers=legacy.customers")
	addr := freeAddr(t)
	dctx, cancel := context.WithCancel(context.Background())
	var stderr testkit.SyncBuffer
	exit := make(chan int, 1)
	go func() {
		exit <- run(dctx, []string{"daemon", "--brokers", w.standby, "--store", st, "--schedule", "@every 1h",
			"--journal-interval", "200ms", "--standby-interval", "200ms", "--listen", addr, "--log-format", "json",
			"--standby-brokers", w.primary, "--standby-translate", "timestamp", "--standby-connect-url", back.URL}, &bytes.Buffer{}, &stderr)
	}()
	defer func() { cancel(); <-exit }()
	deadline := time.Now().Add(60 * time.Second)
	for m := standbyMetrics(addr); m[`offsetkeeper_standby_connectors{state="out_of_step"}`] > 0 ||
		m[`offsetkeeper_standby_connectors{state="in_step"}`] == 0 || m["offsetkeeper_standby_translation_misses"] > 0; m = standbyMetrics(addr) {
		if time.Now().After(deadline) {
			t.Fatalf("the old primary never got in step: %v\n%s", m, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	mappedBack(t, groupOffsets(t, w.bcl, connectdemo.GroupSinkES), groupOffsets(t, w.acl, connectdemo.GroupSinkES))
}

// TestStandbyDaemonNamesItsMapSetting: without the mapping, the daemon
// keeping the old primary in step names the connectors out of step with
// the setting that maps their copies (--standby-map-topic, its env twin),
// not restore's --map-topic, which its operator cannot give the daemon.
func TestStandbyDaemonNamesItsMapSetting(t *testing.T) {
	w, st, back, _ := failedOver(t)
	addr := freeAddr(t)
	dctx, cancel := context.WithCancel(context.Background())
	var stderr testkit.SyncBuffer
	exit := make(chan int, 1)
	go func() {
		exit <- run(dctx, []string{"daemon", "--brokers", w.standby, "--store", st, "--schedule", "@every 1h",
			"--journal-interval", "200ms", "--standby-interval", "200ms", "--listen", addr, "--log-format", "json",
			"--standby-brokers", w.primary, "--standby-translate", "timestamp", "--standby-connect-url", back.URL}, &bytes.Buffer{}, &stderr)
	}()
	defer func() { cancel(); <-exit }()
	deadline := time.Now().Add(60 * time.Second)
	for m := standbyMetrics(addr); m[`offsetkeeper_standby_connectors{state="out_of_step"}`] == 0; m = standbyMetrics(addr) {
		if time.Now().After(deadline) {
			t.Fatalf("no connector out of step without the mapping: %v\n%s", m, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	resp, err := http.Get("http://" + addr + "/api/standby")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(body), "the daemon maps them with --standby-map-topic ") || !strings.Contains(string(body), "a.orders=orders") {
		t.Errorf("/api/standby does not name --standby-map-topic for the connectors out of step:\n%s", body)
	}
}

package main

import (
	"context"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim/connectsimtest"
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
	w := newStandbyWorld(t, 0)
	ctx := context.Background()
	st := "file://" + t.TempDir()
	mustCLI(t, 0, "snapshot", "--brokers", w.primary, "--store", st)
	mustCLI(t, 0, append([]string{"failover", "--store", st}, w.flags()...)...)
	// The standby is the primary now; its state goes to the same store.
	mustCLI(t, 0, "snapshot", "--brokers", w.standby, "--store", st)
	standbyOffsets := groupOffsets(t, w.bcl, connectdemo.GroupSinkES)

	// The old primary is back, its connectors kept stopped.
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
	// Timestamps find the last consumed record's copy in orders (the
	// standby's offset less one, less the mirror's shift of 50 filler
	// records), and re-deliver it: the translation's rule.
	got := groupOffsets(t, w.acl, connectdemo.GroupSinkES)
	n := 0
	for tp, o := range standbyOffsets {
		if topic, ok := strings.CutPrefix(tp.topic, "a."); ok {
			n++
			if want := o - 51; got[topicPart{topic, tp.part}] != want {
				t.Errorf("%s/%d on the old primary: %d, want %d (%s/%d at %d on the standby)", topic, tp.part, got[topicPart{topic, tp.part}], want, tp.topic, tp.part, o)
			}
		}
	}
	if n == 0 {
		t.Fatalf("the standby's group %s holds no offsets of a.*: %v", connectdemo.GroupSinkES, standbyOffsets)
	}
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

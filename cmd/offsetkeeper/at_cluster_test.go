package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// jdbcOrders is the key of the seeded JDBC connector's orders table.
var jdbcOrders = key(connectdemo.ConnJDBC, `{"protocol":"1","table":"shop.orders"}`)

// setOrders writes the JDBC connector's orders position on c, as its
// worker would.
func (c *cluster) setOrders(position string) {
	c.t.Helper()
	c.produce(&kgo.Record{Topic: connectdemo.DefaultOffsetsTopic, Key: jdbcOrders, Value: []byte(`{"incrementing":` + position + `}`)})
}

// orders is the JDBC connector's orders position on c now.
func (c *cluster) orders() string {
	c.t.Helper()
	for _, o := range c.capture().SourceOffsetsOf(connectdemo.ConnJDBC) {
		if string(o.Key) == string(jdbcOrders) {
			return string(o.Value)
		}
	}
	c.t.Fatalf("no orders offset on the cluster")
	return ""
}

// waitCovered waits until the newest journal epoch of each cluster in
// the store of c holds what was written before at (a segment or a flush
// mark after it).
func (c *cluster) waitCovered(at time.Time, clusters ...string) {
	c.t.Helper()
	ctx := context.Background()
	s, err := store.OpenStore(ctx, c.store)
	if err != nil {
		c.t.Fatal(err)
	}
	defer s.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		infos, err := s.Snapshots().List(ctx)
		if err != nil {
			c.t.Fatal(err)
		}
		of := map[string]string{}
		for _, i := range infos {
			of[i.ID] = i.ClusterID
		}
		cov, err := s.Journal().Coverage(ctx)
		if err != nil {
			c.t.Fatal(err)
		}
		done := 0
		for _, id := range clusters {
			for i := len(cov) - 1; i >= 0; i-- {
				if of[cov[i].Epoch] == id {
					if cov[i].To.After(at) || c.markedAfter(cov[i], at) {
						done++
					}
					break
				}
			}
		}
		if done == len(clusters) {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("the journals of %v do not cover %v after 30s: %+v", clusters, at, cov)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestAtSharedStore: the standby/failback runbook has two clusters'
// daemons journal into one store, their epochs overlapping in time. A
// moment was read from the newest epoch covering it, whichever cluster's:
// restore --at on one cluster could write the other's offsets, diff --at
// compared the wrong state. Now restore --at and diff --at read the live
// cluster's journal; a command that cannot tell (show, offline; a restore
// into a third cluster) refuses, exit 2, naming both clusters with their
// spans and printing the command that picks each, which runs as printed;
// the daemon's undo advice names its cluster and runs as printed.
func TestAtSharedStore(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	a := newCluster(t, &spec, kfake.ClusterID("cluster-a"))
	b := newCluster(t, &spec, kfake.ClusterID("cluster-b"))
	b.store = a.store
	a.stopAll()
	b.stopAll()
	logsA := a.startDaemon("--journal-interval", "1s", "--schedule", "@every 1h")
	a.waitJournal(time.Now(), logsA)
	addrB := freeAddr(t)
	logsB := b.startDaemon("--journal-interval", "1s", "--schedule", "@every 1h", "--listen", addrB)
	b.waitCovered(time.Now(), "cluster-a", "cluster-b")

	a.setOrders("1111")
	b.setOrders("2222")
	at := moment()
	a.waitCovered(at, "cluster-a", "cluster-b")
	a.setOrders("1") // a rewind the journal of a catches
	b.setOrders("4444")
	late := moment()
	a.waitCovered(late, "cluster-a", "cluster-b")
	T := restore.FormatMoment(at)

	// The rewind is a's: a restore of a's state after it warns of it and
	// prints the undo in a's journal; one of b's does not (it warned of a's
	// reset, with an undo reading b's journal).
	out, _ := a.mustRun(0, "restore", "--at", restore.FormatMoment(late), "--connector", connectdemo.ConnJDBC, "--dry-run")
	check := ""
	for _, l := range strings.Split(joinContinued(out), "\n") {
		if s, ok := strings.CutPrefix(strings.TrimSpace(l), "check: "); ok {
			check = s
		}
	}
	if !strings.Contains(out, "was reset") || !strings.Contains(check, "--from-cluster cluster-a") {
		t.Errorf("restore --at after a's rewind, on a: no warning with an undo in a's journal:\n%s", out)
	} else if code, o, e := a.runPrinted(check); code != 0 || !strings.Contains(o, `{"incrementing":1111}`) {
		t.Errorf("%s: exit %d, want the plan back to 1111\n%s%s", check, code, o, e)
	}
	if out, _ := b.mustRun(0, "restore", "--at", restore.FormatMoment(late), "--connector", connectdemo.ConnJDBC, "--dry-run"); strings.Contains(out, "was reset") {
		t.Errorf("restore --at on b warns of a's reset:\n%s", out)
	}

	// diff --at against each live cluster reads that cluster's journal.
	for _, tc := range []struct {
		c         *cluster
		want, not string
	}{{a, "1111", "2222"}, {b, "2222", "1111"}} {
		out, _ := tc.c.mustRun(0, "diff", "--at", T, "--live", "--connector", connectdemo.ConnJDBC)
		if !strings.Contains(out, tc.want) || strings.Contains(out, tc.not) {
			t.Errorf("diff --at %s --live on the cluster whose state was %s:\n%s", T, tc.want, out)
		}
	}

	// show is offline: both clusters' journals cover T, it cannot tell.
	code, out, stderr := a.run("show", "--at", T, "--connector", connectdemo.ConnJDBC)
	if code != exitUsage || !strings.Contains(flat(stderr), "cluster cluster-a (journal ") || !strings.Contains(flat(stderr), "cluster cluster-b (journal ") {
		t.Fatalf("show --at in a shared store: exit %d, want %d naming both clusters\n%s%s", code, exitUsage, out, stderr)
	}
	if out, _ := a.mustRun(0, "list"); !strings.Contains(flat(out), "the journal holds epochs of 2 clusters") {
		t.Errorf("list does not say whose the journal's epochs are:\n%s", out)
	}
	cmd := withSuffix(t, checkAdvice(t, "show --at", stderr), "--from-cluster cluster-b")
	code, out, stderr = a.runPrinted(cmd)
	if code != 0 || !strings.Contains(out, `{"incrementing":2222}`) {
		t.Errorf("%s: exit %d, want cluster b's state\n%s%s", cmd, code, out, stderr)
	}

	// b's page: its plan is b's state with the command that reads b's
	// journal, and its events are b's (a's rewind is not among them).
	code, body, err := httpGet("http://" + addrB + "/api/timeline?at=" + T + "&connector=" + connectdemo.ConnJDBC)
	var tl struct {
		Events []struct{ Kind string } `json:"events"`
		Plan   struct {
			Commands restore.Commands `json:"commands"`
			Error    string           `json:"error"`
		} `json:"plan"`
	}
	if err != nil || code != 200 || json.Unmarshal([]byte(body), &tl) != nil {
		t.Fatalf("b's page: %d %v\n%s", code, err, body)
	}
	if tl.Plan.Error != "" || !strings.Contains(body, "2222") || strings.Contains(body, "1111") || len(tl.Events) > 0 ||
		!strings.HasSuffix(tl.Plan.Commands.DryRun, "--from-cluster cluster-b --dry-run") && !strings.Contains(tl.Plan.Commands.DryRun, "--from-cluster cluster-b ") {
		t.Errorf("b's page plan at %s is not b's, or its command names no cluster:\n%s", T, body)
	}
	if code, out, stderr := b.runPrinted(tl.Plan.Commands.DryRun); code != 0 || !strings.Contains(out, `{"incrementing":2222}`) {
		t.Errorf("%s: exit %d, want b's plan\n%s%s", tl.Plan.Commands.DryRun, code, out, stderr)
	}

	// drill --at drills into a scratch cluster: it talks to neither.
	code, out, stderr = a.run("drill", "--at", T)
	if code != exitUsage || !strings.Contains(flat(stderr), "cluster cluster-b (journal ") {
		t.Fatalf("drill --at in a shared store: exit %d, want %d naming both clusters\n%s%s", code, exitUsage, out, stderr)
	}
	cmd = withSuffix(t, checkAdvice(t, "drill --at", stderr), "--from-cluster cluster-a")
	if code, out, stderr := a.runPrinted(cmd); code != 0 || !strings.Contains(out, "cluster-a") {
		t.Errorf("%s: exit %d, want a passing drill of cluster a's state\n%s%s", cmd, code, out, stderr)
	}

	// The daemon of a logged the rewind's undo, naming its cluster.
	undo := reportedUndo(t, logsA)
	if !strings.Contains(undo, "--from-cluster cluster-a") {
		t.Errorf("the daemon's undo names no cluster in a shared store: %s", undo)
	}
	if code, out, stderr := a.runPrinted(undo); code != 0 {
		t.Fatalf("%s: exit %d\n%s%s", undo, code, out, stderr)
	}
	if got := a.orders(); got != `{"incrementing":1111}` {
		t.Errorf("after the daemon's undo cluster a holds %s, want 1111", got)
	}

	// events names the cluster of each and its commands read that journal.
	evOut, _ := a.mustRun(0, "events", "--since", "-10m", "--connector", connectdemo.ConnJDBC, "--brokers", a.brokers)
	evCheck := ""
	for _, l := range strings.Split(evOut, "\n") {
		if s, ok := strings.CutPrefix(strings.TrimSpace(l), "check: "); ok {
			evCheck = s
		}
	}
	if !strings.Contains(evOut, "cluster: cluster-a") || !strings.Contains(evCheck, "--from-cluster cluster-a") ||
		!strings.Contains(flat(evOut), "the store holds the journals of several clusters") {
		t.Errorf("events in a shared store:\n%s", evOut)
	} else if code, out, stderr := a.runPrinted(evCheck); code != 0 || !strings.Contains(out, "into its cluster cluster-a") {
		t.Errorf("%s: exit %d\n%s%s", evCheck, code, out, stderr)
	}

	// restore --at on b restores b's state, not a's.
	b.mustRun(0, "restore", "--at", T, "--connector", connectdemo.ConnJDBC)
	if got := b.orders(); got != `{"incrementing":2222}` {
		t.Errorf("restore --at on cluster b wrote %s, want its own 2222", got)
	}

	// A new cluster (disaster recovery) matches neither: refused, each
	// printed choice runs as printed.
	d := newCluster(t, &spec, kfake.ClusterID("cluster-dr"))
	d.store = a.store
	d.stopAll()
	seeded := d.orders()
	code, out, stderr = d.run("restore", "--at", T, "--connector", connectdemo.ConnJDBC, "--allow-other-cluster")
	if code != exitUsage || !strings.Contains(flat(stderr), "the live cluster, cluster-dr, is none of them") || !strings.Contains(flat(stderr), "nothing was written") {
		t.Fatalf("restore --at into a third cluster: exit %d, want %d\n%s%s", code, exitUsage, out, stderr)
	}
	if got := d.orders(); got != seeded {
		t.Errorf("the refused restore wrote %s over %s", got, seeded)
	}
	cmd = withSuffix(t, checkAdvice(t, "restore --at", stderr), "--from-cluster cluster-a")
	if code, out, stderr := d.runPrinted(cmd); code != 0 {
		t.Fatalf("%s: exit %d\n%s%s", cmd, code, out, stderr)
	}
	if got := d.orders(); got != `{"incrementing":1111}` {
		t.Errorf("restore --from-cluster cluster-a into the new cluster wrote %s, want 1111", got)
	}
	_ = logsB
}

// reportedUndo is the undo of the last "reset seen" a daemon logged.
func reportedUndo(t *testing.T, logs *testkit.SyncBuffer) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		undo := ""
		for _, l := range strings.Split(logs.String(), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "reset seen" {
				undo, _ = m["undo"].(string)
			}
		}
		if undo != "" {
			return undo
		}
		if time.Now().After(deadline) {
			t.Fatalf("no reset seen logged:\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestAtOneClusterStoreDR: a disaster recovery into a new cluster from a
// store of the old cluster alone reads the old cluster's journal, as it
// always did: no refusal, nothing about clusters.
func TestAtOneClusterStoreDR(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	a := newCluster(t, &spec, kfake.ClusterID("cluster-old"))
	a.stopAll()
	logs := a.startDaemon("--journal-interval", "1s", "--schedule", "@every 1h")
	a.waitJournal(time.Now(), logs)
	a.setOrders("1111")
	at := moment()
	a.waitJournal(at, logs)
	a.setOrders("3333")
	a.waitJournal(moment(), logs)

	d := newCluster(t, &spec, kfake.ClusterID("cluster-new"))
	d.store = a.store
	d.stopAll()
	out, stderr := d.mustRun(0, "restore", "--at", restore.FormatMoment(at), "--connector", connectdemo.ConnJDBC, "--allow-other-cluster")
	if strings.Contains(out+stderr, "from-cluster") {
		t.Errorf("a store of one cluster talks of choosing one:\n%s%s", out, stderr)
	}
	if got := d.orders(); got != `{"incrementing":1111}` {
		t.Errorf("DR restore --at wrote %s, want 1111", got)
	}
	// --from-cluster of a cluster the store does not hold is a usage error.
	code, _, stderr := d.run("restore", "--at", restore.FormatMoment(at), "--from-cluster", "cluster-new", "--allow-other-cluster")
	if code != exitUsage || !strings.Contains(flat(stderr), "cluster cluster-old") {
		t.Errorf("--from-cluster of no snapshot: exit %d, want %d naming the store's cluster\n%s", code, exitUsage, stderr)
	}
}

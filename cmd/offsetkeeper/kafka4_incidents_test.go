package main

// Incidents rehearsed on a cluster that answers as Kafka 4.x does
// (testkit.Kafka4Groups: DescribeGroups answers a consumer-protocol group
// GROUP_ID_NOT_FOUND, apache/kafka GroupMetadataManager.describeGroups),
// each command the tool prints run as printed.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// resetSeen is the undo and the note of the daemon's first "reset seen"
// line of kind for connector in its JSON log, "" when there is none.
func resetSeen(logs, connector, kind string) (undo, note string) {
	for _, l := range strings.Split(logs, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) != nil || m["msg"] != "reset seen" || m["connector"] != connector || m["kind"] != kind {
			continue
		}
		undo, _ = m["undo"].(string)
		note, _ = m["note"].(string)
		return undo, note
	}
	return "", ""
}

// resetToEarliest is what kafka-consumer-groups.sh --reset-offsets
// --to-earliest --execute sends for orders (all written from offset 0):
// Admin.alterConsumerGroupOffsets, an OffsetCommit with no member and
// generation -1, which Kafka 4.x takes into a consumer-protocol group only
// while it has no members (modern/consumer/ConsumerGroup.java
// validateOffsetCommit: memberEpoch < 0 && members().isEmpty(); kfake
// does the same).
func (c *cluster) resetToEarliest(group string) {
	c.t.Helper()
	c.commit(group, kadm.Offset{Topic: "orders", Partition: 0, At: 0}, kadm.Offset{Topic: "orders", Partition: 1, At: 0},
		kadm.Offset{Topic: "orders", Partition: 2, At: 0})
}

// TestKafka4ResetToEarliestUndo: a bad --reset-offsets --to-earliest on a
// stopped sink whose group uses the consumer protocol. The daemon's
// "reset seen" undo, run as printed, brings the offsets back; the plan's
// expiry note follows Kafka's rule for a consumer-protocol group (each
// offset offsets.retention.minutes after its commit:
// ConsumerGroup.offsetExpirationCondition uses commitTimestampMs). It
// said the classic rule, "after it became Empty (committing does not
// reset that clock)", which is false for this group. The line's note
// names the connector's stop request.
func TestKafka4ResetToEarliestUndo(t *testing.T) {
	c := kafka4Sink(t)
	const group = "connect-orders-sink"
	logs := c.startDaemon("--journal-interval", "1s", "--schedule", "@every 1h")
	c.waitJournal(moment(), logs)
	before := c.groupOffsets(group)
	c.resetToEarliest(group)
	if slices.Equal(c.groupOffsets(group), before) {
		t.Fatal("the reset changed nothing: the test proves nothing")
	}
	var undo, note string
	until(t, 30*time.Second, "the daemon's reset seen line", logs, func() bool {
		undo, note = resetSeen(logs.String(), "orders-sink", snapshot.EventSinkRewound)
		return undo != ""
	})
	// The daemon has no Connect URL: its note says which connector to stop
	// (it said PUT /connectors/NAME/stop).
	if !strings.Contains(note, "PUT /connectors/orders-sink/stop") {
		t.Errorf("the daemon's note does not name the connector to stop: %q", note)
	}
	code, out, stderr := c.runPrinted(undo)
	if code != 0 {
		t.Fatalf("%s: exit %d\n%s\n%s", undo, code, out, stderr)
	}
	if got := c.groupOffsets(group); !slices.Equal(got, before) {
		t.Errorf("after the undo the group is at %v, want %v", got, before)
	}
	words := strings.Join(strings.Fields(out), " ")
	if !strings.Contains(words, `group "connect-orders-sink" (consumer protocol) has no members: Kafka deletes each of its offsets offsets.retention.minutes=10080 after it was committed, those this restore commits at`) ||
		strings.Contains(words, "does not reset that clock") {
		t.Errorf("the undo's expiry note does not follow Kafka's rule for a consumer-protocol group:\n%s", out)
	}
}

// TestKafka4RestoreZombieMember: the sink connector is STOPPED, but a
// consumer is still in its consumer-protocol group (a worker cut off from
// its Connect group that still runs the task, say). The broker would
// refuse the restore's commit (UNKNOWN_MEMBER_ID: validateOffsetCommit,
// above). The refusal (exit 3, nothing written) names the member's client
// and host and says that no task of this Connect is in the group: it
// advised stopping a connector already stopped, and --stop-connectors.
// With --stop-connectors the wait for the group to empty names them too,
// and says what they are;
// once the member leaves, the restore goes through.
func TestKafka4RestoreZombieMember(t *testing.T) {
	c := kafka4Sink(t)
	const group = "connect-orders-sink"
	id := c.snapshot()
	snapOffsets := c.groupOffsets(group)
	c.produceOrders(6)
	m := testkit.JoinConsumerGroup(t, c.kc, group, "orders")
	moved := c.groupOffsets(group)
	if slices.Equal(moved, snapOffsets) {
		t.Fatal("the member did not move the group: the restore would have nothing to write")
	}

	for _, args := range [][]string{{"restore", id}, {"restore", id, "--dry-run"}} {
		out, stderr := c.mustRun(exitRefused, args...)
		words := strings.Join(strings.Fields(out+stderr), " ")
		for _, want := range []string{
			`sink group "connect-orders-sink" has 1 live member (state Stable) though the connector is STOPPED with no tasks, so no running task of this Connect cluster should be in it (members: client "kgo" on host 127.0.0.1:`,
			"stop it there, wait until the group is Empty, then run the same restore again",
		} {
			if !strings.Contains(words, want) {
				t.Errorf("%v: the refusal lacks %q:\n%s\n%s", args, want, out, stderr)
			}
		}
		if strings.Contains(words, "stop it first") || strings.Contains(words, "--stop-connectors") {
			t.Errorf("%v: the refusal advises stopping a connector that is stopped:\n%s\n%s", args, out, stderr)
		}
	}
	srv := c.startConnect(connectsim.Options{Version: "4.1.0"})
	_, stderr := c.mustRun(1, "restore", id, "--connect-url", srv.URL, "--stop-connectors", "--resume", "--stop-timeout", "1s")
	if !strings.Contains(stderr, `group "connect-orders-sink": Stable with 1 member (client "kgo" on host 127.0.0.1:`) ||
		!strings.Contains(stderr, "the connectors were STOPPED before this restore, so a member that stays in their group is a consumer elsewhere") {
		t.Errorf("the wait for the group does not name its member, or what it is:\n%s", stderr)
	}
	if got := c.groupOffsets(group); !slices.Equal(got, moved) {
		t.Errorf("a refused restore wrote: offsets %v, were %v", got, moved)
	}

	m.Leave()
	c.mustRun(0, "restore", id)
	if got := c.groupOffsets(group); !slices.Equal(got, snapOffsets) {
		t.Errorf("after the restore the group is at %v, want the snapshot's %v", got, snapOffsets)
	}
}

// TestKafka4DRIntoFreshCluster: disaster recovery of a 4.x cluster whose
// sink groups use the consumer protocol into an empty 4.x cluster, each
// printed command run as printed (kafka-topics.sh is not here: the topic
// it creates is created with the same partitions). The group restored is
// one the commit creates: Kafka makes it a classic group without a
// protocol type (GroupMetadataManager getOrMaybeCreateClassicGroup), whose
// offsets expire by commit time (ClassicGroup.offsetExpirationCondition),
// and the note says so. When the connector starts with
// group.protocol=consumer, the broker converts the empty classic group and
// keeps its offsets (GroupMetadataManager.getOrMaybeCreateConsumerGroup →
// maybeDeleteEmptyClassicGroup: ClassicGroup.createGroupTombstoneRecords
// deletes the group metadata only); the next snapshot has it as a
// consumer-protocol group with those offsets.
func TestKafka4DRIntoFreshCluster(t *testing.T) {
	src := kafka4Sink(t)
	const group = "connect-orders-sink"
	want := src.groupOffsets(group)
	id := src.snapshot()
	dst := newCluster(t, nil, kfake.ClusterID("dr-kafka4"))
	testkit.Kafka4Groups(t, dst.kc)
	dst.store = src.store

	_, stderr := dst.mustRun(1, "restore", id, "--allow-other-cluster")
	cmd := pasted(stderr, "offsetkeeper restore "+id)
	if !strings.Contains(cmd, "--create-topics") {
		t.Fatalf("no restore --create-topics to run:\n%s", stderr)
	}
	code, out, stderr := dst.runPrinted(cmd)
	if topics := pasted(stderr, "kafka-topics.sh"); code != 1 || !strings.Contains(topics, "--create --topic orders --partitions 3") {
		t.Fatalf("%s: exit %d, want 1 naming the sink topic to create\n%s\n%s", cmd, code, out, stderr)
	}
	if _, err := dst.adm.CreateTopic(context.Background(), 3, 1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	cmd = pasted(stderr, "offsetkeeper restore "+id)
	code, out, stderr = dst.runPrinted(cmd)
	if code != 0 {
		t.Fatalf("%s: exit %d\n%s\n%s", cmd, code, out, stderr)
	}
	if got := dst.groupOffsets(group); !slices.Equal(got, want) {
		t.Errorf("after the DR restore the group is at %v, want %v", got, want)
	}
	words := strings.Join(strings.Fields(out), " ")
	if !strings.Contains(words, `group "connect-orders-sink" does not exist: the restore's commit creates it without members or protocol type: Kafka deletes each of its offsets offsets.retention.minutes=10080 after it was committed`) {
		t.Errorf("the expiry note does not follow Kafka's rule for the group the commit creates:\n%s", out)
	}

	for i := range 9 { // the same records (MirrorMaker's copies), on the same partitions
		dst.produce(&kgo.Record{Topic: "orders", Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte("v")})
	}
	d, err := dst.adm.DescribeConsumerGroups(context.Background(), group)
	if err == nil && d[group].Err == nil {
		t.Fatalf("the group is a consumer-protocol group before any member joined: the test proves nothing (%+v)", d[group])
	}
	testkit.JoinConsumerGroup(t, dst.kc, group, "orders").Leave()
	if got := dst.groupOffsets(group); !slices.Equal(got, want) {
		t.Errorf("after the connector joined with the consumer protocol the group is at %v, want %v", got, want)
	}
	show, _ := dst.mustRun(0, "show", dst.snapshot())
	if !strings.Contains(show, "group connect-orders-sink (consumer protocol)") {
		t.Errorf("the snapshot after the conversion does not have the group as consumer protocol:\n%s", show)
	}
}

// TestKafka4MigrationFromClassic: a migration from a 3.x cluster (the
// sink's group classic) to a 4.x cluster whose connector runs with
// consumer.override.group.protocol=consumer, while the target's daemon
// journals. The restore says the config differs in that key and when the
// offsets it commits expire (by commit time: the group it creates has no
// protocol type); the connector's consumer-protocol member converts the
// group (see TestKafka4DRIntoFreshCluster) and moves it on, which the
// journal does not take for a reset: events lists the restore alone.
func TestKafka4MigrationFromClassic(t *testing.T) {
	const group = "connect-orders-sink"
	config := func(c *cluster, extra string) {
		c.t.Helper()
		if err := connectdemo.CreateTopics(context.Background(), c.cl, connectdemo.DefaultTopics()); err != nil {
			c.t.Fatal(err)
		}
		if _, err := c.adm.CreateTopic(context.Background(), 3, 1, nil, "orders"); err != nil {
			c.t.Fatal(err)
		}
		c.produceOrders(9)
		c.produce(&kgo.Record{Topic: connectdemo.DefaultConfigsTopic, Key: []byte("connector-orders-sink"),
			Value: []byte(`{"properties":{"connector.class":"io.confluent.connect.s3.S3SinkConnector","name":"orders-sink","topics":"orders","tasks.max":"1"` + extra + `}}`)})
		c.stopConnectors("orders-sink")
	}
	src := newCluster(t, nil) // Kafka 3.x: classic groups only
	config(src, "")
	src.commit(group, kadm.Offset{Topic: "orders", Partition: 0, At: 1}, kadm.Offset{Topic: "orders", Partition: 1, At: 2}, kadm.Offset{Topic: "orders", Partition: 2, At: 3})
	want := src.groupOffsets(group)
	id := src.snapshot()

	dst := newCluster(t, nil, kfake.ClusterID("kafka4-target"))
	testkit.Kafka4Groups(t, dst.kc)
	dst.store = src.store
	config(dst, `,"consumer.override.group.protocol":"consumer"`)
	logs := dst.startDaemon("--journal-interval", "1s", "--schedule", "@every 1h")
	dst.waitJournal(moment(), logs)

	out, _ := dst.mustRun(0, "restore", id, "--allow-other-cluster")
	words := strings.Join(strings.Fields(out), " ")
	for _, w := range []string{"(consumer.override.group.protocol differ)",
		`group "connect-orders-sink" does not exist: the restore's commit creates it without members or protocol type: Kafka deletes each of its offsets`} {
		if !strings.Contains(words, w) {
			t.Errorf("the restore does not say %q:\n%s", w, out)
		}
	}
	if got := dst.groupOffsets(group); !slices.Equal(got, want) {
		t.Fatalf("after the restore the group is at %v, want %v", got, want)
	}
	dst.waitJournal(moment(), logs)
	m := testkit.JoinConsumerGroup(t, dst.kc, group, "orders") // consumes from the restored offsets to the ends
	m.Leave()
	moved := dst.groupOffsets(group)
	if slices.Equal(moved, want) {
		t.Fatal("the connector's member did not move the group: the test proves nothing")
	}
	dst.waitJournal(moment(), logs)
	js, _ := dst.mustRun(0, "events", "--output", "json")
	var evs []eventJSON
	if err := json.Unmarshal([]byte(js), &evs); err != nil {
		t.Fatalf("events --output json: %v\n%s", err, js)
	}
	for _, e := range evs {
		if e.Kind != snapshot.EventRestored {
			t.Errorf("events lists %s for %s: the conversion to the consumer protocol is no reset\n%s", e.Kind, e.Connector, js)
		}
	}
	if len(evs) == 0 {
		t.Errorf("events does not list the restore:\n%s", js)
	}
}

// TestKafka4Drill: a drill of a 4.x cluster whose sink runs with a
// consumer-protocol member passes with Connect's view compared, and the
// drill show it prints runs as printed.
func TestKafka4Drill(t *testing.T) {
	c := kafka4Sink(t)
	c.snapshot()
	c.produceOrders(6)
	testkit.JoinConsumerGroup(t, c.kc, "connect-orders-sink", "orders")
	c.produce(&kgo.Record{Topic: connectdemo.DefaultConfigsTopic, Key: []byte("commit-orders-sink"), Value: []byte(`{"tasks":1}`)},
		&kgo.Record{Topic: connectdemo.DefaultConfigsTopic, Key: []byte("target-state-orders-sink"), Value: []byte(`{"state":"STARTED","state.v2":"STARTED"}`)})
	srv := c.startConnect(connectsim.Options{Version: "4.1.0"})
	out, _ := c.mustRun(0, "drill", "--connect-url", srv.URL)
	for _, w := range []string{"PASSED", "1 sink groups (3 offsets)", "ok   complete"} {
		if !strings.Contains(out, w) {
			t.Errorf("drill lacks %q:\n%s", w, out)
		}
	}
	show := pasted(out, "offsetkeeper drill show ")
	code, shown, stderr := c.runPrinted(show)
	if code != 0 || !strings.Contains(strings.ToUpper(shown), "PASSED") {
		t.Errorf("%s: exit %d\n%s\n%s", show, code, shown, stderr)
	}
}

// TestKafka4MemberJoinsDuringRestore: the connector is STOPPED and its
// consumer-protocol group Empty when the restore checks it, and a consumer
// joins before the restore commits (the ControlKey holds the commit until
// it has joined; kfake then answers as Kafka does: UNKNOWN_MEMBER_ID for a
// commit from outside a group with members, modern/consumer/ConsumerGroup
// validateOffsetCommit). The error names the member's client and host and
// what to stop (it said "stop the connector first" of a stopped one);
// once the member has left, the same restore goes through.
func TestKafka4MemberJoinsDuringRestore(t *testing.T) {
	c := kafka4Sink(t)
	const group = "connect-orders-sink"
	id := c.snapshot()
	want := c.groupOffsets(group)
	c.produceOrders(6)
	c.resetToEarliest(group)
	arrived, joined := make(chan struct{}), make(chan struct{})
	var once sync.Once
	c.kc.ControlKey(int16(kmsg.OffsetCommit), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.kc.KeepControl()
		if r := req.(*kmsg.OffsetCommitRequest); r.Group == group && r.Generation < 0 {
			once.Do(func() { c.kc.SleepControl(func() { close(arrived); <-joined }) })
		}
		return nil, nil, false
	})
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, stdout, stderr := c.run("restore", id)
		done <- result{code, stdout, stderr}
	}()
	select {
	case <-arrived:
	case r := <-done:
		t.Fatalf("the restore committed nothing: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	m := testkit.JoinConsumerGroup(t, c.kc, group, "orders")
	close(joined)
	r := <-done
	words := strings.Join(strings.Fields(r.stderr), " ")
	for _, w := range []string{`UNKNOWN_MEMBER_ID`, `the group has live members (client "kgo" on host 127.0.0.1:`, "which joined after the restore's check",
		"if it is STOPPED, the member is a consumer elsewhere", "nothing of this restore was written"} {
		if !strings.Contains(words, w) {
			t.Errorf("exit %d; the error lacks %q:\n%s\n%s", r.code, w, r.stdout, r.stderr)
		}
	}
	if r.code != 1 {
		t.Errorf("exit %d, want 1", r.code)
	}
	m.Leave()
	c.mustRun(0, "restore", id)
	if got := c.groupOffsets(group); !slices.Equal(got, want) {
		t.Errorf("after the restore the group is at %v, want %v", got, want)
	}
}

// TestKafka4ConsumerGroupOffsetsExpire: a stopped sink whose group uses
// the consumer protocol stays stopped past offsets.retention.minutes=1
// after its offsets were last committed, while the daemon journals. Kafka
// deletes each offset of such a group a retention after its commit
// (ConsumerGroup.offsetExpirationCondition: commitTimestampMs), then the
// group. kfake expires by max(became Empty, last commit); the last commit
// here is after the group became Empty, so both rules give the same time.
// The daemon warns first ("rule":"commit-time"), and records the
// vanishing as sink-expired: it recorded sink-deleted, whose undo left the
// connector stopped and the offsets to expire again. events' undo, run as
// printed, restores them and resumes the connector, whose member joins
// with the consumer protocol again.
func TestKafka4ConsumerGroupOffsetsExpire(t *testing.T) {
	c := kafka4Sink(t, kfake.BrokerConfigs(map[string]string{
		"offsets.retention.minutes":           "1",
		"offsets.retention.check.interval.ms": "200",
	}))
	const conn, group = "orders-sink", "connect-orders-sink"
	ctx := context.Background()
	srv := c.startConnect(connectsim.Options{Version: "4.1.0", SinkMembers: true, MemberLeaveDelay: 50 * time.Millisecond})
	rc := restClient(t, srv)
	logs := c.startDaemon("--journal-interval", "300ms", "--schedule", "@every 1h", "--connect-url", srv.URL)
	before := moment()
	c.waitJournal(before, logs)
	c.waitJournal(moment(), logs) // the guard watches the group: it sees the commit below happen
	// The task's last commit, as the connector stopped.
	c.produceOrders(6)
	var last []kadm.Offset
	for p, end := range c.ends("orders")["orders"] {
		last = append(last, kadm.Offset{Topic: "orders", Partition: p, At: end})
	}
	c.commit(group, last...)
	want := c.groupOffsets(group)
	c.waitJournal(moment(), logs)

	var line string
	until(t, 90*time.Second, "the expiry warning", logs, func() bool {
		for l := range strings.Lines(logs.String()) {
			if strings.Contains(l, `"msg":"sink offsets expire"`) && strings.Contains(l, `"group":"`+group+`"`) {
				line = l
				return true
			}
		}
		return false
	})
	if !strings.Contains(line, `"rule":"commit-time"`) {
		t.Errorf("the warning does not follow Kafka's rule for a consumer-protocol group: %s", line)
	}
	if got := c.groupOffsets(group); !slices.Equal(got, want) {
		t.Fatalf("the offsets were %v when the daemon warned, want %v", got, want)
	}
	until(t, 3*time.Minute, "the offsets to expire", logs, func() bool { return len(c.groupOffsets(group)) == 0 })
	expired := waitSinkExpired(t, c, logs, group, before, srv.URL)
	if !strings.HasSuffix(expired.Undo, " --start") {
		t.Errorf("the undo of sink-expired does not resume the connector: %s", expired.Undo)
	}
	code, out, stderr := c.runPrinted(expired.Undo)
	if code != 0 {
		t.Fatalf("%s: exit %d\n%s\n%s", expired.Undo, code, out, stderr)
	}
	if got := c.groupOffsets(group); !slices.Equal(got, want) {
		t.Errorf("after the undo the group is at %v, want %v", got, want)
	}
	until(t, 30*time.Second, "the connector's consumer-protocol member back", logs, func() bool {
		_, _ = rc.Status(ctx, conn) // the fake starts members as it answers
		d, err := c.adm.DescribeConsumerGroups(ctx, group)
		return err == nil && d[group].Err == nil && len(d[group].Members) == 1
	})
}

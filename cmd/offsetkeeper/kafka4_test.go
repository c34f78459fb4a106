package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim/connectsimtest"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// kafka4Sink is a cluster that answers DescribeGroups as Kafka 4.x does,
// with a stopped sink connector orders-sink whose tasks use the consumer
// group protocol (KIP-848): its group connect-orders-sink has consumed
// and committed all of orders, and its member has left.
func kafka4Sink(t *testing.T, opts ...kfake.Opt) *cluster {
	t.Helper()
	c := newCluster(t, nil, opts...)
	testkit.Kafka4Groups(t, c.kc)
	if err := connectdemo.CreateTopics(context.Background(), c.cl, connectdemo.DefaultTopics()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.adm.CreateTopic(context.Background(), 3, 1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	c.produceOrders(9)
	c.produce(&kgo.Record{Topic: connectdemo.DefaultConfigsTopic, Key: []byte("connector-orders-sink"),
		Value: []byte(`{"properties":{"connector.class":"io.confluent.connect.s3.S3SinkConnector","name":"orders-sink","topics":"orders",` +
			`"tasks.max":"1","consumer.override.group.protocol":"consumer"}}`)})
	c.stopConnectors("orders-sink")
	testkit.JoinConsumerGroup(t, c.kc, "connect-orders-sink", "orders").Leave()
	return c
}

// produceOrders writes n records to orders, spread over its partitions.
func (c *cluster) produceOrders(n int) {
	c.t.Helper()
	for i := range n {
		c.produce(&kgo.Record{Topic: "orders", Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte("v")})
	}
}

// TestKafka4ConsumerGroupSnapshotRestore: on a cluster that answers as
// Kafka 4.x, a stopped sink whose group uses the consumer protocol is in
// snapshot and show exactly (a capture once dropped it in silence: its
// DescribeGroups answer is GROUP_ID_NOT_FOUND). While a member is back in
// the group, restore refuses with exit 3, naming the group, and writes
// nothing (the running check once counted such a group as empty); once
// the group is empty again, the restore brings the snapshot's offsets back
// exactly.
func TestKafka4ConsumerGroupSnapshotRestore(t *testing.T) {
	c := kafka4Sink(t)
	const group = "connect-orders-sink"
	snapOffsets := c.groupOffsets(group)
	if len(snapOffsets) == 0 {
		t.Fatal("the consumer group committed nothing: the test proves nothing")
	}
	id := c.snapshot()
	out, _ := c.mustRun(0, "show", id)
	if !regexp.MustCompile(`(?m)^  group connect-orders-sink \(consumer protocol\) +Empty +0 members$`).MatchString(out) {
		t.Errorf("show does not give the group as a consumer-protocol group, Empty:\n%s", out)
	}
	for _, o := range snapOffsets {
		tp, off, _ := strings.Cut(o, "=")
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(tp) + ` +` + off + `$`).MatchString(out) {
			t.Errorf("show lacks %s:\n%s", o, out)
		}
	}
	js, _ := c.mustRun(0, "show", id, "--output", "json")
	if !strings.Contains(js, `"type": "consumer"`) && !strings.Contains(js, `"type":"consumer"`) {
		t.Errorf("show --output json lacks the group's type:\n%.2000s", js)
	}

	// A task runs again (a zombie, the connector still STOPPED in its
	// config) and moves the group on.
	c.produceOrders(6)
	m := testkit.JoinConsumerGroup(t, c.kc, group, "orders")
	moved := c.groupOffsets(group)
	if slices.Equal(moved, snapOffsets) {
		t.Fatal("the group did not move on: the restore would have nothing to write")
	}
	_, stderr := c.mustRun(3, "restore", id)
	if !strings.Contains(stderr, `sink group "connect-orders-sink" has 1 live member`) {
		t.Errorf("the refusal does not name the group and its member:\n%s", stderr)
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

// TestKafka4SnapshotNamesUnreadGroup: a sink connector's group the capture
// cannot describe is named on stderr and in --output json, the snapshot
// is stored with it in unread_groups, and the exit code is 4.
func TestKafka4SnapshotNamesUnreadGroup(t *testing.T) {
	c := kafka4Sink(t)
	// A member again: a group listed Empty is not described at all.
	testkit.JoinConsumerGroup(t, c.kc, "connect-orders-sink", "orders")
	h := c.kc.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ConsumerGroupDescribe}, Err: kerr.GroupAuthorizationFailed, Count: -1})
	t.Cleanup(h.Remove)
	out, stderr := c.mustRun(exitIncomplete, "snapshot", "--output", "json")
	var res snapshotResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("stdout is not the snapshot document: %v\n%s", err, out)
	}
	if len(res.Unread) != 1 || res.Unread[0].Group != "connect-orders-sink" || res.Unread[0].Connector != "orders-sink" ||
		!strings.Contains(res.Unread[0].Reason, "GROUP_AUTHORIZATION_FAILED") {
		t.Errorf("unread_groups %+v", res.Unread)
	}
	if flat := strings.Join(strings.Fields(stderr), " "); !strings.Contains(flat, `sink connector "orders-sink" (group "connect-orders-sink") not captured`) ||
		!strings.Contains(flat, "run offsetkeeper snapshot again") {
		t.Errorf("stderr does not name the group left out:\n%s", stderr)
	}
	if ids := c.storeIDs(); !slices.Contains(ids, res.ID+" manual") {
		t.Errorf("the snapshot %s is not stored (%v)", res.ID, ids)
	}
	show, _ := c.mustRun(0, "show", res.ID)
	if !strings.Contains(strings.Join(strings.Fields(show), " "), `unread sink connector "orders-sink" (group "connect-orders-sink") not captured`) {
		t.Errorf("show does not name the group left out:\n%s", show)
	}
	if h.Hits() == 0 {
		t.Fatal("the fault never fired: the test proves nothing")
	}
}

// TestKafka4ConsumerGroupEvents: while the daemon journals, a
// consumer-protocol sink group rewound and then deleted appears in events
// (the journal's tail once read it as gone all along, and saw neither);
// the deletion's command, run as printed, brings the group back as it was.
func TestKafka4ConsumerGroupEvents(t *testing.T) {
	c := kafka4Sink(t)
	const group = "connect-orders-sink"
	logs := c.startDaemon("--journal-interval", "1s", "--schedule", "@every 1h", "--listen", freeAddr(t))
	c.waitJournal(time.Now(), logs)
	since := moment()

	before := c.groupOffsets(group)
	c.commit(group, kadm.Offset{Topic: "orders", Partition: 0, At: 0}, kadm.Offset{Topic: "orders", Partition: 1, At: 0}, kadm.Offset{Topic: "orders", Partition: 2, At: 0})
	rewound := c.groupOffsets(group)
	if slices.Equal(rewound, before) {
		t.Fatalf("the rewind changed nothing (%v): the test proves nothing", before)
	}
	c.waitJournal(moment(), logs)
	if _, err := c.adm.DeleteGroup(context.Background(), group); err != nil {
		t.Fatal(err)
	}
	if got := c.groupOffsets(group); len(got) != 0 {
		t.Fatalf("the group was not deleted: %v", got)
	}
	c.waitJournal(moment(), logs)

	out, _ := c.mustRun(0, "events", "--output", "json", "--since", since.Format(time.RFC3339Nano), "--connector", "orders-sink")
	var evs []eventJSON
	if err := json.Unmarshal([]byte(out), &evs); err != nil {
		t.Fatalf("events --output json: %v\n%s", err, out)
	}
	kinds := map[string]eventJSON{}
	for _, e := range evs {
		kinds[e.Kind] = e
	}
	if _, ok := kinds[snapshot.EventSinkRewound]; !ok {
		t.Errorf("events lacks the rewind of the consumer-protocol group:\n%s", out)
	}
	del, ok := kinds[snapshot.EventSinkDeleted]
	if !ok || del.Undo == "" {
		t.Fatalf("events lacks the deletion of the consumer-protocol group, or its command:\n%s", out)
	}
	c.mustRun(0, strings.Fields(strings.TrimPrefix(del.Undo, "offsetkeeper "))...)
	if got := c.groupOffsets(group); !slices.Equal(got, rewound) {
		t.Errorf("after %q the group is at %v, want %v (as it was before the deletion)", del.Undo, got, rewound)
	}
}

// TestSnapshotConnectURLPluginsAndUnlisted: snapshot --connect-url records
// each connector's plugin version from GET /connector-plugins, and a sink
// connector Connect runs whose config is in a config topic the capture did
// not read is named in unread_groups (exit 4), never left out in silence.
func TestSnapshotConnectURLPluginsAndUnlisted(t *testing.T) {
	c := kafka4Sink(t)
	ctx := context.Background()
	compact := map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}
	if _, err := c.adm.CreateTopic(ctx, 1, 1, compact, "other-configs"); err != nil {
		t.Fatal(err)
	}
	srv, err := connectsimtest.Start(c.cl, connectsim.Options{ConfigTopic: "other-configs", Version: "4.1.0",
		Plugins: []connectsim.Plugin{{Class: "io.confluent.connect.s3.S3SinkConnector", Type: "sink", Version: "10.5.0"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	out, stderr := c.mustRun(0, "snapshot", "--connect-url", srv.URL, "--output", "json")
	var res snapshotResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	js, _ := c.mustRun(0, "show", res.ID, "--output", "json")
	if !strings.Contains(js, `"plugin_version":"10.5.0"`) {
		t.Errorf("the snapshot does not record the sink's plugin version:\n%.3000s\n%s", js, stderr)
	}

	rc, err := connectrest.New(connectrest.Config{URLs: []string{srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rc.CreateConnector(ctx, "elsewhere-sink", map[string]string{"connector.class": "io.confluent.connect.s3.S3SinkConnector", "topics": "orders"}, connectrest.StateStopped); err != nil {
		t.Fatal(err)
	}
	out, stderr = c.mustRun(exitIncomplete, "snapshot", "--connect-url", srv.URL, "--output", "json")
	res = snapshotResult{}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(res.Unread) != 1 || res.Unread[0].Connector != "elsewhere-sink" || res.Unread[0].Group != "connect-elsewhere-sink" ||
		!strings.Contains(res.Unread[0].Reason, "check --config-topic") {
		t.Errorf("unread_groups %+v\n%s", res.Unread, stderr)
	}
}

// TestCreateConnectorsPreflightExit3: restore --create-connectors into a
// Connect whose workers lack the sink's plugin, and into one whose
// override policy refuses its consumer.override.group.protocol: the dry
// run and the run exit 3 naming the connector, the key and the worker
// setting, and nothing is written.
func TestCreateConnectorsPreflightExit3(t *testing.T) {
	src := kafka4Sink(t)
	id := src.snapshot()
	for _, tc := range []struct {
		name string
		opts connectsim.Options
		want []string
	}{
		{"missing plugin", connectsim.Options{Version: "4.0.0", Plugins: []connectsim.Plugin{{Class: "org.apache.kafka.connect.file.FileStreamSinkConnector", Type: "sink", Version: "4.0.0"}}},
			[]string{`connector "orders-sink": plugin io.confluent.connect.s3.S3SinkConnector is not installed on the target workers`, "plugin.path"}},
		{"override refused", connectsim.Options{Version: "4.2.0", OverridePolicy: connectsim.PolicyAllowlist,
			Plugins: []connectsim.Plugin{{Class: "io.confluent.connect.s3.S3SinkConnector", Type: "sink", Version: "10.5.0"}}},
			[]string{`connector "orders-sink": key consumer.override.group.protocol refused: The 'Allowlist' policy does not allow 'group.protocol'`,
				"connector.client.config.override.policy=All", "group.protocol in connector.client.config.override.allowlist"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := newCluster(t, nil)
			dst.store = src.store
			if err := connectdemo.CreateTopics(context.Background(), dst.cl, connectdemo.DefaultTopics()); err != nil {
				t.Fatal(err)
			}
			if _, err := dst.adm.CreateTopic(context.Background(), 3, 1, nil, "orders"); err != nil {
				t.Fatal(err)
			}
			srv, err := connectsimtest.Start(dst.cl, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(srv.Close)
			for _, dry := range []bool{true, false} {
				args := []string{"restore", id, "--create-connectors", "--connect-url", srv.URL}
				if dry {
					args = append(args, "--dry-run")
				}
				_, stderr := dst.mustRun(exitRefused, args...)
				flat := strings.Join(strings.Fields(stderr), " ")
				for _, w := range append(tc.want, "nothing was written") {
					if !strings.Contains(flat, w) {
						t.Errorf("dry run %v: stderr lacks %q:\n%s", dry, w, stderr)
					}
				}
			}
			if got := dst.groupOffsets("connect-orders-sink"); len(got) != 0 {
				t.Errorf("sink offsets written: %v", got)
			}
			if n := len(dst.ends(connectdemo.DefaultConfigsTopic)[connectdemo.DefaultConfigsTopic]); n == 0 {
				t.Fatal("no config topic partitions")
			}
			for p, end := range dst.ends(connectdemo.DefaultConfigsTopic)[connectdemo.DefaultConfigsTopic] {
				if end != 0 {
					t.Errorf("config topic partition %d has %d records: a connector was created", p, end)
				}
			}
			if ids := dst.storeIDs(); len(ids) != 1 {
				t.Errorf("the store holds %v: an undo snapshot was taken", ids)
			}
		})
	}
}

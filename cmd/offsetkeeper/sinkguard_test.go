package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// planDoc is what these tests read of restore --output json.
type planDoc struct {
	Outcome  string `json:"outcome"`
	Refusals []restore.Refusal
	Plan     struct {
		SinkGuard []restore.SinkGuardFinding `json:"sink_guard"`
	} `json:"plan"`
}

func (c *cluster) topicID(topic string) string {
	c.t.Helper()
	td, err := c.adm.ListTopics(context.Background(), topic)
	if err != nil || td[topic].Err != nil {
		c.t.Fatalf("describe %s: %v %v", topic, err, td[topic].Err)
	}
	return capture.TopicIDString(td[topic].ID)
}

// TestRestoreRecreatedSinkTopic: a sink topic deleted and created again
// since the snapshot refuses the restore of its group, naming the old and
// new topic IDs, in text and JSON; --translate timestamp restores the
// offsets onto the new topic, within the one cluster.
func TestRestoreRecreatedSinkTopic(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	ctx := context.Background()
	oldID := c.topicID("clicks")
	id := c.snapshot()

	if r, err := c.adm.DeleteTopics(ctx, "clicks"); err != nil || r.Error() != nil {
		t.Fatal(err, r.Error())
	}
	if r, err := c.adm.CreateTopic(ctx, 3, 1, nil, "clicks"); err != nil || r.Err != nil {
		t.Fatal(err, r.Err)
	}
	c.cl.PurgeTopicsFromClient("clicks") // the client's metadata still has the old topic
	newID := c.topicID("clicks")
	if newID == oldID {
		t.Fatal("the recreated topic kept its ID")
	}
	for p := int32(0); p < 3; p++ {
		for i := 0; i < 5; i++ {
			if err := c.cl.ProduceSync(ctx, &kgo.Record{Topic: "clicks", Key: []byte{byte(p), byte(i)}, Value: []byte("new")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The group lost its offsets with the topic; a bad reset stands in for
	// whatever the operator wants to roll back.
	conn := connectdemo.ConnSinkS3
	// diff --live names it too, with the restore that translates.
	dout, _ := c.mustRun(0, "diff", id, "--live", "--connector", conn)
	if flat := strings.Join(strings.Fields(dout), " "); !strings.Contains(flat, "warning: topic-recreated "+conn+": sink topic \"clicks\" was deleted and created again") ||
		!strings.Contains(flat, "fix: offsetkeeper restore "+id+" --connector "+conn) || !strings.Contains(flat, "--translate timestamp") {
		t.Errorf("diff --live:\n%s", dout)
	}
	code, out, errOut := c.run("restore", id, "--connector", conn, "--dry-run")
	flat := strings.Join(strings.Fields(out+errOut), " ")
	if code != exitRefused || !strings.Contains(flat, "sink topic \"clicks\" was deleted and created again since the snapshot (topic ID "+oldID+" then, "+newID+" now)") ||
		!strings.Contains(flat, "--translate timestamp") || !strings.Contains(flat, "--force") {
		t.Fatalf("dry run: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = c.run("restore", id, "--connector", conn, "--output", "json")
	var doc planDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != exitRefused {
		t.Fatalf("exit %d, %v\n%s\n%s", code, err, out, errOut)
	}
	var found bool
	for _, f := range doc.Plan.SinkGuard {
		if f.Kind == restore.FindingRecreated && f.Topic == "clicks" && f.SnapshotTopicID == oldID && f.LiveTopicID == newID && f.Group == connectdemo.GroupSinkS3 {
			found = true
		}
	}
	if !found || doc.Outcome != "refused" || len(doc.Refusals) != 1 || doc.Refusals[0].Check != restore.CheckSinkTopicRecreated {
		t.Fatalf("document: %+v", doc)
	}
	if got := c.committed(connectdemo.GroupSinkS3); len(got["clicks"]) != 0 {
		t.Fatalf("a refused restore committed %v", got["clicks"])
	}

	// --translate timestamp: the first record at or after the last one
	// consumed, on the new topic: its start, as every record there is new.
	out, errOut = c.mustRun(0, "restore", id, "--connector", conn, "--translate", "timestamp")
	if !strings.Contains(out, "verified:") {
		t.Fatalf("restore:\n%s\n%s", out, errOut)
	}
	got := c.committed(connectdemo.GroupSinkS3)
	for p := int32(0); p < 3; p++ {
		if o, ok := got.Lookup("clicks", p); !ok || o.At != 0 {
			t.Errorf("clicks/%d committed %+v, want 0 (the new topic's start)", p, o)
		}
	}
}

// TestRestoreBelowLogStart: DeleteRecords past a sink offset the restore
// writes: the plan names the partition, the records lost and the reset the
// connector will make, in text and JSON.
func TestRestoreBelowLogStart(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	ctx := context.Background()
	id := c.snapshot() // archive-loader clicks/1 at 55
	// A bad reset moves clicks/1 to 60; then retention removes up to 58.
	g := connectdemo.GroupSinkS3
	os := kadm.Offsets{}
	os.Add(kadm.Offset{Topic: "clicks", Partition: 1, At: 60, LeaderEpoch: -1})
	if _, err := c.adm.CommitOffsets(ctx, g, os); err != nil {
		t.Fatal(err)
	}
	del := kadm.Offsets{}
	del.Add(kadm.Offset{Topic: "clicks", Partition: 1, At: 58})
	if _, err := c.adm.DeleteRecords(ctx, del); err != nil {
		t.Fatal(err)
	}
	out, _ := c.mustRun(0, "restore", id, "--connector", connectdemo.ConnSinkS3, "--dry-run")
	want := "offset 55 for clicks/1 is below the partition's log start 58: 3 records were deleted (retention or DeleteRecords) before the connector read them; on resume the connector resets to the log start 58 (auto.offset.reset=earliest)"
	flat := strings.Join(strings.Fields(out), " ")
	if !strings.Contains(flat, want) {
		t.Fatalf("plan:\n%s", out)
	}
	// The group has no members: the plan says when the offsets it writes
	// expire. The demo commits them as a non-member: a classic group
	// without a protocol type, whose offsets Kafka expires by commit time
	// (classic/ClassicGroup.java offsetExpirationCondition).
	if !strings.Contains(flat, `note: group "archive-loader" has no members and no protocol type: Kafka deletes each of its offsets offsets.retention.minutes=10080 after it was committed`) {
		t.Errorf("no expiry note in the plan:\n%s", out)
	}
	// Run without a Connect URL, it names what would resume the connector.
	if !strings.Contains(flat, "(resume it, or restore with --connect-url, --stop-connectors, --resume and --start)") {
		t.Errorf("the expiry note does not say what resumes the connector:\n%s", out)
	}
	out, _ = c.mustRun(0, "restore", id, "--connector", connectdemo.ConnSinkS3, "--dry-run", "--output", "json")
	var doc planDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Plan.SinkGuard) != 1 {
		t.Fatalf("sink guard: %+v", doc.Plan.SinkGuard)
	}
	f := doc.Plan.SinkGuard[0]
	if f.Kind != restore.FindingBelowLogStart || f.Topic != "clicks" || f.Partition != 1 || f.Offset != 55 || f.LogStart != 58 || f.RecordsLost != 3 || f.Reset != "earliest" {
		t.Fatalf("finding %+v", f)
	}
}

// TestPagePlanCatchesRecreatedSinkTopic: the page's plan of a restore
// compares the sink topics' IDs as the CLI's plan does. The journal's live
// state keeps no topic IDs, so before the page read them a sink topic
// deleted and created again went unnoticed there.
func TestPagePlanCatchesRecreatedSinkTopic(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	ctx := context.Background()
	oldID := c.topicID("clicks")
	id := c.snapshot()
	at, err := snapshot.ParseID(id)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := c.adm.DeleteTopics(ctx, "clicks"); err != nil || r.Error() != nil {
		t.Fatal(err, r.Error())
	}
	if r, err := c.adm.CreateTopic(ctx, 3, 1, nil, "clicks"); err != nil || r.Err != nil {
		t.Fatal(err, r.Err)
	}
	c.cl.PurgeTopicsFromClient("clicks")
	newID := c.topicID("clicks")
	c.snapshot() // the page's live state: the newest in the store

	addr := freeAddr(t)
	sctx, cancel := context.WithCancel(ctx)
	exit := make(chan int, 1)
	var stderr testkit.SyncBuffer
	go func() {
		exit <- run(sctx, []string{"serve", "--store", c.store, "--brokers", c.brokers, "--listen", addr, "--refresh", "0"},
			&testkit.SyncBuffer{}, &stderr)
	}()
	t.Cleanup(func() { cancel(); <-exit })
	url := "http://" + addr + "/api/timeline?at=" + at.Add(time.Millisecond).Format(time.RFC3339Nano) +
		"&connector=" + connectdemo.ConnSinkS3
	var body string
	for range 200 {
		var code int
		if code, body, err = httpGet(url); err == nil && code == 200 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	var tl struct {
		Plan *struct {
			Warnings []string `json:"warnings"`
			Error    string   `json:"error"`
		} `json:"plan"`
	}
	if err := json.Unmarshal([]byte(body), &tl); err != nil || tl.Plan == nil {
		t.Fatalf("timeline: %v\n%s\n%s", err, body, stderr.String())
	}
	want := "sink topic \"clicks\" was deleted and created again since the snapshot (topic ID " + oldID + " then, " + newID + " now)"
	var found bool
	for _, w := range tl.Plan.Warnings {
		found = found || strings.Contains(strings.Join(strings.Fields(w), " "), want)
	}
	if !found {
		t.Errorf("the page's plan does not name the recreated topic (want %q):\nerror %q\nwarnings %q", want, tl.Plan.Error, tl.Plan.Warnings)
	}
}

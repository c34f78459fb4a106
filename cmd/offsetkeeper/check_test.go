package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
	"github.com/offsetkeeper/offsetkeeper/restore"
)

// TestCheck: check exits 0 on a cluster whose sinks all run, and 1 naming
// each trap once they apply: a stopped sink's offsets that will expire, a
// sink offset below its log start (DeleteRecords), a sink topic recreated
// since the newest snapshot; in text and JSON.
func TestCheck(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	srv := c.startConnect(connectsim.Options{SinkMembers: true, MemberLeaveDelay: 50 * time.Millisecond})
	rc := restClient(t, srv)
	ctx := context.Background()
	conn, group := connectdemo.ConnSinkS3, connectdemo.GroupSinkS3
	if err := rc.Resume(ctx, conn); err != nil {
		t.Fatal(err)
	}
	until(t, 30*time.Second, "the sink's member", &strings.Builder{}, func() bool {
		_, _ = rc.Status(ctx, conn)
		_, n := c.groupState(group)
		return n > 0
	})
	c.snapshot()
	// The demo's legacy-jdbc-sink has no config, and its group offsets:
	// nothing commits to it again, and check named it as no risk (issue
	// 44). It is at risk: deleted on purpose, the group goes as printed.
	code, out, errOut := c.run("check")
	del := pasted(out, "delete: ")
	if code != 1 || !strings.Contains(flat(out), "offsets-expire legacy-jdbc-sink: group \"connect-legacy-jdbc-sink\" has no members and connector legacy-jdbc-sink has no config here") ||
		!strings.HasPrefix(del, "delete: kafka-consumer-groups.sh --bootstrap-server "+c.brokers+" --delete --group connect-legacy-jdbc-sink") {
		t.Fatalf("check of the orphaned group: exit %d\n%s\n%s", code, out, errOut)
	}
	if resp, err := c.adm.DeleteGroups(ctx, "connect-legacy-jdbc-sink"); err != nil || resp.Error() != nil {
		t.Fatalf("delete the group as %s: %v %v", del, err, resp.Error())
	}
	out, _ = c.mustRun(0, "check")
	if !strings.Contains(out, "ok: no sink offsets at risk") {
		t.Fatalf("check of a clean cluster:\n%s", out)
	}

	if err := rc.Stop(ctx, conn); err != nil {
		t.Fatal(err)
	}
	until(t, 30*time.Second, "the group to be Empty", &strings.Builder{}, func() bool {
		_, _ = rc.Status(ctx, conn)
		s, _ := c.groupState(group)
		return s == "Empty"
	})
	code, out, errOut = c.run("check")
	if code != 1 || !strings.Contains(out, "offsets-expire "+conn+": group \""+group+"\" has no members (Empty): Kafka deletes its") ||
		!strings.Contains(errOut, "sink offsets at risk: 1 trap applies") {
		t.Fatalf("check after the stop: exit %d\n%s\n%s", code, out, errOut)
	}

	recs := kadm.Offsets{}
	recs.Add(kadm.Offset{Topic: "orders", Partition: 5, At: 20}) // es-sink-orders committed 12
	if _, err := c.adm.DeleteRecords(ctx, recs); err != nil {
		t.Fatal(err)
	}
	if _, err := c.adm.DeleteTopics(ctx, "clicks"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.adm.CreateTopic(ctx, 3, 1, nil, "clicks"); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = c.run("check", "--output", "json")
	var res checkResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 1 {
		t.Fatalf("exit %d, %v\n%s\n%s", code, err, out, errOut)
	}
	kinds := map[string]restore.SinkTrap{}
	for _, tr := range res.Traps {
		kinds[tr.Kind+" "+tr.Connector] = tr
	}
	if tr, ok := kinds[restore.FindingBelowLogStart+" "+connectdemo.ConnSinkES]; !ok || tr.Partition != 5 || tr.Offset != 12 || tr.LogStart != 20 || tr.RecordsLost != 8 || tr.Reset != "earliest" {
		t.Errorf("below-log-start: %+v", tr)
	}
	if tr, ok := kinds[restore.FindingRecreated+" "+conn]; !ok || tr.Topic != "clicks" || tr.SnapshotTopicID == tr.LiveTopicID || !strings.HasSuffix(tr.Command, "--translate timestamp") {
		t.Errorf("topic-recreated: %+v", tr)
	}
	if tr, ok := kinds[restore.TrapExpiry+" "+conn]; !ok || tr.ExpiresAt == nil || res.RetentionMinutes != 10080 {
		t.Errorf("offsets-expire: %+v, retention %d minutes", tr, res.RetentionMinutes)
	}
	if len(res.Traps) != 3 {
		t.Errorf("%d traps: %+v", len(res.Traps), res.Traps)
	}
}

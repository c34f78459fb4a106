package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim/connectsimtest"
	"github.com/offsetkeeper/offsetkeeper/restore"
)

// drWithConnect is a new cluster whose Connect was started before the
// restore (its internal topics made, empty) and whose data topics MM2
// copied, with the store of a's snapshots; and its Connect.
func drWithConnect(t *testing.T, a *cluster) (*cluster, *connectsimtest.Server) {
	b := newCluster(t, nil, kfake.ClusterID("dr"))
	b.store = a.store
	ctx := context.Background()
	if err := connectdemo.CreateTopics(ctx, b.cl, connectdemo.DefaultTopics()); err != nil {
		t.Fatal(err)
	}
	for topic, parts := range map[string]int32{"orders": 6, "clicks": 3, "invoices": 2, "legacy.customers": 1} {
		if _, err := b.adm.CreateTopic(ctx, parts, -1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	plugins := append(connectsim.DefaultPlugins("3.7.0"), connectsim.Plugin{Class: "io.confluent.connect.s3.S3SinkConnector", Type: "sink", Version: "10.5.0"})
	return b, b.startConnect(connectsim.Options{SinkMembers: true, Plugins: plugins})
}

// TestCreatedStoppedSinkStarts is an incident nobody wrote down: disaster
// recovery into a new cluster with --create-connectors, of a sink that was
// STOPPED in the snapshot. The restore created it STOPPED, committed its
// offsets into a group with no members, and left it so: Kafka deletes
// them after offsets.retention.minutes. The plan's note said "restore
// --start resumes it", but --start did nothing for a connector the restore
// created (the same restore with --start, run again, was "nothing to do"),
// and "left STOPPED, as in the snapshot" printed no way to start it. Now
// --start starts a connector created STOPPED (its dry run drops the note),
// and without it the end of the run prints the resume of each, which, run
// as printed, starts it; check then finds nothing at risk for it.
func TestCreatedStoppedSinkStarts(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("the printed commands are curl commands: no curl here")
	}
	spec := connectdemo.DefaultSpec()
	a := newCluster(t, &spec)
	a.stopAll()
	id := a.snapshot()
	conn, group := connectdemo.ConnSinkS3, connectdemo.GroupSinkS3
	ctx := context.Background()

	for _, start := range []bool{true, false} {
		b, srv := drWithConnect(t, a)
		args := []string{"restore", id, "--allow-other-cluster", "--connector", conn, "--create-connectors", "--connect-url", srv.URL, "--stop-connectors", "--resume"}
		if start {
			args = append(args, "--start")
		}
		out, _ := b.mustRun(0, append(args, "--dry-run")...)
		// The expiry note: its wording follows the group's expiry rule (a
		// group the commit creates has no protocol type: by commit time).
		note := strings.Contains(flat(out), `note: group "`+group+`"`) && strings.Contains(flat(out), "unless the connector is resumed before")
		if note == start || (note && !strings.Contains(flat(out), "(restore --start resumes it)")) {
			t.Errorf("start %v: the dry run's expiry note (present: %v):\n%s", start, note, out)
		}
		out, _ = b.mustRun(0, args...)
		if !start {
			cmd := pasted(out, "curl ")
			if !strings.HasPrefix(cmd, restore.Curl+" -X PUT ") || !strings.HasSuffix(cmd, "/connectors/"+conn+"/resume") {
				t.Fatalf("left STOPPED with no command that starts it:\n%s", out)
			}
			if b, err := exec.Command("sh", "-c", strings.Replace(cmd, "curl", curl, 1)).CombinedOutput(); err != nil {
				t.Fatalf("the printed %s: %v\n%s", cmd, err, b)
			}
		}
		rc := restClient(t, srv)
		until(t, 30*time.Second, conn+" running with a member in "+group, &strings.Builder{}, func() bool {
			st, err := rc.Status(ctx, conn) // the fake starts members as it answers
			_, n := b.groupState(group)
			return err == nil && st.Connector.State == "RUNNING" && n > 0
		})
		out, _ = b.mustRun(0, "check", "--connect-url", srv.URL)
		if strings.Contains(out, group) {
			t.Errorf("start %v: check still names %s:\n%s", start, group, out)
		}
	}
}

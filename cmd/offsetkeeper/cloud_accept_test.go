package main

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/internal/cloudfake"
	"github.com/offsetkeeper/offsetkeeper/internal/connectjson"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// TestCloudAcceptance: fully-managed connectors reached only through the
// Confluent Cloud Connect API (the fake, written from its documentation):
// a scheduled capture, a bad reset seen by diff, a restore that polls its
// requests to APPLIED, one Cloud FAILS (and the command it prints, run as
// printed, finishes it) and one left PENDING past --connect-timeout.
func TestCloudAcceptance(t *testing.T) {
	srv := cloudfake.New(t, cloudfake.Options{Environment: "env-7q2m1", Cluster: "lkc-9x8y7", APIKey: "CLOUDKEY", APISecret: "CLOUDSECRET", PendingPolls: 2, StaleReads: 1})
	srv.AddConnector("orders-cdc", cloudfake.TypeSource, map[string]string{"connector.class": "PostgresCdcSource", "kafka.api.key": "KAFKAKEY", "kafka.api.secret": "KAFKASECRET", "database.password": "DBPASSWORD", "tasks.max": "1"})
	lsn := func(n int64) []connectjson.OffsetEntry {
		return []connectjson.OffsetEntry{{
			Partition: connectjson.Map{{Key: "server", Value: connectjson.StringValue("orders")}},
			Offset:    connectjson.Map{{Key: "lsn", Value: connectjson.LongValue(n)}, {Key: "txId", Value: connectjson.LongValue(n / 10)}},
		}}
	}
	srv.SetSourceOffsets("orders-cdc", lsn(48_211_000))
	srv.AddConnector("orders-s3", cloudfake.TypeSink, map[string]string{"connector.class": "S3_SINK", "topics": "orders", "kafka.api.key": "KAFKAKEY", "kafka.api.secret": "KAFKASECRET", "aws.secret.access.key": "AWSSECRET"})
	srv.SetSinkOffsets("orders-s3", []cloudfake.SinkOffset{{Topic: "orders", Partition: 0, Offset: 1200}, {Topic: "orders", Partition: 1, Offset: 1177}})
	dir := t.TempDir()
	st := filepath.Join(dir, "store")
	cloud := []string{"--platform", "confluent-cloud", "--connect-url", srv.BaseURL(), "--environment", srv.Environment(), "--cluster", srv.Cluster(), "--connect-user", "CLOUDKEY", "--store", st}
	t.Setenv("OFFSETKEEPER_CONNECT_PASSWORD", "CLOUDSECRET")
	cli := func(want int, args ...string) (string, string) {
		t.Helper()
		args = append(args, cloud...)
		code, stdout, stderr := runCLI(t, args...)
		if code != want {
			t.Fatalf("offsetkeeper %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, want, stdout, stderr)
		}
		return stdout, stderr
	}

	// The scheduled capture: the daemon with REST access alone.
	ctx, cancel := context.WithCancel(context.Background())
	var dout, derr testkit.SyncBuffer
	exit := make(chan int, 1)
	go func() {
		exit <- run(ctx, append([]string{"daemon", "--capture-via", "connect", "--schedule", "@every 1h", "--listen", "", "--log-format", "json"}, cloud...), &dout, &derr)
	}()
	infos := waitListed(t, st, &derr)
	cancel()
	if code := <-exit; code != 0 {
		t.Fatalf("daemon exit %d\n%s", code, derr.String())
	}
	id := infos[0].ID
	if i := infos[0]; i.Captured != snapshot.CapturedConnectREST || i.Reason != snapshot.ReasonScheduled || i.Connectors != 2 || i.ClusterID != srv.Cluster() {
		t.Errorf("the scheduled snapshot: %+v", i)
	}
	// Cloud's GET config holds the connector's Kafka API key and secret;
	// show masks them.
	show, _ := cli(0, "show", id, "--connector", "orders-cdc")
	wantLines(t, "show", show, "restore with --via connect", "config kafka.api.key      = ********", "config kafka.api.secret   = ********", `{"server":"orders"}  -> {"lsn":48211000,"txId":4821100}`)
	for _, secret := range []string{"KAFKAKEY", "KAFKASECRET", "DBPASSWORD", "CLOUDSECRET"} {
		if strings.Contains(show, secret) {
			t.Errorf("show prints %s:\n%s", secret, show)
		}
	}

	// The bad reset: both connectors' offsets set back to 0.
	reset := func() {
		srv.SetSourceOffsets("orders-cdc", lsn(0))
		srv.SetSinkOffsets("orders-s3", []cloudfake.SinkOffset{{Topic: "orders", Partition: 0, Offset: 0}, {Topic: "orders", Partition: 1, Offset: 0}})
	}
	wantRestored := func(what string) {
		t.Helper()
		if got := srv.Offsets("orders-cdc"); len(got) != 1 || !connectjson.Equal(got[0].Offset, lsn(48_211_000)[0].Offset) {
			t.Errorf("%s: orders-cdc offsets %+v", what, got)
		}
		got := map[string]string{}
		for _, e := range srv.Offsets("orders-s3") {
			got[e.Partition.String()] = e.Offset.String()
		}
		want := map[string]string{
			connectjson.SinkPartition("orders", 0).String(): connectjson.SinkOffset(1200).String(),
			connectjson.SinkPartition("orders", 1).String(): connectjson.SinkOffset(1177).String(),
		}
		diffMaps(t, what+": orders-s3 offsets", got, want)
	}
	reset()
	diff, _ := cli(0, "diff", id)
	wantLines(t, "diff", diff, "state  orders-cdc  REST RUNNING, 1 task\n", `changed  {"lsn":48211000,"txId":4821100} -> {"lsn":0,"txId":0}`, "orders/0  moved backward  1200 -> 0", "orders/1  moved backward  1177 -> 0")

	// The restore: a dry run writes nothing; the run sends one offsets
	// request per connector and polls its status until APPLIED (Cloud
	// pauses the running connector itself: no refusal, no stop).
	before := len(srv.Requests())
	out, _ := cli(0, "restore", id, "--via", "connect", "--dry-run")
	wantLines(t, "dry run", out, "dry run: nothing written", "POST /connectors/orders-cdc/offsets/request")
	for _, r := range srv.Requests()[before:] {
		if r.Method != "GET" {
			t.Errorf("the dry run sent %s %s", r.Method, r.Path)
		}
	}
	out, _ = cli(0, "restore", id, "--via", "connect")
	wantLines(t, "restore", out, "undo snapshot: ", "offsets request for connector orders-cdc: PENDING ... APPLIED", "offsets request for connector orders-s3: PENDING ... APPLIED", "verified through Connect: 2 connectors show the restored offsets")
	wantRestored("after the restore")
	for _, r := range srv.Requests() {
		if strings.HasSuffix(r.Path, "/stop") || (r.Method == "POST" && strings.HasSuffix(r.Path, "/offsets/request") && !strings.Contains(r.Body, `"type":"PATCH"`)) {
			t.Errorf("the restore sent %s %s %s", r.Method, r.Path, r.Body)
		}
	}

	// A request Cloud FAILS: the restore stops there (exit 1), names the
	// failure, and leads with the command that finishes it, which, run as
	// printed once the cause is gone, does.
	reset()
	srv.FailNext("orders-s3", "Unable to alter offsets: the topic orders is being deleted")
	code, _, errOut := runCLI(t, append([]string{"restore", id, "--via", "connect"}, cloud...)...)
	if code != 1 {
		t.Fatalf("restore with a FAILED request: exit %d, want 1\n%s", code, errOut)
	}
	wantLines(t, "the failed restore's error (words)", flat(errOut), "phase FAILED: Unable to alter offsets: the topic orders is being deleted", "already altered: orders-cdc", "run the same restore again")
	if strings.Contains(errOut, "--stop-connectors") {
		t.Errorf("the advice gives --stop-connectors, which Confluent Cloud refuses:\n%s", errOut)
	}
	again := printedCommand(t, flat(errOut), "which leaves what is already restored alone: ")
	if !slices.Contains(again, id) || !slices.Contains(again, "connect") {
		t.Fatalf("the command printed is not this restore through Connect: %q", again)
	}
	code, out, errOut = runCLI(t, again...)
	if code != 0 {
		t.Fatalf("the printed command: exit %d\n%s\n%s", code, out, errOut)
	}
	wantLines(t, "the printed command", out, "verified through Connect: 2 connectors show the restored offsets")
	wantRestored("after the printed command")

	// A request still PENDING past --connect-timeout: exit 1, saying Cloud
	// may still apply it and where to look before anything else.
	reset()
	srv.StayPending("orders-s3")
	code, _, errOut = runCLI(t, append([]string{"restore", id, "--via", "connect", "--connect-timeout", "2s"}, cloud...)...)
	if code != 1 {
		t.Fatalf("restore with a request left PENDING: exit %d, want 1\n%s", code, errOut)
	}
	wantLines(t, "the pending restore's error (words)", flat(errOut), "still PENDING after 2s (--connect-timeout)", "Confluent Cloud may still apply it later", "/connectors/orders-s3/offsets/request/status", "check its status before anything else")
}

// printedCommand is the offsetkeeper command printed in out after marker,
// as arguments (its words; the test's paths need no quoting), without the
// program name.
func printedCommand(t *testing.T, out, marker string) []string {
	t.Helper()
	i := strings.Index(out, marker)
	if i < 0 {
		t.Fatalf("no %q in:\n%s", marker, out)
	}
	cmd := out[i+len(marker):]
	if j := strings.Index(cmd, " (check first:"); j >= 0 {
		cmd = cmd[:j]
	}
	if j := strings.Index(cmd, " check first:"); j >= 0 { // laid out with the command on its own lines
		cmd = cmd[:j]
	}
	words := strings.Fields(cmd)
	if len(words) == 0 || words[0] != "offsetkeeper" {
		t.Fatalf("not an offsetkeeper command: %q", cmd)
	}
	return words[1:]
}

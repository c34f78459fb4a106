package restore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/cloudfake"
	"github.com/offsetkeeper/offsetkeeper/internal/connectjson"
	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/kafkaconf"
	"github.com/offsetkeeper/offsetkeeper/restore"
)

func cloudRC(t *testing.T, srv *cloudfake.Server, timeout time.Duration) *connectrest.Client {
	t.Helper()
	key, secret := srv.Credentials()
	rc, err := connectrest.New(connectrest.Config{Platform: connectrest.PlatformConfluentCloud, URLs: []string{srv.BaseURL()}, Environment: srv.Environment(), Cluster: srv.Cluster(),
		Username: key, Password: kafkaconf.Secret(secret), Timeout: timeout, PollInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

func fileEntry(file string, pos int64) restore.ConnectEntry {
	return restore.ConnectEntry{
		Partition: connectjson.Map{{Key: "filename", Value: connectjson.StringValue(file)}},
		Offset:    connectjson.Map{{Key: "position", Value: connectjson.LongValue(pos)}},
	}
}

func connectRequest(name, typ string, entries ...restore.ConnectEntry) restore.ConnectRequest {
	return restore.ConnectRequest{Connector: name, Type: typ, Entries: entries, Body: connectjson.EncodeOffsets(entries)}
}

// cloudConnectors is a fake with a source connector (two files) and a sink
// connector (one partition), and the requests that restore both.
func cloudConnectors(t *testing.T, opts cloudfake.Options) (*cloudfake.Server, []restore.ConnectRequest) {
	srv := cloudfake.New(t, opts)
	srv.SetSourceOffsets("src", []connectjson.OffsetEntry{fileEntry("a.txt", 500), fileEntry("b.txt", 20)})
	srv.SetSinkOffsets("snk", []cloudfake.SinkOffset{{Topic: "orders", Partition: 0, Offset: 900}})
	reqs := []restore.ConnectRequest{
		connectRequest("src", "source", fileEntry("a.txt", 100), restore.ConnectEntry{Partition: fileEntry("b.txt", 0).Partition}),
		connectRequest("snk", "sink", restore.ConnectEntry{Partition: connectjson.SinkPartition("orders", 0), Offset: connectjson.SinkOffset(40)}),
	}
	return srv, reqs
}

func TestApplyConnectCloud(t *testing.T) {
	ctx := context.Background()
	srv, reqs := cloudConnectors(t, cloudfake.Options{PendingPolls: 2, StaleReads: 1})
	rc := cloudRC(t, srv, 10*time.Second)
	results, err := restore.ApplyConnect(ctx, rc, reqs)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 {
		t.Fatalf("results %+v", results)
	}
	for _, x := range results {
		if strings.Join(x.Phases, " ") != "PENDING APPLIED" || x.Message == "" {
			t.Errorf("connector %s: phases %v, message %q", x.Connector, x.Phases, x.Message)
		}
	}
	if got := srv.Offsets("src"); len(got) != 1 || !connectjson.Equal(got[0].Offset, fileEntry("a.txt", 100).Offset) {
		t.Fatalf("source offsets in Cloud: %+v", got)
	}
	if got := srv.Offsets("snk"); len(got) != 1 || !connectjson.Equal(got[0].Offset, connectjson.SinkOffset(40)) {
		t.Fatalf("sink offsets in Cloud: %+v", got)
	}
	v, err := restore.VerifyConnect(ctx, rc, reqs)
	if err != nil || v.Connectors != 2 || len(v.Differences) != 0 {
		t.Fatalf("VerifyConnect = %+v, %v", v, err)
	}
	// Changed behind the restore's back: verification says so.
	srv.SetSourceOffsets("src", []connectjson.OffsetEntry{fileEntry("a.txt", 101)})
	if _, err := restore.VerifyConnect(ctx, rc, reqs); !errors.Is(err, restore.ErrVerifyFailed) || !strings.Contains(err.Error(), `"src"`) {
		t.Fatalf("VerifyConnect after a change: %v, want ErrVerifyFailed naming src", err)
	}
}

func TestApplyConnectCloudFailed(t *testing.T) {
	srv, reqs := cloudConnectors(t, cloudfake.Options{})
	srv.FailNext("snk", "offset 40 is below the log start offset")
	results, err := restore.ApplyConnect(context.Background(), cloudRC(t, srv, 10*time.Second), reqs)
	if !errors.Is(err, restore.ErrApply) || !errors.Is(err, connectrest.ErrRequestFailed) {
		t.Fatalf("err = %v, want ErrApply and ErrRequestFailed", err)
	}
	for _, want := range []string{"below the log start offset", "already altered: src"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if len(results) != 1 || results[0].Connector != "src" {
		t.Fatalf("results %+v, want src only", results)
	}
}

func TestApplyConnectCloudPending(t *testing.T) {
	srv, reqs := cloudConnectors(t, cloudfake.Options{})
	srv.StayPending("src")
	results, err := restore.ApplyConnect(context.Background(), cloudRC(t, srv, 150*time.Millisecond), reqs)
	if !errors.Is(err, restore.ErrApply) || !errors.Is(err, connectrest.ErrRequestPending) {
		t.Fatalf("err = %v, want ErrApply and ErrRequestPending", err)
	}
	for _, want := range []string{`"src"`, "may still apply it later", "nothing was altered"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if len(results) != 0 {
		t.Fatalf("results %+v", results)
	}
	for _, r := range srv.Requests() {
		if strings.HasPrefix(r.Path, "/connectors/snk/offsets/request") {
			t.Fatalf("sent %s %s after src's request stayed pending", r.Method, r.Path)
		}
	}
}

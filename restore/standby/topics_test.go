package standby_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/restore/standby"
)

// TestSyncCreateTopics: on a bare standby cluster, a sync without
// CreateTopics names every missing Connect topic (the worker's offsets,
// the exactly-once connector's own, config, status) with the command
// that creates it, and creates and writes nothing; with CreateTopics it
// creates them, compacted, with the primary's partition counts (config 1,
// status Connect's 5), and writes the offsets byte for byte; a sync after
// finds them and creates nothing.
func TestSyncCreateTopics(t *testing.T) {
	ctx := context.Background()
	_, acl := testkit.Cluster(t, kfake.ClusterID("primary"))
	spec, fill := connectdemo.MigrationSpec(time.Now().Add(-time.Hour).Truncate(time.Second))
	exp, err := connectdemo.Seed(t.Context(), acl, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(exp.Stop)
	if err := fill(ctx, acl); err != nil {
		t.Fatal(err)
	}
	c := testkit.Kfake(t, kfake.ClusterID("standby"), kfake.NumBrokers(3))
	bcl := testkit.Client(t, c)
	state := capt(t, acl)
	// The source connectors: the sink topics are not on this standby.
	scope := []string{connectdemo.ConnFile, connectdemo.ConnEOS}
	want := []string{connectdemo.DefaultOffsetsTopic, connectdemo.EOSOffsetsTopic, connectdemo.DefaultConfigsTopic, "connect-status"}
	adm := kadm.NewClient(bcl)
	existing := func() []string {
		t.Helper()
		td, err := adm.ListTopics(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return td.Names()
	}
	newSyncer := func(create bool) *standby.Syncer {
		opts := restore.Options{}
		opts.Connectors = scope
		s, err := standby.New(standby.Config{Client: bcl, CreateTopics: create, Options: opts})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	rep, err := newSyncer(false).Sync(ctx, state, time.Now())
	if !errors.Is(err, standby.ErrTopicsMissing) {
		t.Fatalf("Sync onto a bare standby: %v, want ErrTopicsMissing", err)
	}
	// The commands as pasted: their continued lines joined.
	joined := strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\\\n", " ")), " ")
	for _, topic := range want {
		if !strings.Contains(joined, "--create --topic "+topic+" --partitions ") || !strings.Contains(joined, topic+" --partitions") {
			t.Errorf("the error does not name %s with its command:\n%v", topic, err)
		}
	}
	t.Logf("without CreateTopics: %v", err)
	if !strings.Contains(err.Error(), "--standby-create-topics") || rep.Applied != nil || len(rep.CreatedTopics) > 0 {
		t.Errorf("error %v, report %+v", err, rep)
	}
	if got := existing(); len(got) != 0 {
		t.Fatalf("a sync without CreateTopics created %v", got)
	}

	rep, err = newSyncer(true).Sync(ctx, state, time.Now())
	if err != nil {
		t.Fatalf("Sync with CreateTopics: %v", err)
	}
	if !reflect.DeepEqual(slices.Sorted(slices.Values(rep.CreatedTopics)), slices.Sorted(slices.Values(want))) {
		t.Errorf("created %v, want %v", rep.CreatedTopics, want)
	}
	details, err := adm.ListTopics(ctx, want...)
	if err != nil {
		t.Fatal(err)
	}
	configs, err := adm.DescribeTopicConfigs(ctx, want...)
	if err != nil {
		t.Fatal(err)
	}
	parts := map[string]int{connectdemo.DefaultConfigsTopic: 1, "connect-status": 5,
		connectdemo.DefaultOffsetsTopic: int(state.PartitionCount(connectdemo.DefaultOffsetsTopic)),
		connectdemo.EOSOffsetsTopic:     int(state.PartitionCount(connectdemo.EOSOffsetsTopic))}
	for _, topic := range want {
		if d := details[topic]; d.Err != nil || len(d.Partitions) != parts[topic] || parts[topic] == 0 {
			t.Errorf("%s on the standby: %d partitions (%v), want %d", topic, len(d.Partitions), d.Err, parts[topic])
		}
		rc, err := configs.On(topic, nil)
		if err != nil {
			t.Fatalf("describe %s: %v", topic, err)
		}
		policy := ""
		for _, cv := range rc.Configs {
			if cv.Key == "cleanup.policy" && cv.Value != nil {
				policy = *cv.Value
			}
		}
		if policy != "compact" {
			t.Errorf("%s: cleanup.policy %q, want compact", topic, policy)
		}
	}
	if rep.Applied == nil || rep.Applied.SourceWrites == 0 {
		t.Fatalf("nothing written after the topics were created: %+v", rep)
	}
	got, wantBytes := sourceBytes(capt(t, bcl)), sourceBytes(state.Filter(scope))
	if !reflect.DeepEqual(got, wantBytes) {
		t.Errorf("the standby's source offsets are not the primary's:\n got %v\nwant %v", got, wantBytes)
	}
	rep, err = newSyncer(true).Sync(ctx, state, time.Now())
	if err != nil || len(rep.CreatedTopics) > 0 || rep.Counts.Writes() > 0 {
		t.Fatalf("a sync after: %v, created %v, counts %+v", err, rep.CreatedTopics, rep.Counts)
	}
}

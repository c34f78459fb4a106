package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
)

// runMigration is demo --migration: two embedded clusters to rehearse
// docs/migrate.md on. Cluster a (ports port..port+2) holds the demo's
// connectors, all stopped, and data topics whose records carry distinct
// CreateTimes; cluster b (port+3..port+5) holds Connect's worker topics and
// MirrorMaker 2's copies a.<topic> at shifted offsets, its checkpoints of
// the es sink's group (the others left out, as MM2's default groups.exclude
// does) and, on a, its offset syncs. It runs until ctx ends.
func (c *demoCmd) runMigration(ctx context.Context) error {
	a, acl, err := c.demoCluster("demo-cluster-a", c.port)
	if err != nil {
		return err
	}
	defer a.Close()
	defer acl.Close()
	b, bcl, err := c.demoCluster("demo-cluster-b", c.port+3)
	if err != nil {
		return err
	}
	defer b.Close()
	defer bcl.Close()

	spec, fill := connectdemo.MigrationSpec(time.Now().Add(-time.Hour).Truncate(time.Second))
	exp, err := connectdemo.Seed(ctx, acl, spec)
	if err != nil {
		return fmt.Errorf("seed cluster a: %w", err)
	}
	defer exp.Stop()
	if err := fill(ctx, acl); err != nil {
		return err
	}
	var stops []*kgo.Record
	for _, conn := range spec.Connectors {
		if conn.HasConfig {
			stops = append(stops,
				&kgo.Record{Topic: connectdemo.DefaultConfigsTopic, Key: []byte("commit-" + conn.Name), Value: []byte(`{"tasks":0}`)},
				&kgo.Record{Topic: connectdemo.DefaultConfigsTopic, Key: []byte("target-state-" + conn.Name), Value: []byte(`{"state":"PAUSED","state.v2":"STOPPED"}`)})
		}
	}
	if err := acl.ProduceSync(ctx, stops...).FirstErr(); err != nil {
		return fmt.Errorf("stop the connectors of cluster a: %w", err)
	}
	if err := connectdemo.CreateTopics(ctx, bcl, connectdemo.Topics{}); err != nil {
		return err
	}
	if _, err := kadm.NewClient(bcl).CreateTopic(ctx, 5, -1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, connectdemo.EOSOffsetsTopic); err != nil {
		return fmt.Errorf("create %s on cluster b: %w", connectdemo.EOSOffsetsTopic, err)
	}
	if _, err := connectdemo.MirrorTopics(ctx, acl, bcl, connectdemo.Mirror{
		SourceAlias: "a", TargetAlias: "b",
		Topics:       []string{"orders", "clicks", "legacy.customers"},
		Shift:        func(topic string, p int32) int64 { return 100 + 7*int64(p) },
		SyncEvery:    10,
		Checkpointed: []string{connectdemo.GroupSinkES},
	}); err != nil {
		return fmt.Errorf("mirror cluster a to b: %w", err)
	}
	ab, bb := strings.Join(a.ListenAddrs(), ","), strings.Join(b.ListenAddrs(), ",")
	fmt.Fprintf(c.stdout, `offsetkeeper demo --migration
  cluster a (the old one): %s   cluster id demo-cluster-a
    %d connectors, all STOPPED; data topics orders, clicks, legacy.customers
  cluster b (the new one): %s   cluster id demo-cluster-b
    Connect's worker topics, no connectors yet; MirrorMaker 2 (aliases a -> b) copied the
    data topics to a.orders, a.clicks, a.legacy.customers (100 + 7 x partition records
    earlier in each), wrote a.checkpoints.internal (group %s only, as the default
    groups.exclude leaves out connect-.*) and, on a, mm2-offset-syncs.b.internal.

Walk through docs/migrate.md with --brokers %s for the old cluster and
--brokers %s for the new one. Ctrl-C stops the demo.
`, ab, len(spec.Connectors), bb, connectdemo.GroupSinkES, ab, bb)
	<-ctx.Done()
	c.log.Info("demo stopped")
	return nil
}

// demoCluster starts one embedded cluster on three ports from port.
func (c *demoCmd) demoCluster(id string, port int) (*kfake.Cluster, *kgo.Client, error) {
	k, err := connectdemo.NewCluster(kfake.ClusterID(id), kfake.Ports(port, port+1, port+2))
	if err != nil {
		return nil, nil, fmt.Errorf("start embedded Kafka on ports %d-%d: %w; is another Kafka (or demo) running? try --port", port, port+2, err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.ListenAddrs()...))
	if err != nil {
		k.Close()
		return nil, nil, fmt.Errorf("connect to embedded Kafka: %w", err)
	}
	return k, cl, nil
}

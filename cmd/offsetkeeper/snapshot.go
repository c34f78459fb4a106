package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/kafkaconf"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

func init() {
	register(commandInfo{
		name:    "snapshot",
		summary: "take one snapshot of every Connect offset and store it; prints its ID as the last line",
		usage:   "[flags]",
		new:     func(e *env) command { return &snapshotCmd{env: e} },
	})
}

type snapshotCmd struct {
	*env
	connectors listFlag
	timeout    time.Duration
}

func (c *snapshotCmd) Flags(fs *flag.FlagSet) {
	fs.Var(&c.connectors, "connector", "capture only this connector; repeatable (default all)")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Minute, "give up the whole snapshot after this long; nothing is stored then")
}

func (c *snapshotCmd) Run(ctx context.Context, args []string) error {
	if err := noArgs(args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	store, err := c.g.openStore(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	cl, opts, err := c.g.kafkaClient(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	opts.Connectors = c.connectors
	opts.Reason = snapshot.ReasonManual

	began := time.Now()
	capt := snapshot.NewCapturer(cl, opts)
	// Streamed: the source offsets go from what was read straight into the
	// stored document, never built in memory.
	snap, err := capt.CaptureStreamed(ctx)
	if err != nil {
		return fmt.Errorf("take snapshot: %w", kafkaconf.DescribeError(err))
	}
	captured := time.Now()
	info, err := store.Put(ctx, snap)
	if err != nil {
		return fmt.Errorf("store snapshot: %w", err)
	}
	st := capt.Stats()
	c.log.Debug("snapshot timings", "config_read", st.ConfigRead, "offsets_read", st.OffsetsRead,
		"build", st.Build, "groups", st.Groups, "capture", captured.Sub(began), "store", time.Since(captured))
	for _, w := range snap.Warnings {
		c.log.Warn("snapshot warning", "snapshot_id", info.ID, "warning", w)
	}
	c.log.Info("snapshot taken", "snapshot_id", info.ID, "cluster_id", snap.ClusterID,
		"connectors", info.Connectors, "source_keys", info.SourceKeys, "sink_groups", info.SinkGroups,
		"records", capt.Stats().RecordsRead, "size", info.Size, "duration", time.Since(began).Round(time.Millisecond),
		"capture", captured.Sub(began).Round(time.Millisecond), "store", time.Since(captured).Round(time.Millisecond))
	fmt.Fprintf(c.stdout, "connectors: %d, source keys: %d (unparsed %d), sink groups: %d, size: %d bytes\n",
		info.Connectors, info.SourceKeys, snap.Unparsed(), info.SinkGroups, info.Size)
	fmt.Fprintln(c.stdout, info.ID)
	return nil
}

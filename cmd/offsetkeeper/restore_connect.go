package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/kafkaconf"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// checkConnectUsage checks the flags that go with the Connect REST API.
func (c *restoreCmd) checkConnectUsage() error {
	switch {
	case c.via != restore.ViaKafka && c.via != restore.ViaConnect:
		return usagef("--via %q: want kafka or connect", c.via)
	case c.start && (!c.stopConnectors || !c.resume):
		return usagef("--start resumes also the connectors that were stopped before the restore: give --stop-connectors --resume")
	case c.resume && !c.stopConnectors && !c.createConnectors:
		return usagef("--resume resumes the connectors --stop-connectors stopped or --create-connectors created: give one of them")
	case c.createConnectors && !c.g.connect.given():
		return usagef("--create-connectors creates connectors through the Connect REST API: give --connect-url")
	case c.createConnectors && c.via == restore.ViaConnect:
		return usagef("--create-connectors writes the offsets of the connectors it creates into Kafka: leave out --via connect")
	case c.notStrimzi && !c.stopConnectors:
		return usagef("--not-strimzi-managed lets --stop-connectors stop connectors on Strimzi's workers: give --stop-connectors")
	case c.stopConnectors && !c.g.connect.given():
		return usagef("--stop-connectors stops connectors through the Connect REST API: give --connect-url")
	case c.via == restore.ViaConnect && !c.g.connect.given():
		return usagef("--via connect writes through the Connect REST API: give --connect-url")
	case c.includeUnowned && (len(c.connectors) > 0 || c.sinkOnly):
		return usagef("--include-unowned writes the keys no connector owns: leave out --connector and --sink-only")
	case c.group != "" && c.fromFile == "":
		return usagef("--group names the group of a --from-file CSV: give --from-file FILE")
	case c.group != "" && len(c.connectors) > 0:
		return usagef("--group reads a group's CSV file, --connector a connector's REST body: give one")
	}
	return nil
}

// fileSnapshot reads --from-file and turns it into the snapshot to
// restore, reusing the key bytes of the latest stored snapshot where the
// cluster has none for a partition.
func (c *restoreCmd) fileSnapshot(ctx context.Context, cl *kgo.Client, st *store.Store, ropts restore.Options) (*snapshot.Snapshot, error) {
	data, err := os.ReadFile(c.fromFile)
	if err != nil {
		return nil, fmt.Errorf("read --from-file: %w; nothing was written", err)
	}
	connector := ""
	if len(c.connectors) == 1 {
		connector = c.connectors[0]
	}
	trimmed := strings.TrimLeft(string(data), " \t\r\n\ufeff")
	switch {
	case restore.IsStandaloneFile(data) && c.group != "":
		return nil, usagef("--from-file %s is a standalone worker's offsets file, which holds source offsets only: --group is for a group's CSV file", c.fromFile)
	case restore.IsStandaloneFile(data):
		connector = "" // it names its connectors; --connector limits the scope
	case strings.HasPrefix(trimmed, "{") && c.group != "":
		return nil, usagef("--from-file %s is a Connect REST offsets body: --group is for a group's CSV file; give --connector NAME instead", c.fromFile)
	case strings.HasPrefix(trimmed, "{") && len(c.connectors) != 1:
		return nil, usagef("--from-file %s is a Connect REST offsets body, which does not name its connector: give exactly one --connector NAME", c.fromFile)
	case !strings.HasPrefix(trimmed, "{") && len(c.connectors) > 0:
		return nil, usagef("--from-file %s is CSV, which names its groups: leave out --connector", c.fromFile)
	}
	// On a problem f still holds what is valid, and Snapshot reports the
	// problems again with those only the cluster can tell.
	parse := func() (*restore.OffsetsFile, error) { return restore.ParseOffsetsFile(c.fromFile, data, connector) }
	if c.group != "" {
		parse = func() (*restore.OffsetsFile, error) { return restore.ParseGroupCSV(c.fromFile, data, c.group) }
	}
	f, err := parse()
	if f == nil {
		return nil, err
	}
	var previous *snapshot.Snapshot
	if prev, _, err := st.Snapshots().GetWith(ctx, "latest", nil); err == nil {
		previous = prev
	} else if !errors.Is(err, snapshot.ErrNotFound) {
		return nil, fmt.Errorf("read the latest snapshot (for the key bytes of partitions the cluster has no key for): %w; nothing was written", err)
	}
	snap, warnings, err := f.Snapshot(ctx, cl, ropts, previous)
	if err != nil {
		return nil, fmt.Errorf("%w", kafkaconf.DescribeError(err))
	}
	n := len(f.Entries) + len(f.Rows) + len(f.Standalone)
	fmt.Fprintf(c.progress(), "file %s: %s, %s for %s\n", c.fromFile, f.Format, plural(n, "offset", "offsets"), plural(len(snap.Connectors), "connector", "connectors"))
	for _, w := range warnings {
		fmt.Fprintf(c.progress(), "warning: %s\n", w)
	}
	return snap, nil
}

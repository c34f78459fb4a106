package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/kafkaconf"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// Values of restore --via.
const (
	viaKafka   = "kafka"
	viaConnect = "connect"
)

// checkConnectUsage checks the flags that go with the Connect REST API.
func (c *restoreCmd) checkConnectUsage() error {
	switch {
	case c.via != viaKafka && c.via != viaConnect:
		return usagef("--via %q: want kafka or connect", c.via)
	case c.resume && !c.stopConnectors:
		return usagef("--resume resumes the connectors --stop-connectors stopped: give both")
	case c.stopConnectors && !c.g.connect.given():
		return usagef("--stop-connectors stops connectors through the Connect REST API: give --connect-url")
	case c.via == viaConnect && !c.g.connect.given():
		return usagef("--via connect writes through the Connect REST API: give --connect-url")
	}
	return nil
}

// connectPreflight makes the Connect REST client (nil without
// --connect-url) and, for --via connect, checks that the workers run Kafka
// 3.6 or later.
func (c *restoreCmd) connectPreflight(ctx context.Context) (*connectrest.Client, error) {
	rc, err := c.g.connect.client()
	if err != nil || rc == nil {
		return rc, err
	}
	if c.via == viaConnect {
		if _, err := rc.RequireOffsetsAPI(ctx); err != nil {
			if errors.Is(err, connectrest.ErrUnsupported) {
				return nil, refused{fmt.Errorf("--via connect: %w; nothing was written", err)}
			}
			return nil, fmt.Errorf("--via connect: %w; nothing was written", err)
		}
	}
	return rc, nil
}

// fileSnapshot reads --from-file and turns it into the snapshot to
// restore, reusing the key bytes of the latest stored snapshot where the
// cluster has none for a partition.
func (c *restoreCmd) fileSnapshot(ctx context.Context, cl *kgo.Client, store *snapshot.Store, ropts restore.Options) (*snapshot.Snapshot, error) {
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
	case strings.HasPrefix(trimmed, "{") && len(c.connectors) != 1:
		return nil, usagef("--from-file %s is a Connect REST offsets body, which does not name its connector: give exactly one --connector NAME", c.fromFile)
	case !strings.HasPrefix(trimmed, "{") && len(c.connectors) > 0:
		return nil, usagef("--from-file %s is CSV, which names its groups: leave out --connector", c.fromFile)
	}
	// On a problem f still holds what is valid, and Snapshot reports the
	// problems again with those only the cluster can tell.
	f, err := restore.ParseOffsetsFile(c.fromFile, data, connector)
	if f == nil {
		return nil, err
	}
	var previous *snapshot.Snapshot
	if prev, _, err := store.Get(ctx, "latest"); err == nil {
		previous = prev
	} else if !errors.Is(err, snapshot.ErrNotFound) {
		return nil, fmt.Errorf("read the latest snapshot (for the key bytes of partitions the cluster has no key for): %w; nothing was written", err)
	}
	snap, warnings, err := f.Snapshot(ctx, cl, ropts, previous)
	if err != nil {
		return nil, fmt.Errorf("%w", kafkaconf.DescribeError(err))
	}
	n := len(f.Entries) + len(f.Rows)
	fmt.Fprintf(c.stdout, "file %s: %s, %d offsets for %d connectors\n", c.fromFile, f.Format, n, len(snap.Connectors))
	for _, w := range warnings {
		fmt.Fprintf(c.stdout, "warning: %s\n", w)
	}
	return snap, nil
}

// stopFirst stops the connectors of the plan through the Connect REST API
// (or, with --dry-run, says it would) and returns the plan made again once
// they are stopped: they may have written until then. Refusals that
// stopping cannot resolve refuse before anything is stopped.
func (c *restoreCmd) stopFirst(ctx context.Context, stop *stopper, cl *kgo.Client, snap *snapshot.Snapshot, ropts restore.Options, plan *restore.Plan) (*restore.Plan, error) {
	todo := stop.toStop(plan)
	if c.dryRun {
		if len(todo) > 0 {
			names := make([]string, len(todo))
			for i, cp := range todo {
				names[i] = cp.Name
			}
			fmt.Fprintf(c.stdout, "dry run: --stop-connectors would stop %d connectors first: %s\n", len(todo), strings.Join(names, ", "))
		}
		return plan, nil
	}
	if !c.force {
		var blocking []restore.Refusal
		rest, err := restRefusals(ctx, stop.rc, plan)
		if err != nil {
			return nil, fmt.Errorf("check restore of snapshot %s: %w; nothing was written, nothing was stopped", snap.ID, err)
		}
		for _, r := range rest {
			if !stop.resolved(plan, r) {
				blocking = append(blocking, r)
			}
		}
		var refusal *restore.RefusedError
		if err := plan.Check(ctx, cl); errors.As(err, &refusal) {
			for _, r := range refusal.Refusals {
				if r.Check == restore.CheckCleanupPolicy || r.Check == restore.CheckConcurrentRestore {
					blocking = append(blocking, r)
				}
			}
		} else if err != nil {
			return nil, fmt.Errorf("check restore of snapshot %s: %w; nothing was written, nothing was stopped", snap.ID, err)
		}
		if len(blocking) > 0 {
			return nil, refused{fmt.Errorf("%w (nothing was stopped either)", &restore.RefusedError{Refusals: blocking})}
		}
	}
	if c.via == viaConnect && !c.force {
		if cp := plan.ConnectRequests(); len(cp.Unsendable) > 0 {
			return nil, refused{fmt.Errorf("%w (nothing was stopped either)", unsendable(cp))}
		}
	}
	if err := stop.stop(ctx, plan); err != nil {
		return nil, err
	}
	again, err := restore.NewPlan(ctx, cl, snap, ropts)
	if err != nil {
		return nil, fmt.Errorf("plan restore of snapshot %s once the connectors stopped: %w; nothing was written", snap.ID, kafkaconf.DescribeError(err))
	}
	return again, nil
}

// connectRequests builds the PATCH requests of --via connect and prints
// them with what Connect writes otherwise than the plan says. Changes
// Connect cannot make at all refuse the restore, unless --force.
func (c *restoreCmd) connectRequests(plan *restore.Plan) ([]restore.ConnectRequest, error) {
	cp := plan.ConnectRequests()
	for _, w := range cp.Warnings {
		fmt.Fprintf(c.stdout, "warning: --via connect: %s\n", w)
	}
	if len(cp.Unsendable) > 0 {
		if !c.force {
			return nil, refused{unsendable(cp)}
		}
		fmt.Fprintln(c.stderr, "WARNING: --force: these changes of the plan cannot be made through Connect and are left undone:")
		for _, u := range cp.Unsendable {
			fmt.Fprintf(c.stderr, "WARNING:   - %s\n", u)
		}
	}
	for _, r := range cp.Requests {
		fmt.Fprintf(c.stdout, "via connect: PATCH /connectors/%s/offsets with %d partitions (%s)\n", r.Connector, len(r.Entries), r.Type)
	}
	return cp.Requests, nil
}

// unsendable is the refusal of a restore through Connect that would leave
// changes undone.
func unsendable(cp *restore.ConnectPlan) error {
	rs := make([]restore.Refusal, len(cp.Unsendable))
	for i, u := range cp.Unsendable {
		rs[i] = restore.Refusal{Check: restore.CheckConnectState, Reason: "--via connect cannot make this change: " + u + "; restore --via kafka (the default) to write exact bytes"}
	}
	return &restore.RefusedError{Refusals: rs}
}

// applyConnect sends the requests and verifies them with GET.
func (c *restoreCmd) applyConnect(ctx context.Context, rc *connectrest.Client, reqs []restore.ConnectRequest, undoID string) error {
	results, err := restore.ApplyConnect(ctx, rc, reqs)
	for _, r := range results {
		fmt.Fprintf(c.stdout, "applied through Connect: connector %s, %d partitions: %s\n", r.Connector, r.Entries, r.Message)
		if r.FrameworkOnly {
			fmt.Fprintf(c.stdout, "note: connector %s: Connect altered only the offsets it manages itself; if the connector keeps offsets in its own system too, change them there by hand\n", r.Connector)
		}
	}
	if err != nil {
		return fmt.Errorf("%w; to roll back what was written: offsetkeeper restore %s", err, undoID)
	}
	v, err := restore.VerifyConnect(ctx, rc, reqs)
	if err != nil {
		return fmt.Errorf("%w; to roll back: offsetkeeper restore %s", err, undoID)
	}
	fmt.Fprintf(c.stdout, "verified through Connect: %d connectors show the restored offsets (GET /connectors/NAME/offsets)\n", v.Connectors)
	return nil
}

package capture

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// AddFromREST completes a snapshot read from Kafka with what Connect's
// REST API knows: each connector's plugin version (GET /connector-plugins,
// matched by its class), and every sink connector the workers run that the
// snapshot neither captured nor named: such a connector (its config in a
// config topic the capture did not read, say) is added to snap.Unread with
// the reason, so that no sink is left out in silence. A REST API that
// cannot be read is a warning in the snapshot, not an error: the offsets
// were read from Kafka.
func AddFromREST(ctx context.Context, rc *connectrest.Client, snap *snapshot.Snapshot) {
	plugins, err := rc.Plugins(ctx)
	if errors.Is(err, connectrest.ErrUnsupported) {
		return // Confluent Cloud: no workers to ask
	}
	if err != nil {
		snap.Warnings = append(snap.Warnings, fmt.Sprintf("plugin versions not recorded: %v", err))
	} else {
		for i := range snap.Connectors {
			c := &snap.Connectors[i]
			if p, ok := connectrest.FindPlugin(plugins, c.Class); ok && c.Class != "" {
				c.PluginVersion = p.Version
			}
		}
	}
	all, err := rc.Connectors(ctx)
	if err != nil {
		snap.Warnings = append(snap.Warnings, fmt.Sprintf("sink connectors not checked against Connect's REST API: %v", err))
		return
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range all {
			if !yield(n) {
				return
			}
		}
	}) {
		e := all[name]
		if e.Info == nil || !strings.EqualFold(e.Info.Type, snapshot.TypeSink) || len(snap.Scope) > 0 && !slices.Contains(snap.Scope, name) {
			continue
		}
		if _, ok := snap.Connector(name); ok {
			continue // captured, or warned of as having no group yet
		}
		group := e.Info.Config["consumer.override.group.id"]
		if group == "" {
			group = snapshot.DefaultGroupPrefix + name
		}
		if _, ok := snap.SinkGroupOf(name); ok {
			continue
		}
		snap.Unread = append(snap.Unread, snapshot.UnreadGroup{Group: group, Connector: name,
			Reason: "Connect's REST API runs this sink connector, but the config topics read do not hold it: check --config-topic (config.storage.topic of its workers) and take a new snapshot"})
	}
	slices.SortFunc(snap.Unread, func(a, b snapshot.UnreadGroup) int { return strings.Compare(a.Group, b.Group) })
}

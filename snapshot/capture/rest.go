package capture

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectjson"
	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// ErrRESTOffsetsUnsupported: the Connect workers do not serve GET
// /connectors/{name}/offsets (KIP-875, Kafka 3.5+), so offsets cannot be
// captured through the REST API. It wraps connectrest.ErrUnsupported.
var ErrRESTOffsetsUnsupported = fmt.Errorf("%w: capturing offsets through the Connect REST API needs GET /connectors/{name}/offsets, Kafka 3.5 or later (KIP-875)", connectrest.ErrUnsupported)

// RESTOptions are the options of CaptureREST.
type RESTOptions struct {
	// Connectors limits the capture to these connectors; empty means
	// every connector GET /connectors lists. A connector named that
	// Connect does not have is an error.
	Connectors []string
	// ProgramVersion and Reason are copied into the snapshot (Reason
	// default snapshot.ReasonManual).
	ProgramVersion string
	Reason         string
	// SkipMissing leaves out, without a warning, a connector named in
	// Connectors that Connect does not have, instead of failing: a
	// restore's live state, where such a connector is absent.
	SkipMissing bool
	// Warn, when set, is called with each warning as it is met (a
	// connector that vanished between the listing and its reads); the
	// snapshot's Warnings hold them too.
	Warn func(msg string)
}

// CaptureREST captures every connector's offsets through the Connect REST
// API alone: GET / for the Kafka cluster id, GET /connectors for the
// names, then per connector GET /connectors/{name}/config, /status and
// /offsets. It reads nothing from Kafka. The snapshot is marked
// snapshot.CapturedConnectREST (see there for what it holds): source
// offsets under Connect's normalised keys with no partitions, and each
// sink connector's offsets as its group's (consumer.override.group.id, or
// connect-<name>). A connector that vanishes between the listing and its
// reads is left out with a warning. Workers without GET offsets (Kafka
// 3.4 or older) are ErrRESTOffsetsUnsupported.
func CaptureREST(ctx context.Context, rc *connectrest.Client, opts RESTOptions) (*snapshot.Snapshot, error) {
	if opts.Reason == "" {
		opts.Reason = snapshot.ReasonManual
	}
	info, err := rc.ServerInfo(ctx)
	if err != nil {
		return nil, fmt.Errorf("read GET / of the Connect REST API: %w", err)
	}
	snap := &snapshot.Snapshot{
		Version:        snapshot.Version,
		CreatedAt:      time.Now().UTC(),
		ProgramVersion: opts.ProgramVersion,
		ClusterID:      info.KafkaClusterID,
		Reason:         opts.Reason,
		Scope:          slices.Clone(opts.Connectors),
		Captured:       snapshot.CapturedConnectREST,
		ConnectURL:     firstURL(rc),
		Topics:         []snapshot.Topic{},
		Connectors:     []snapshot.Connector{},
		SinkGroups:     []snapshot.SinkGroup{},
	}
	sort.Strings(snap.Scope)
	names := snap.Scope
	if len(names) == 0 {
		if names, err = rc.ConnectorNames(ctx); err != nil {
			return nil, fmt.Errorf("list connectors through the Connect REST API: %w", err)
		}
	}
	warn := func(msg string) {
		snap.Warnings = append(snap.Warnings, msg)
		if opts.Warn != nil {
			opts.Warn(msg)
		}
	}
	offs := []snapshot.SourceOffset{}
	for _, name := range names {
		err := captureConnectorREST(ctx, rc, snap, &offs, name, info)
		switch {
		case errors.Is(err, errVanished) && len(opts.Connectors) == 0:
			warn(fmt.Sprintf("connector %q was listed by GET /connectors but is gone (404) since: left out of the snapshot", name))
		case errors.Is(err, errVanished) && opts.SkipMissing:
		case errors.Is(err, errVanished):
			return nil, fmt.Errorf("capture connector %q through the Connect REST API: Connect does not have it (404); GET /connectors lists the connectors it has", name)
		case err != nil:
			return nil, err
		}
	}
	snap.SetSourceOffsets(offs)
	snap.Normalize()
	return snap, nil
}

// errVanished: a connector's config, status or offsets answered 404.
var errVanished = errors.New("connector not found")

// captureConnectorREST adds connector name's entry to snap and its source
// offsets to offs.
func captureConnectorREST(ctx context.Context, rc *connectrest.Client, snap *snapshot.Snapshot, offs *[]snapshot.SourceOffset, name string, info connectrest.ServerInfo) error {
	config, err := rc.Config(ctx, name)
	if errors.Is(err, connectrest.ErrNotFound) {
		return errVanished
	}
	if err != nil {
		return fmt.Errorf("read config of connector %q through the Connect REST API: %w", name, err)
	}
	st, err := rc.Status(ctx, name)
	if errors.Is(err, connectrest.ErrNotFound) {
		return errVanished
	}
	if err != nil {
		return fmt.Errorf("read status of connector %q through the Connect REST API: %w", name, err)
	}
	body, err := rc.Offsets(ctx, name)
	if err != nil {
		return offsetsError(ctx, rc, name, info, err)
	}
	entries, err := connectjson.DecodeOffsets(body, connectjson.DecodeOptions{})
	if err != nil {
		return fmt.Errorf("read offsets of connector %q: GET /connectors/%s/offsets: %w", name, name, err)
	}
	conn := restConnector(name, config, st)
	snap.Connectors = append(snap.Connectors, conn)
	if conn.Type == snapshot.TypeSink {
		g, err := restSinkGroup(conn, entries)
		if err != nil {
			return err
		}
		snap.SinkGroups = append(snap.SinkGroups, g)
		return nil
	}
	for _, e := range entries {
		o := snapshot.SourceOffset{
			Topic:     conn.OffsetsTopic,
			Partition: snapshot.NoPartition,
			Offset:    -1,
			Key:       connectjson.CanonicalKey(name, e.Partition),
			Value:     []byte("null"),
			Connector: name,
		}
		o.SourcePartition = connectjson.RESTMap(e.Partition)
		if e.Offset != nil {
			o.Value = connectjson.RESTMap(e.Offset)
			o.SourceOffset = json.RawMessage(o.Value)
		}
		*offs = append(*offs, o)
	}
	return nil
}

// offsetsError is the error of GET /connectors/{name}/offsets. Workers
// older than 3.5 have no such resource: they answer 404 (or 405) for a
// connector they do have, which tells the two apart.
func offsetsError(ctx context.Context, rc *connectrest.Client, name string, info connectrest.ServerInfo, err error) error {
	var apiErr *connectrest.Error
	if !errors.As(err, &apiErr) || (apiErr.Status != http.StatusNotFound && apiErr.Status != http.StatusMethodNotAllowed) {
		return fmt.Errorf("read offsets of connector %q through the Connect REST API: %w", name, err)
	}
	if apiErr.Status == http.StatusNotFound {
		known, kerr := rc.Known(ctx, name)
		if kerr != nil {
			return fmt.Errorf("read offsets of connector %q through the Connect REST API: %w (and GET /connectors/%s: %w)", name, err, name, kerr)
		}
		if !known {
			return errVanished
		}
	}
	return fmt.Errorf("%w: the workers run %s and answer %d to GET /connectors/%s/offsets; upgrade Connect, or capture from the Kafka topics (snapshot without --via connect)",
		ErrRESTOffsetsUnsupported, versionOf(info), apiErr.Status, name)
}

func versionOf(info connectrest.ServerInfo) string {
	if info.Version == "" {
		return "an unknown version"
	}
	return "version " + info.Version
}

// restConnector is the snapshot's entry for a connector read through REST.
func restConnector(name string, config map[string]string, st connectrest.Status) snapshot.Connector {
	c := snapshot.Connector{Name: name, HasConfig: true, Config: config, Class: config["connector.class"], Tasks: len(st.Tasks), Type: snapshot.TypeSource}
	switch {
	case st.Type == snapshot.TypeSink, st.Type != snapshot.TypeSource && snapshot.ConnectorType(config) == snapshot.TypeSink:
		c.Type = snapshot.TypeSink
		c.Group = config["consumer.override.group.id"]
		if c.Group == "" {
			c.Group = snapshot.DefaultGroupPrefix + name
		}
	default:
		c.OffsetsTopic = config["offsets.storage.topic"]
		c.ExactlyOnce = config["exactly.once.support"]
	}
	switch st.Connector.State {
	case connectrest.StateStopped:
		c.TargetState = snapshot.StateStopped
	case connectrest.StatePaused:
		c.TargetState = snapshot.StatePaused
	default:
		c.TargetState = snapshot.StateStarted
	}
	return c
}

// restSinkGroup is a sink connector's group from its REST offsets.
func restSinkGroup(conn snapshot.Connector, entries []connectjson.OffsetEntry) (snapshot.SinkGroup, error) {
	g := snapshot.SinkGroup{Group: conn.Group, Connector: conn.Name, Offsets: []snapshot.SinkOffset{}}
	for _, e := range entries {
		topic, tok := e.Partition.Get(connectjson.SinkTopicKey)
		part, pok := e.Partition.Get(connectjson.SinkPartitionKey)
		if !tok || !pok || part.Kind() != connectjson.KindLong || topic.Kind() != connectjson.KindString {
			return g, fmt.Errorf("read offsets of sink connector %q: partition %s is not {%q, %q}", conn.Name, connectjson.RESTMap(e.Partition), connectjson.SinkTopicKey, connectjson.SinkPartitionKey)
		}
		if e.Offset == nil {
			continue // nothing committed
		}
		off, ok := e.Offset.Get(connectjson.SinkOffsetKey)
		if !ok || off.Kind() != connectjson.KindLong {
			return g, fmt.Errorf("read offsets of sink connector %q: offset %s is not {%q: N}", conn.Name, connectjson.RESTMap(e.Offset), connectjson.SinkOffsetKey)
		}
		g.Offsets = append(g.Offsets, snapshot.SinkOffset{Topic: topic.Str(), Partition: int32(part.Long()), Offset: off.Long(), LeaderEpoch: -1})
	}
	return g, nil
}

// firstURL is the worker URL tried first.
func firstURL(rc *connectrest.Client) string {
	if urls := rc.URLs(); len(urls) > 0 {
		return urls[0]
	}
	return ""
}

package restore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectjson"
	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// CheckConnectState names the refusals that come from the Connect REST API
// rather than from Kafka: a connector whose REST status is not STOPPED
// with no tasks, REST workers of another Kafka cluster, or a connector
// Connect cannot alter. Refusal.Check has it.
const CheckConnectState = "connect-rest-state"

// ConnectRequest is the PATCH /connectors/{name}/offsets that restores one
// connector's offsets through the Connect REST API.
type ConnectRequest struct {
	Connector string
	// Type is source or sink.
	Type string
	// Entries are the partitions written, each with its offset, or a nil
	// Offset (JSON null) where the partition must disappear.
	Entries []ConnectEntry
	// Body is the request body: {"offsets":[...]} holding Entries as
	// Connect renders them, sorted by partition.
	Body []byte
}

// ConnectEntry is one partition of a ConnectRequest: its Offset is nil
// for null, and the partition's offset is removed.
type ConnectEntry = connectjson.OffsetEntry

// ConnectPlan is a plan as PATCH requests to the Connect REST API.
type ConnectPlan struct {
	// Requests hold one PATCH per connector that has something to write.
	Requests []ConnectRequest
	// Warnings are about keys Connect writes in another byte form than the
	// snapshot's: see Plan.ConnectRequests.
	Warnings []string
	// Unsendable are the changes of the plan Connect cannot make, one line
	// each; a restore through Connect would leave them undone.
	Unsendable []string
}

// ConnectRequests turns the plan into PATCH requests for the Connect REST
// API, and says what Connect cannot write as the plan says:
//   - Connect normalizes every source key through its JsonConverter (Java
//     HashMap field order, Jackson escaping: connectjson.CanonicalKey). A
//     change of a key stored only in another byte form (a connector that
//     builds its partition map in another order, a copy-constructed map) is
//     sent, and Connect writes it under the canonical bytes, which a task
//     looking up the original bytes never reads: each is a Warning. A
//     change of such a key when the canonical form exists too cannot be
//     sent without overwriting that form: it is Unsendable.
//   - A stray copy off its murmur2 partition cannot be removed through
//     Connect, nor can a key that is not [connector, {flat map}]: Unsendable.
//   - A connector with no config here cannot be altered through Connect (it
//     answers 404): its changes are Unsendable.
//
// Sink offsets are sent as {"kafka_topic","kafka_partition"} ->
// {"kafka_offset"}; Connect commits them without metadata. Values are sent
// as Connect renders them (connectjson.RESTMap); removed ones as null.
func (p *Plan) ConnectRequests() *ConnectPlan {
	cp := &ConnectPlan{}
	for _, c := range p.Connectors {
		var src, sink []ConnectEntry
		if c.Source != nil {
			src = sourceEntries(c.Name, c.Source, cp)
		}
		if c.Sink != nil {
			sink = sinkEntries(c.Sink)
		}
		entries, typ := src, snapshot.TypeSource
		switch {
		case len(sink) > 0 && len(src) > 0:
			other := "sink group offsets"
			if c.Type == snapshot.TypeSink {
				entries, typ, other = sink, snapshot.TypeSink, "source keys"
			}
			cp.Unsendable = append(cp.Unsendable, fmt.Sprintf("connector %q: its %s (Connect alters one kind of offsets per connector, by its type)", c.Name, other))
		case len(sink) > 0:
			entries, typ = sink, snapshot.TypeSink
		}
		if len(entries) == 0 {
			continue
		}
		if !c.Live.HasConfig {
			cp.Unsendable = append(cp.Unsendable, fmt.Sprintf("connector %q: %s: it has no config here, so Connect cannot alter its offsets (it answers 404)", c.Name, plural(len(entries), "partition", "partitions")))
			continue
		}
		cp.Requests = append(cp.Requests, ConnectRequest{Connector: c.Name, Type: typ, Entries: entries, Body: connectjson.EncodeOffsets(entries)})
	}
	return cp
}

// sourceEntries picks, per partition, the change Connect can carry out.
func sourceEntries(name string, sp *SourcePlan, cp *ConnectPlan) []ConnectEntry {
	type cand struct {
		ch        SourceChange
		partition connectjson.Map
		canonical bool
	}
	groups := map[string][]cand{}
	var order []string
	for _, ch := range sp.Changes() {
		if ch.Stray {
			what := "tombstone of the stray copy"
			if ch.Action == Changed {
				what = "the snapshot's value for its copy"
			}
			cp.Unsendable = append(cp.Unsendable, fmt.Sprintf("connector %q: %s of key %s on %s/%d (Connect writes to the murmur2 partition only)", name, what, DisplayKey(ch.Key), ch.Topic, ch.Partition))
			continue
		}
		conn, m, _, err := connectjson.ParseKey(ch.Key)
		if err != nil || conn != name || connectjson.Nested(m) {
			if ch.Action.writes() {
				cp.Unsendable = append(cp.Unsendable, fmt.Sprintf("connector %q: key %s (%s): it is not [%q, {flat partition}]", name, DisplayKey(ch.Key), ch.Action, name))
			}
			continue
		}
		canon := connectjson.CanonicalKey(name, m)
		k := string(canon)
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], cand{ch: ch, partition: m, canonical: bytes.Equal(canon, ch.Key)})
	}
	var out []ConnectEntry
	for _, k := range order {
		cs := groups[k]
		hasCanonical := false
		for _, c := range cs {
			hasCanonical = hasCanonical || c.canonical
		}
		best := -1
		for i, c := range cs {
			if !c.ch.Action.writes() || c.canonical != hasCanonical {
				continue
			}
			if best < 0 || (c.ch.Topic == sp.Target && cs[best].ch.Topic != sp.Target) {
				best = i
			}
		}
		for _, c := range cs {
			if c.ch.Action.writes() && !c.canonical && hasCanonical {
				cp.Unsendable = append(cp.Unsendable, fmt.Sprintf("connector %q: key %s (%s): Connect would write it under %s, the byte form it uses, which holds its own offset here", name, DisplayKey(c.ch.Key), c.ch.Action, DisplayKey([]byte(k))))
			}
		}
		if best < 0 {
			continue
		}
		pick := cs[best]
		if !pick.canonical {
			cp.Warnings = append(cp.Warnings, fmt.Sprintf("connector %q: key %s is not in the byte form Connect writes: through Connect its offset goes under %s (Java HashMap field order), which a task looking up the original bytes never reads; restore --via kafka (the default) to write the exact bytes", name, DisplayKey(pick.ch.Key), DisplayKey([]byte(k))))
		}
		e := ConnectEntry{Partition: pick.partition}
		if pick.ch.Action != Removed {
			m, err := connectjson.ParseMap(pick.ch.New)
			switch {
			case err == nil && !connectjson.Nested(m):
				e.Offset = m
			case errors.Is(err, connectjson.ErrNullOffset):
				cp.Warnings = append(cp.Warnings, fmt.Sprintf("connector %q: the snapshot's value of key %s is JSON null (no offset); through Connect it becomes a tombstone", name, DisplayKey(pick.ch.Key)))
			default:
				cp.Unsendable = append(cp.Unsendable, fmt.Sprintf("connector %q: key %s: its value %s is not an offset Connect accepts", name, DisplayKey(pick.ch.Key), displayValue(pick.ch.New)))
				continue
			}
		}
		out = append(out, e)
	}
	return out
}

func sinkEntries(sp *SinkPlan) []ConnectEntry {
	var out []ConnectEntry
	for _, ch := range sp.Changes() {
		e := ConnectEntry{Partition: connectjson.SinkPartition(ch.Topic, ch.Partition)}
		switch ch.Action {
		case Changed, Added:
			e.Offset = connectjson.SinkOffset(ch.New)
		case Removed:
		default:
			continue
		}
		out = append(out, e)
	}
	return out
}

// ConnectResult is what Connect answered to one ConnectRequest.
type ConnectResult struct {
	Connector string
	// Entries is how many partitions were sent.
	Entries int
	// Message is Connect's answer; FrameworkOnly is set when it says it
	// altered only the offsets it manages itself (see
	// connectrest.AlterResult).
	Message       string
	FrameworkOnly bool
	// Phases and Took are how a Confluent Cloud offsets request went
	// (see connectrest.AlterResult); empty for Connect.
	Phases []string
	Took   time.Duration
}

// ApplyConnect sends each request with PATCH /connectors/{name}/offsets,
// in order. Connect checks that each connector is STOPPED with no tasks.
// Against Confluent Cloud each is an offsets request whose status is
// polled until APPLIED (connectrest cloud mode); one that FAILED or is
// still pending ends the loop like any error.
// On failure it returns what was done so far with an error wrapping
// ErrApply that names the connectors already altered.
func ApplyConnect(ctx context.Context, rc *connectrest.Client, reqs []ConnectRequest) ([]ConnectResult, error) {
	var out []ConnectResult
	for _, r := range reqs {
		res, err := rc.AlterOffsets(ctx, r.Connector, r.Body)
		if err != nil {
			done := "nothing was altered"
			if len(out) > 0 {
				names := make([]string, len(out))
				for i, o := range out {
					names[i] = o.Connector
				}
				done = "already altered: " + strings.Join(names, ", ")
			}
			return out, fmt.Errorf("%w: alter offsets of connector %q through Connect: %w (%s)", ErrApply, r.Connector, err, done)
		}
		out = append(out, ConnectResult{Connector: r.Connector, Entries: len(r.Entries), Message: res.Message, FrameworkOnly: res.FrameworkOnly, Phases: res.Phases, Took: res.Took})
	}
	return out, nil
}

// VerifyConnect reads each request's connector back with GET
// /connectors/{name}/offsets and checks that Connect shows every partition
// sent with the offset sent (equal as Connect compares maps: field order
// and number spelling aside), and none of those sent as null (or shows
// them with a null offset). That is what the connector's tasks will read
// when their keys are in the form Connect writes. Verification.Plan is nil.
// It returns an error wrapping ErrVerifyFailed, with the Verification, when
// anything differs.
func VerifyConnect(ctx context.Context, rc *connectrest.Client, reqs []ConnectRequest) (*Verification, error) {
	v := &Verification{Connectors: len(reqs)}
	for _, r := range reqs {
		body, err := rc.Offsets(ctx, r.Connector)
		if err != nil {
			return nil, fmt.Errorf("verify restore through Connect: %w", err)
		}
		got, err := connectjson.DecodeOffsets(body, connectjson.DecodeOptions{})
		if err != nil {
			return nil, fmt.Errorf("verify restore through Connect: GET /connectors/%s/offsets: %w", r.Connector, err)
		}
		for _, want := range r.Entries {
			var found *ConnectEntry
			for i := range got {
				if connectjson.Equal(got[i].Partition, want.Partition) {
					found = &got[i]
					break
				}
			}
			p := connectjson.RESTMap(want.Partition)
			switch {
			case want.Offset == nil && found != nil && found.Offset != nil:
				v.Differences = append(v.Differences, fmt.Sprintf("connector %q: partition %s: Connect shows offset %s, it should be gone", r.Connector, p, connectjson.RESTMap(found.Offset)))
			case want.Offset == nil:
			case found == nil:
				v.Differences = append(v.Differences, fmt.Sprintf("connector %q: partition %s: Connect does not list it, want offset %s", r.Connector, p, connectjson.RESTMap(want.Offset)))
			case found.Offset == nil:
				v.Differences = append(v.Differences, fmt.Sprintf("connector %q: partition %s: Connect shows a null offset, want %s", r.Connector, p, connectjson.RESTMap(want.Offset)))
			case !connectjson.Equal(found.Offset, want.Offset):
				v.Differences = append(v.Differences, fmt.Sprintf("connector %q: partition %s: Connect shows offset %s, want %s", r.Connector, p, connectjson.RESTMap(found.Offset), connectjson.RESTMap(want.Offset)))
			}
		}
	}
	if len(v.Differences) > 0 {
		return v, fmt.Errorf("%w: %s in Connect's view:\n  - %s", ErrVerifyFailed, plural(len(v.Differences), "offset differs", "offsets differ"), strings.Join(v.Differences, "\n  - "))
	}
	return v, nil
}

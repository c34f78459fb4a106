package restore

// This file is the restore side of the expiry guard (issue 37): resuming
// a sink that was stopped before the restore (Request.Start), and saying
// when the offsets of an Empty classic group will expire.

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// startStopped adds to the connectors finish resumes those the plan
// writes that were stopped before the restore (not in todo): a stopped
// sink restored and left stopped loses its offsets again when they expire.
func (s *stopper) startStopped(plan *Plan, todo []ConnectorPlan) {
	for _, cp := range plan.Connectors {
		if !slices.Contains(s.waited, cp.Name) || slices.ContainsFunc(todo, func(t ConnectorPlan) bool { return t.Name == cp.Name }) {
			continue
		}
		s.stopped = append(s.stopped, stoppedConnector{name: cp.Name, target: snapshot.StateStarted, before: cp.State()})
	}
}

// ExpiryNote says when the offsets a restore commits into an Empty
// classic group expire: Kafka keeps counting from when the group became
// Empty (emptySince, nil when unknown), and a commit does not reset that
// clock (KIP-211). It is "" for a group with members.
func ExpiryNote(group string, state string, emptySince *time.Time, retention time.Duration, now time.Time) string {
	if state != snapshot.GroupStateEmpty || retention <= 0 {
		return ""
	}
	if emptySince == nil {
		return fmt.Sprintf("group %q has no members: Kafka deletes the offsets restored into it offsets.retention.minutes=%d after it became Empty (committing does not reset that clock), at the latest %s, unless the connector is resumed before (restore --start resumes it)", group, int64(retention/time.Minute), FormatMoment(now.Add(retention).Truncate(time.Millisecond)))
	}
	at := emptySince.Add(retention)
	return fmt.Sprintf("group %q is Empty since %s: Kafka deletes the offsets restored into it at %s (offsets.retention.minutes=%d; committing does not reset that clock), unless the connector is resumed before (restore --start resumes it)", group, FormatMoment(*emptySince), FormatMoment(at), int64(retention/time.Minute))
}

// noteExpiry notes, for each sink group the plan commits into that has
// no members (Empty, or created by the commit), when Kafka will delete
// the offsets restored unless the connector is resumed. The broker's
// offsets.retention.minutes is read once; a failed read is a warning.
func (p *Plan) noteExpiry(ctx context.Context, adm *kadm.Client) {
	var groups []*SinkPlan
	for _, cp := range p.Connectors {
		if sp := cp.Sink; sp != nil && sp.Members == 0 && p.writesSink(cp.Name) {
			groups = append(groups, sp)
		}
	}
	if len(groups) == 0 {
		return
	}
	retention, err := capture.ReadOffsetsRetention(ctx, adm)
	if err != nil {
		p.warnf("cannot read offsets.retention.minutes (%v): when the offsets restored into stopped sinks' groups expire is not said", err)
		return
	}
	now := time.Now()
	for _, sp := range groups {
		var since *time.Time
		if g, ok := p.Live.SinkGroupOf(p.connectorOf(sp)); ok && g.Group == sp.Group {
			since = g.EmptySince
		}
		p.Notes = append(p.Notes, ExpiryNote(sp.Group, snapshot.GroupStateEmpty, since, retention, now))
	}
}

// connectorOf is the name of the connector whose sink plan sp is.
func (p *Plan) connectorOf(sp *SinkPlan) string {
	for _, cp := range p.Connectors {
		if cp.Sink == sp {
			return cp.Name
		}
	}
	return ""
}

// WithStart is run, a restore command of s, that also resumes the
// connectors it writes that were stopped before (--start) when s stops
// and resumes them (a Connect URL is known, not Confluent Cloud's nor a
// topic layout's): restored and left stopped, a sink's offsets would
// expire again.
func (s CommandSettings) WithStart(run string) string {
	if s.ConnectURL && !s.Cloud && !s.Layout {
		return run + " --start"
	}
	return run
}

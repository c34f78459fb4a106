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
	return expiryNote(group, state, emptySince, retention, now, resumeHintStart)
}

// The hints an expiry note ends with: what resumes the connector in time.
const (
	// resumeHintStart: the connector was stopped before the restore.
	resumeHintStart = "restore --start resumes it"
	// resumeHintStartFlags: the same, for a restore run without
	// --stop-connectors (and a Connect URL), which --start goes with.
	resumeHintStartFlags = "resume it, or restore with --connect-url, --stop-connectors, --resume and --start"
	// resumeHintResume: this restore stops the connector, without
	// --resume.
	resumeHintResume = "restore --resume resumes it"
	// resumeHintResumeStart: stopped before, and the restore stops
	// connectors without --resume.
	resumeHintResumeStart = "restore --resume --start resumes it"
)

func expiryNote(group string, state string, emptySince *time.Time, retention time.Duration, now time.Time, hint string) string {
	if state != snapshot.GroupStateEmpty || retention <= 0 {
		return ""
	}
	if emptySince == nil {
		return fmt.Sprintf("group %q has no members: Kafka deletes the offsets restored into it offsets.retention.minutes=%d after it became Empty (committing does not reset that clock), at the latest %s, unless the connector is resumed before (%s)", group, int64(retention/time.Minute), FormatMoment(now.Add(retention).Truncate(time.Millisecond)), hint)
	}
	at := emptySince.Add(retention)
	return fmt.Sprintf("group %q is Empty since %s: Kafka deletes the offsets restored into it at %s (offsets.retention.minutes=%d; committing does not reset that clock), unless the connector is resumed before (%s)", group, FormatMoment(*emptySince), FormatMoment(at), int64(retention/time.Minute), hint)
}

// commitTimeNote is the expiry note of a group Kafka expires offset by
// offset, by commit time (snapshot.RuleCommitTime): a consumer-protocol
// group (modern/consumer/ConsumerGroup.java offsetExpirationCondition),
// or a classic group without a protocol type, which is what the restore's
// commit creates when the group does not exist (GroupMetadataManager
// getOrMaybeCreateClassicGroup; classic/ClassicGroup.java
// offsetExpirationCondition). There the commit does reset the clock, for
// the offsets it commits.
func commitTimeNote(group, typ string, exists bool, retention time.Duration, now time.Time, hint string) string {
	what := "has no members and no protocol type"
	switch {
	case typ == capture.GroupTypeConsumer:
		what = "(consumer protocol) has no members"
	case !exists:
		what = "does not exist: the restore's commit creates it without members or protocol type"
	}
	return fmt.Sprintf("group %q %s: Kafka deletes each of its offsets offsets.retention.minutes=%d after it was committed, those this restore commits at %s, unless the connector is resumed before (%s)",
		group, what, int64(retention/time.Minute), FormatMoment(now.Add(retention).Truncate(time.Millisecond)), hint)
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
		name := p.connectorOf(sp)
		e := expiryAt{connector: name, group: sp.Group, retention: retention, at: now, exists: sp.Exists, rule: snapshot.RuleEmptySince}
		g, ok := p.Live.SinkGroupOf(name)
		switch {
		case !sp.Exists:
			e.rule = snapshot.RuleCommitTime
		case ok && g.Group == sp.Group:
			e.since, e.typ = g.EmptySince, g.Type
			if rule := snapshot.ExpiryRule(g, g.Type == capture.GroupTypeConsumer); rule != snapshot.RuleNone {
				e.rule = rule
			}
		}
		p.expiring = append(p.expiring, e)
		p.Notes = append(p.Notes, e.note(resumeHintStart))
	}
}

// expiryAt is one expiry note of the plan, kept so that the run, which
// knows what it resumes, can settle it (settleExpiry).
type expiryAt struct {
	connector, group string
	since            *time.Time
	retention        time.Duration
	at               time.Time
	// rule is Kafka's expiry rule for the group (snapshot.ExpiryRule); typ
	// its type and exists whether it exists before the restore.
	rule, typ string
	exists    bool
}

func (e expiryAt) note(hint string) string {
	if e.rule == snapshot.RuleCommitTime {
		return commitTimeNote(e.group, e.typ, e.exists, e.retention, e.at, hint)
	}
	return expiryNote(e.group, snapshot.GroupStateEmpty, e.since, e.retention, e.at, hint)
}

// settleExpiry fits the plan's expiry notes to what the run does: a
// connector the run resumes (or pauses again) at its end has members in
// its group again, and its offsets do not expire, so its note goes; the
// others name what would resume it (hint). A note for a connector the
// run resumes would tell the operator to do what the run does already.
func (p *Plan) settleExpiry(resumed map[string]bool, hint func(connector string) string) {
	for _, e := range p.expiring {
		i := slices.Index(p.Notes, e.note(resumeHintStart))
		if i < 0 {
			continue
		}
		if resumed[e.connector] {
			p.Notes = slices.Delete(p.Notes, i, i+1)
			continue
		}
		p.Notes[i] = e.note(hint(e.connector))
	}
	p.expiring = nil
}

// resumes names the connectors of the plan the run leaves RUNNING or
// PAUSED at its end (what Resume puts back, with Start also what was
// stopped before); in a dry run, what the real run would. It is nil
// without StopConnectors and Resume.
func (r *run) resumes(plan *Plan) map[string]bool {
	if r.stop == nil || !r.req.Resume {
		return nil
	}
	out := map[string]bool{}
	if !r.req.DryRun {
		for _, sc := range r.stop.stopped {
			if !sc.created || sc.target != snapshot.StateStopped {
				out[sc.name] = true
			}
		}
		return out
	}
	for _, cp := range plan.Connectors {
		if !cp.Writes() {
			continue
		}
		if !cp.Live.HasConfig {
			// --create-connectors creates it STOPPED; it resumes it unless
			// the state restored has it STOPPED and there is no --start.
			if c, ok := r.req.Snapshot.Connector(cp.Name); r.req.CreateConnectors && ok && c.HasConfig && (r.req.Start || c.TargetState != snapshot.StateStopped) {
				out[cp.Name] = true
			}
			continue
		}
		if !cp.Live.Stopped() || r.req.Start {
			out[cp.Name] = true
			continue
		}
		// resumeAsRestored: stopped here, running in the state restored.
		if c, ok := r.req.Snapshot.Connector(cp.Name); ok && c.HasConfig && (c.TargetState == snapshot.StateStarted || c.TargetState == snapshot.StatePaused) {
			out[cp.Name] = true
		}
	}
	return out
}

// resumeHint is what would resume a connector in time, for one the run
// does not resume: --resume for one this run stops, --start for one that
// was stopped before (with the flags --start goes with).
func (r *run) resumeHint(plan *Plan) func(string) string {
	return func(name string) string {
		switch {
		case r.stop == nil:
			return resumeHintStartFlags
		case r.req.Resume:
			return resumeHintStart
		case slices.ContainsFunc(r.stop.stopped, func(sc stoppedConnector) bool { return sc.name == name }),
			slices.ContainsFunc(plan.Connectors, func(cp ConnectorPlan) bool { return cp.Name == name && !cp.Live.Stopped() }):
			return resumeHintResume
		}
		return resumeHintResumeStart
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

package restore

import (
	"errors"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// Outcomes of a Run, as Report.Outcome has them.
const (
	// OutcomeRestored: the plan was written and verified.
	OutcomeRestored = "restored"
	// OutcomeNothingToDo: the live state already matches the snapshot.
	OutcomeNothingToDo = "nothing-to-do"
	// OutcomePlanned: a dry run whose real run would go ahead.
	OutcomePlanned = "planned"
	// OutcomeRefused: a safety check refused (in a dry run: would refuse);
	// nothing was written.
	OutcomeRefused = "refused"
	// OutcomeFailed: an error; Report.Undo says whether anything was
	// written before it.
	OutcomeFailed = "failed"
)

// Document is a Report as restore --output json prints it (see
// docs/json-output.md): one JSON object, its fields only ever added to.
type Document struct {
	// Snapshot is the ID of the snapshot restored (a file's name for
	// --from-file).
	Snapshot string `json:"snapshot"`
	DryRun   bool   `json:"dry_run"`
	// Forced is set when Force skipped the safety checks.
	Forced  bool   `json:"forced"`
	Outcome string `json:"outcome"`
	// Error is why the restore failed or was refused, as the text output
	// says it; absent on success.
	Error string `json:"error,omitempty"`
	// Commands are the commands Error advises, each whole, as they run
	// (the text output puts each on lines of its own).
	Commands []string `json:"commands,omitempty"`
	// AfterResets are the resets the journal saw of connectors in scope
	// that the state restored was captured after: it holds the damage.
	// Each gives the restore back to just before it ([] when none).
	AfterResets []AfterReset `json:"after_resets"`
	// Plan is null when the restore failed before it had a plan.
	Plan *PlanDocument `json:"plan"`
	// Refusals are the safety checks' reasons to refuse ([] when none);
	// under Force, those it skipped.
	Refusals []Refusal `json:"refusals"`
	// Stopped are the connectors StopConnectors stopped; Fenced the other
	// restores' transactions Force fenced.
	Stopped []string `json:"stopped"`
	Fenced  []string `json:"fenced"`
	// Created is what --create-connectors did (or, in a dry run, would
	// do) with each connector of the scope; [] without it.
	Created []Creation `json:"created"`
	// Unowned are the offsets topic keys no connector owns, compared by
	// --include-unowned; [] without it.
	Unowned []UnownedChange `json:"unowned"`
	// UndoSnapshot is the undo snapshot's ID, "" when nothing was written.
	UndoSnapshot string `json:"undo_snapshot"`
	// Written is what was written, null when nothing was.
	Written *WrittenDocument `json:"written"`
	// Verified is the read back after writing, null when nothing was
	// written.
	Verified *VerifiedDocument `json:"verified"`
	// OffsetsTopic is what --to-offsets-topic did (or, in a dry run,
	// would do) to its topic; absent without it.
	OffsetsTopic *OffsetsTopicReport `json:"offsets_topic,omitempty"`
	// LeftStopped are the connectors the restore wrote that it leaves
	// STOPPED or PAUSED, not stopped by it: why, and the command that
	// starts each; absent when none.
	LeftStopped []LeftStopped `json:"left_stopped,omitempty"`
}

// PlanDocument is a Plan in a Document.
type PlanDocument struct {
	SnapshotCreatedAt time.Time           `json:"snapshot_created_at"`
	SnapshotClusterID string              `json:"snapshot_cluster_id"`
	ClusterID         string              `json:"cluster_id"`
	OtherCluster      bool                `json:"other_cluster"`
	Counts            CountsDocument      `json:"counts"`
	Warnings          []string            `json:"warnings"`
	Notes             []string            `json:"notes,omitempty"`
	Connectors        []ConnectorDocument `json:"connectors"`
	// SinkGuard are the sink traps found (sinkguard.go).
	SinkGuard []SinkGuardFinding `json:"sink_guard"`
}

// CountsDocument are a plan's totals.
type CountsDocument struct {
	SourceWrites    int `json:"source_writes"`
	Tombstones      int `json:"tombstones"`
	SinkCommits     int `json:"sink_commits"`
	SinkDeletions   int `json:"sink_deletions"`
	SourceUnchanged int `json:"source_unchanged"`
	SinkUnchanged   int `json:"sink_unchanged"`
	SinkSkipped     int `json:"sink_skipped"`
}

// ConnectorDocument is one connector of a plan.
type ConnectorDocument struct {
	Name string `json:"name"`
	Type string `json:"type"`
	// State is the config topic's state ("STARTED, 1 task", "no config");
	// REST the Connect REST API's, when asked.
	State string `json:"state"`
	REST  string `json:"rest,omitempty"`
	// Writes tells whether the plan writes anything for it; LeftAlone is
	// set for a running, paused or member-holding one it does not write.
	Writes    bool            `json:"writes"`
	LeftAlone bool            `json:"left_alone"`
	Source    *SourceDocument `json:"source,omitempty"`
	Sink      *SinkDocument   `json:"sink,omitempty"`
}

// SourceDocument is a connector's source offsets in a plan: the keys it
// writes, the unchanged ones counted.
type SourceDocument struct {
	Target      string                 `json:"target"`
	ExactlyOnce bool                   `json:"exactly_once"`
	Unchanged   int                    `json:"unchanged"`
	Changes     []SourceChangeDocument `json:"changes"`
}

// SourceChangeDocument is one source key written.
type SourceChangeDocument struct {
	Action    Action         `json:"action"`
	Topic     string         `json:"topic"`
	Partition int32          `json:"partition"`
	Key       snapshot.Bytes `json:"key"`
	// Old is absent when added; New is null for a tombstone.
	Old   snapshot.Bytes `json:"old,omitempty"`
	New   snapshot.Bytes `json:"new"`
	From  string         `json:"from,omitempty"`
	Stray bool           `json:"stray,omitempty"`
}

// SinkDocument is a connector's group offsets in a plan: the partitions
// it writes or skips, the unchanged ones counted.
type SinkDocument struct {
	Group     string               `json:"group"`
	Exists    bool                 `json:"exists"`
	State     string               `json:"state,omitempty"`
	Members   int                  `json:"members"`
	Unchanged int                  `json:"unchanged"`
	Changes   []SinkChangeDocument `json:"changes"`
}

// SinkChangeDocument is one group offset written or skipped; -1 is none.
type SinkChangeDocument struct {
	Action    Action `json:"action"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Old       int64  `json:"old"`
	New       int64  `json:"new"`
	Reason    string `json:"reason,omitempty"`
}

// WrittenDocument is what a restore wrote: into Kafka (Via "kafka") or
// through Connect (Via "connect", Connect set).
type WrittenDocument struct {
	Via           string                   `json:"via"`
	SourceWrites  int                      `json:"source_writes"`
	Tombstones    int                      `json:"tombstones"`
	SinkCommits   int                      `json:"sink_commits"`
	SinkDeletions int                      `json:"sink_deletions"`
	Topics        []WrittenTopicDocument   `json:"topics"`
	Groups        []string                 `json:"groups"`
	Connect       []ConnectWrittenDocument `json:"connect,omitempty"`
}

// WrittenTopicDocument is one offsets topic written, in one transaction.
type WrittenTopicDocument struct {
	Topic      string `json:"topic"`
	Records    int    `json:"records"`
	Partitions int32  `json:"partitions"`
}

// ConnectWrittenDocument is one PATCH request's answer.
type ConnectWrittenDocument struct {
	Connector     string `json:"connector"`
	Partitions    int    `json:"partitions"`
	Message       string `json:"message"`
	FrameworkOnly bool   `json:"framework_only"`
}

// VerifiedDocument is the read back after writing.
type VerifiedDocument struct {
	OK          bool     `json:"ok"`
	Connectors  int      `json:"connectors"`
	Differences []string `json:"differences"`
}

// Document is the report as restore --output json prints it; err is what
// Run returned with it.
func (r *Report) Document(err error) *Document {
	d := &Document{
		Snapshot: r.Snapshot, DryRun: r.DryRun, Forced: r.Forced, Outcome: r.Outcome,
		Refusals: nonNil(r.Refusals), Stopped: nonNil(r.Stopped), Fenced: nonNil(r.Fenced),
		UndoSnapshot: r.Undo, OffsetsTopic: r.OffsetsTopic, Created: nonNil(r.Created), Unowned: nonNil(r.Unowned), AfterResets: nonNil(r.AfterResets), LeftStopped: r.LeftStopped,
	}
	if err != nil {
		d.Error = err.Error()
		d.Commands, _ = AdvisedCommands(err)
		var refused *RefusedError
		if len(r.Refusals) == 0 && errors.As(err, &refused) {
			d.Refusals = refused.Refusals // refused before the checks' report, by stopping or Connect
		}
		if d.Outcome == "" {
			d.Outcome = OutcomeFailed
			if errors.Is(err, ErrRefused) {
				d.Outcome = OutcomeRefused
			}
		}
	}
	if r.Plan != nil {
		d.Plan = r.Plan.document()
	}
	switch {
	case r.Applied != nil:
		a := r.Applied
		w := &WrittenDocument{Via: ViaKafka, SourceWrites: a.SourceWrites, Tombstones: a.Tombstones, SinkCommits: a.SinkCommits, SinkDeletions: a.SinkDeletions,
			Topics: []WrittenTopicDocument{}, Groups: nonNil(a.Groups)}
		for _, t := range a.Topics {
			w.Topics = append(w.Topics, WrittenTopicDocument{Topic: t.Topic, Records: t.Records, Partitions: t.Partitions})
		}
		d.Written = w
	case r.Connect != nil:
		w := &WrittenDocument{Via: ViaConnect, Topics: []WrittenTopicDocument{}, Groups: []string{}}
		for _, x := range r.Connect {
			w.Connect = append(w.Connect, ConnectWrittenDocument{Connector: x.Connector, Partitions: x.Entries, Message: x.Message, FrameworkOnly: x.FrameworkOnly})
		}
		d.Written = w
	}
	if v := r.Verified; v != nil {
		d.Verified = &VerifiedDocument{OK: len(v.Differences) == 0, Connectors: v.Connectors, Differences: nonNil(v.Differences)}
	}
	return d
}

// CountsDocument is the plan's totals as the JSON documents (the CLI's
// --output json, the page's plan) carry them.
func (p *Plan) CountsDocument() CountsDocument {
	c := p.Counts()
	return CountsDocument{SourceWrites: c.SourceWrites, Tombstones: c.Tombstones, SinkCommits: c.SinkCommits, SinkDeletions: c.SinkDeletions,
		SourceUnchanged: c.SourceUnchanged, SinkUnchanged: c.SinkUnchanged, SinkSkipped: c.SinkSkipped}
}

func (p *Plan) document() *PlanDocument {
	d := &PlanDocument{
		SnapshotCreatedAt: p.Snapshot.CreatedAt.UTC(), SnapshotClusterID: p.Snapshot.ClusterID,
		ClusterID: p.ClusterID, OtherCluster: p.OtherCluster,
		Counts:     p.CountsDocument(),
		Warnings:   nonNil(p.Warnings),
		Notes:      p.Notes,
		Connectors: make([]ConnectorDocument, 0, len(p.Connectors)),
		SinkGuard:  nonNil(p.SinkGuard),
	}
	for _, o := range p.OpenRestores {
		if !o.Written {
			d.Warnings = append(d.Warnings, openRestoreWarning(o))
		}
	}
	for _, cp := range p.Connectors {
		cd := ConnectorDocument{Name: cp.Name, Type: cp.Type, State: cp.State(), REST: cp.REST, Writes: cp.Writes(), LeftAlone: cp.LeftAlone() != ""}
		if sp := cp.Source; sp != nil {
			sd := &SourceDocument{Target: sp.Target, ExactlyOnce: sp.ExactlyOnce, Changes: []SourceChangeDocument{}}
			for i := range sp.changes {
				switch c := &sp.changes[i]; {
				case c.action == actUnchanged:
					sd.Unchanged++
				default:
					ch := sp.change(c)
					sd.Changes = append(sd.Changes, SourceChangeDocument{Action: ch.Action, Topic: ch.Topic, Partition: ch.Partition,
						Key: ch.Key, Old: ch.Old, New: ch.New, From: ch.From, Stray: ch.Stray})
				}
			}
			cd.Source = sd
		}
		if sp := cp.Sink; sp != nil {
			sd := &SinkDocument{Group: sp.Group, Exists: sp.Exists, State: sp.State, Members: sp.Members, Changes: []SinkChangeDocument{}}
			for _, ch := range sp.Changes() {
				if ch.Action == Unchanged {
					sd.Unchanged++
					continue
				}
				sd.Changes = append(sd.Changes, SinkChangeDocument{Action: ch.Action, Topic: ch.Topic, Partition: ch.Partition, Old: ch.Old, New: ch.New, Reason: ch.Reason})
			}
			cd.Sink = sd
		}
		d.Connectors = append(d.Connectors, cd)
	}
	return d
}

// nonNil is s, or an empty slice for nil: a JSON [] instead of null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

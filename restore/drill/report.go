package drill

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Format and Version name a drill report document; readers accept
// Version 1 only.
const (
	Format  = "offsetkeeper-drill"
	Version = 1
)

// Names of the three checks, in the order a report lists them.
const (
	CheckRestorable  = "restorable"
	CheckComplete    = "complete"
	CheckRecoverable = "recoverable"
)

// Results of a check and of a drill.
const (
	Passed  = "passed"
	Failed  = "failed"
	Skipped = "skipped"
)

// Causes name why a check failed, one per Failure.
const (
	CauseUnreadable      = "snapshot-unreadable" // the state could not be read (checksum, corrupt object)
	CauseRestoreFailed   = "restore-failed"      // the restore into the scratch cluster failed
	CauseWrongPartition  = "wrong-partition"     // a key lives off murmur2(key) % partitions
	CauseKeyMissing      = "key-missing"         // a key of the state is not read back
	CauseValueDiffers    = "value-differs"       // a key reads back with other bytes
	CauseUnexpectedKey   = "unexpected-key"      // a key read back that the state does not hold
	CauseNotConnectJSON  = "not-connect-json"    // a connector's key or value JsonConverter would not read
	CauseSinkDiffers     = "sink-offset-differs" // a group offset reads back otherwise
	CauseConnectorAbsent = "connector-missing"   // Connect has a connector the state lacks
	CauseGroupAbsent     = "group-missing"       // Connect reports a sink group the state lacks
	CausePartitionAbsent = "partition-missing"   // Connect has a partition the state lacks
	CausePartitionExtra  = "partition-not-in-connect"
	CauseOffsetDiffers   = "offset-differs" // a stopped or paused connector's offset differs
	CauseBehind          = "behind"         // a running connector's offset is behind the state
)

// Report is one drill: what was drilled, each check's result and the
// figures. It is the document stored in the store (drills/<ID>.json),
// printed by --output json and signed with --signing-key.
type Report struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// ID is the drill's own ID (a snapshot-style ID of when it started).
	ID        string    `json:"id"`
	StartedAt time.Time `json:"started_at"`
	// Result is Passed or Failed. A drill that could not run has no
	// report.
	Result      string `json:"result"`
	ToolVersion string `json:"tool_version"`
	// ClusterID is the Kafka cluster the state was captured from.
	ClusterID string `json:"cluster_id"`
	State     State  `json:"state"`
	Counts    Counts `json:"counts"`
	// Scratch names the cluster restored into: "embedded" (an in-process
	// kfake cluster the drill started) or the --scratch-brokers.
	Scratch  string  `json:"scratch"`
	Checks   []Check `json:"checks"`
	RTO      RTO     `json:"rto"`
	RPO      RPO     `json:"rpo"`
	Duration Millis  `json:"duration_ms"`
}

// State names the state drilled: a stored snapshot (ID and checksum), the
// state at a moment, or a fresh capture of the live cluster.
type State struct {
	// Kind is "snapshot", "moment" or "capture".
	Kind       string    `json:"kind"`
	SnapshotID string    `json:"snapshot_id,omitempty"`
	SHA256     string    `json:"sha256,omitempty"`
	At         time.Time `json:"at"`
	// Description is how a moment's state was made (snapshot + journal).
	Description string `json:"description,omitempty"`
}

// Counts are what the state holds.
type Counts struct {
	Connectors  int `json:"connectors"`
	SourceKeys  int `json:"source_keys"`
	Tombstones  int `json:"tombstones"`
	Unowned     int `json:"unowned_keys"`
	SinkGroups  int `json:"sink_groups"`
	SinkOffsets int `json:"sink_offsets"`
}

// Check is one check's result.
type Check struct {
	Name   string `json:"name"`
	Result string `json:"result"`
	// Summary is one line on what was compared, or why it was skipped.
	Summary  string    `json:"summary"`
	Failures []Failure `json:"failures,omitempty"`
	// Notes are findings that do not fail the check.
	Notes    []string `json:"notes,omitempty"`
	Duration Millis   `json:"duration_ms"`
}

// Failure is one reason a check failed, naming what it is about.
type Failure struct {
	Cause     string `json:"cause"`
	Connector string `json:"connector,omitempty"`
	Group     string `json:"group,omitempty"`
	Topic     string `json:"topic,omitempty"`
	// Partition is the Kafka partition (offsets topic or sink topic), -1
	// when none applies.
	Partition int32 `json:"partition"`
	// SourcePartition is a source connector's partition as Connect's REST
	// API shows it.
	SourcePartition string `json:"source_partition,omitempty"`
	Detail          string `json:"detail"`
}

func (f Failure) String() string {
	s := f.Cause
	switch {
	case f.Connector != "":
		s += fmt.Sprintf(" connector %q", f.Connector)
	case f.Group != "":
		s += fmt.Sprintf(" group %q", f.Group)
	}
	if f.SourcePartition != "" {
		s += " partition " + f.SourcePartition
	}
	if f.Topic != "" && f.Partition >= 0 {
		s += fmt.Sprintf(" %s/%d", f.Topic, f.Partition)
	}
	return s + ": " + f.Detail
}

// RTO is the time to recover, as the drill measured it.
type RTO struct {
	// Restore is how long the restore into the scratch cluster took: plan,
	// write and read-back verification of restore.Run, from its start to
	// its end; not the start of the scratch cluster, nor the stopping and
	// resuming of connectors a real restore adds.
	Restore Millis `json:"restore_ms"`
	// Records and Groups are what it wrote.
	Records int `json:"records_written"`
	Groups  int `json:"groups_committed"`
	// Note says what the figure stands for.
	Note string `json:"note"`
}

// RPO is what a restore now would lose.
type RPO struct {
	// JournalLag is how far behind the present the journal in the store
	// is (what a restore --at now would miss), nil without a journal.
	JournalLag *Millis `json:"journal_lag_ms,omitempty"`
	// NewestFull is the ID and age of the newest full snapshot, empty
	// when the store holds none.
	NewestFull    string  `json:"newest_full_snapshot,omitempty"`
	NewestFullAge *Millis `json:"newest_full_age_ms,omitempty"`
	Note          string  `json:"note,omitempty"`
}

// Millis is a duration, in JSON a number of milliseconds.
type Millis time.Duration

// MarshalJSON writes whole milliseconds.
func (m Millis) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(m).Milliseconds())
}

// UnmarshalJSON reads whole milliseconds.
func (m *Millis) UnmarshalJSON(b []byte) error {
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	*m = Millis(time.Duration(n) * time.Millisecond)
	return nil
}

func (m Millis) String() string { return time.Duration(m).Round(time.Millisecond).String() }

func millisPtr(d time.Duration) *Millis {
	m := Millis(d)
	return &m
}

// Failed lists the failed checks' names.
func (r *Report) Failed() []string {
	var out []string
	for _, c := range r.Checks {
		if c.Result == Failed {
			out = append(out, c.Name)
		}
	}
	return out
}

// FailedChecks counts the failures of every check.
func (r *Report) FailedChecks() int {
	n := 0
	for _, c := range r.Checks {
		n += len(c.Failures)
	}
	return n
}

// Check returns the check named name, nil if the report has none.
func (r *Report) Check(name string) *Check {
	for i := range r.Checks {
		if r.Checks[i].Name == name {
			return &r.Checks[i]
		}
	}
	return nil
}

// ErrBadReport: a document is not a drill report this build reads.
var ErrBadReport = errors.New("not an offsetkeeper drill report")

// ParseReport reads a report document (not an envelope; see Open).
func ParseReport(data []byte) (*Report, error) {
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadReport, err)
	}
	if r.Format != Format {
		return nil, fmt.Errorf("%w: format is %q", ErrBadReport, r.Format)
	}
	if r.Version != Version {
		return nil, fmt.Errorf("%w: version %d: this build reads version %d", ErrBadReport, r.Version, Version)
	}
	return &r, nil
}

package capture

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/build"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/keyview"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/kread"
)

// DefaultStatusTopic is Connect's default status.storage.topic.
const DefaultStatusTopic = "connect-status"

// Worker-reported states of a connector or a task (AbstractStatus.State).
// DESTROYED is not among them: ReadStatuses drops it as a deletion.
const (
	WorkerRunning    = "RUNNING"
	WorkerPaused     = "PAUSED"
	WorkerStopped    = "STOPPED"
	WorkerFailed     = "FAILED"
	WorkerUnassigned = "UNASSIGNED"
	WorkerRestarting = "RESTARTING"
	workerDestroyed  = "DESTROYED"
)

// WorkerStatus is one record of the status topic: what a worker last
// reported of a connector or a task.
type WorkerStatus struct {
	State string `json:"state"`
	// Trace is the stack trace of a FAILED state, "" when none.
	Trace      string `json:"trace,omitempty"`
	WorkerID   string `json:"worker_id"`
	Generation int    `json:"generation"`
}

// TaskStatus is a task's WorkerStatus.
type TaskStatus struct {
	ID int `json:"id"`
	WorkerStatus
}

// ConnectorStatus is what the status topic says of one connector.
type ConnectorStatus struct {
	Name string
	// Connector is the connector's own status; nil when only its tasks
	// have one.
	Connector *WorkerStatus
	// Tasks are its tasks' statuses, by task ID.
	Tasks []TaskStatus
}

// Statuses is the status topic read to its end.
type Statuses struct {
	Connectors map[string]*ConnectorStatus
	// Warnings name the records left out (a value that does not decode).
	Warnings []string
}

// ReadStatuses reads a Connect status topic (status.storage.topic) from
// its start to its last stable offset with read_committed isolation, as
// ReadConfigs does the config topic: the last write of each key wins, a
// tombstone or a DESTROYED state removes it. It keeps
// status-connector-<name> and status-task-<name>-<id> (a connector name
// may hold '-': the ID is after the last one); a value that does not
// decode is left out with a warning. A topic that does not exist is
// ErrTopicMissing. The status topics of more worker groups are read too,
// into one set (a layout's: connector names are unique across them).
func ReadStatuses(ctx context.Context, cl *kgo.Client, topic string, more ...string) (*Statuses, error) {
	adm := kadm.NewClient(cl)
	topics := append([]string{topic}, more...)
	ends, missing, err := kread.ListBounds(ctx, adm, topics)
	if err != nil {
		return nil, fmt.Errorf("read status topic %s: %w", quoteList(topics), err)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("read status topic %q: %w: check --status-topic (status.storage.topic of the worker)", missing[0], ErrTopicMissing)
	}
	views := make([]*keyview.TopicView, len(topics))
	for i, t := range topics {
		views[i] = keyview.NewTopicView(t)
	}
	if _, err := kread.ReadTopics(ctx, cl, adm, views, ends); err != nil {
		return nil, fmt.Errorf("read status topic %s: %w", quoteList(topics), err)
	}
	st := &Statuses{Connectors: map[string]*ConnectorStatus{}}
	for _, v := range views {
		for _, p := range build.SortedPartitions(v.Parts) {
			pv := v.Parts[p]
			for key, i := range pv.All() {
				st.add(strings.Clone(key), pv.Record(i).Value)
			}
		}
	}
	for _, c := range st.Connectors {
		slices.SortFunc(c.Tasks, func(a, b TaskStatus) int { return a.ID - b.ID })
	}
	slices.Sort(st.Warnings)
	return st, nil
}

// add applies one live key of the topic.
func (st *Statuses) add(key string, value []byte) {
	name, task, ok := statusKey(key)
	if !ok {
		return // status-topic-..., or a key this reader does not know
	}
	var raw struct {
		State      *string `json:"state"`
		Trace      *string `json:"trace"`
		WorkerID   string  `json:"worker_id"`
		Generation int     `json:"generation"`
	}
	if err := json.Unmarshal(value, &raw); err != nil || raw.State == nil {
		st.Warnings = append(st.Warnings, fmt.Sprintf("status topic key %q: value %.80q is not a status record: left out", key, value))
		return
	}
	if *raw.State == workerDestroyed {
		return
	}
	ws := WorkerStatus{State: *raw.State, WorkerID: raw.WorkerID, Generation: raw.Generation}
	if raw.Trace != nil {
		ws.Trace = *raw.Trace
	}
	c := st.Connectors[name]
	if c == nil {
		c = &ConnectorStatus{Name: name}
		st.Connectors[name] = c
	}
	if task < 0 {
		c.Connector = &ws
		return
	}
	c.Tasks = append(c.Tasks, TaskStatus{ID: task, WorkerStatus: ws})
}

// statusKey parses status-connector-<name> (task -1) and
// status-task-<name>-<id>.
func statusKey(key string) (name string, task int, ok bool) {
	if n, found := strings.CutPrefix(key, "status-connector-"); found && n != "" {
		return n, -1, true
	}
	rest, found := strings.CutPrefix(key, "status-task-")
	if !found {
		return "", 0, false
	}
	i := strings.LastIndexByte(rest, '-')
	if i <= 0 {
		return "", 0, false
	}
	id, err := strconv.Atoi(rest[i+1:])
	if err != nil || id < 0 {
		return "", 0, false
	}
	return rest[:i], id, true
}

package connectrest

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// Target states as the config topic holds them.
const (
	TargetStarted = snapshot.StateStarted
	TargetPaused  = snapshot.StatePaused
	TargetStopped = snapshot.StateStopped
)

// Configured is what a Connect cluster's config topic says about one
// connector that has a config there, read as the worker reads it
// (KafkaConfigBackingStore): the intent, where the REST status is the
// last report.
type Configured struct {
	Name string
	// Config is the connector's configuration.
	Config map[string]string
	// TargetState is STARTED, PAUSED or STOPPED (state.v2 first); STARTED
	// when no target-state record exists.
	TargetState string
	// Tasks is the task count of the latest commit-<name> record, -1 when
	// there is none.
	Tasks int
}

// Stopped reports whether the worker considers the connector stopped:
// target state STOPPED and a task count of 0.
func (c Configured) Stopped() bool { return c.TargetState == TargetStopped && c.Tasks == 0 }

// ReadConfigTopic reads a Connect config topic from its start to its last
// stable offset (read_committed, as a worker with exactly-once support
// reads it) and returns every connector that has a config, by name, using
// snapshot.ReadConfigs. A topic that does not exist is an error.
func ReadConfigTopic(ctx context.Context, cl *kgo.Client, topic string) (map[string]Configured, error) {
	configs, err := snapshot.ReadConfigs(ctx, cl, topic)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Configured, len(configs))
	for name, c := range configs {
		out[name] = Configured{Name: name, Config: c.Config, TargetState: c.TargetState, Tasks: c.Tasks}
	}
	return out, nil
}

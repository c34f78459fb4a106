package connectrest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Target states as the config topic holds them.
const (
	TargetStarted = "STARTED"
	TargetPaused  = "PAUSED"
	TargetStopped = "STOPPED"
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
// reads it) and returns every connector that has a config, by name. cl
// must not be configured to consume: the read uses a client made from
// cl.Opts(). A topic that does not exist is an error.
func ReadConfigTopic(ctx context.Context, cl *kgo.Client, topic string) (map[string]Configured, error) {
	adm := kadm.NewClient(cl)
	ends, err := adm.ListCommittedOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("list end offsets of config topic %q: %w", topic, err)
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("list start offsets of config topic %q: %w", topic, err)
	}
	if len(ends[topic]) == 0 {
		return nil, fmt.Errorf("read config topic %q: %w", topic, kerr.UnknownTopicOrPartition)
	}
	from := map[int32]kgo.Offset{}
	want := map[int32]int64{} // partition -> last offset to read
	var listErr error
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			listErr = errors.Join(listErr, fmt.Errorf("list end offset of %s/%d: %w", o.Topic, o.Partition, o.Err))
			return
		}
		s, ok := starts.Lookup(o.Topic, o.Partition)
		if !ok || s.Err != nil {
			listErr = errors.Join(listErr, fmt.Errorf("list start offset of %s/%d: %v", o.Topic, o.Partition, s.Err))
			return
		}
		if o.Offset > s.Offset {
			from[o.Partition] = kgo.NewOffset().At(s.Offset)
			want[o.Partition] = o.Offset - 1
		}
	})
	if listErr != nil {
		return nil, fmt.Errorf("read config topic %q: %w", topic, listErr)
	}
	st := newConfigState()
	if len(from) > 0 {
		cons, err := kgo.NewClient(append(slices.Clone(cl.Opts()),
			kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: from}),
			kgo.FetchIsolationLevel(kgo.ReadCommitted()),
			// Control records are kept so that the read can tell it reached
			// a last offset that is a transaction marker.
			kgo.KeepControlRecords(),
		)...)
		if err != nil {
			return nil, fmt.Errorf("read config topic %q: %w", topic, err)
		}
		defer cons.Close()
		for len(want) > 0 {
			fs := cons.PollFetches(ctx)
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("read config topic %q: %w", topic, err)
			}
			var ferr error
			fs.EachError(func(t string, p int32, err error) {
				ferr = errors.Join(ferr, fmt.Errorf("fetch %s/%d: %w", t, p, err))
			})
			if ferr != nil {
				return nil, fmt.Errorf("read config topic %q: %w", topic, ferr)
			}
			fs.EachRecord(func(r *kgo.Record) {
				last, ok := want[r.Partition]
				if !ok || r.Offset > last {
					return
				}
				if !r.Attrs.IsControl() {
					st.apply(r)
				}
				if r.Offset == last {
					delete(want, r.Partition)
				}
			})
		}
	}
	return st.connectors(), nil
}

// configState applies config records in log order, as
// KafkaConfigBackingStore does.
type configState struct {
	configs map[string]map[string]string
	states  map[string]string
	tasks   map[string]int
}

func newConfigState() *configState {
	return &configState{configs: map[string]map[string]string{}, states: map[string]string{}, tasks: map[string]int{}}
}

func (s *configState) apply(r *kgo.Record) {
	key := string(r.Key)
	switch {
	case strings.HasPrefix(key, "connector-"):
		name := strings.TrimPrefix(key, "connector-")
		if r.Value == nil {
			delete(s.configs, name)
			delete(s.tasks, name)
			return
		}
		var v struct {
			Properties map[string]any `json:"properties"`
		}
		if err := json.Unmarshal(r.Value, &v); err != nil || v.Properties == nil {
			return // the worker logs and ignores it too
		}
		props := make(map[string]string, len(v.Properties))
		for k, val := range v.Properties {
			if str, ok := val.(string); ok {
				props[k] = str
			} else if val != nil {
				props[k] = fmt.Sprint(val)
			}
		}
		s.configs[name] = props
	case strings.HasPrefix(key, "target-state-"):
		name := strings.TrimPrefix(key, "target-state-")
		if r.Value == nil {
			delete(s.states, name)
			return
		}
		var v map[string]any
		if err := json.Unmarshal(r.Value, &v); err != nil {
			return
		}
		st, ok := v["state.v2"].(string)
		if !ok {
			st, _ = v["state"].(string)
		}
		switch st {
		case TargetStarted, TargetPaused, TargetStopped:
			s.states[name] = st
		}
	case strings.HasPrefix(key, "commit-"):
		name := strings.TrimPrefix(key, "commit-")
		var v struct {
			Tasks *int `json:"tasks"`
		}
		if r.Value == nil || json.Unmarshal(r.Value, &v) != nil || v.Tasks == nil {
			return
		}
		s.tasks[name] = *v.Tasks
	}
}

func (s *configState) connectors() map[string]Configured {
	out := make(map[string]Configured, len(s.configs))
	for name, props := range s.configs {
		c := Configured{Name: name, Config: props, TargetState: TargetStarted, Tasks: -1}
		if st, ok := s.states[name]; ok {
			c.TargetState = st
		}
		if n, ok := s.tasks[name]; ok {
			c.Tasks = n
		}
		out[name] = c
	}
	return out
}

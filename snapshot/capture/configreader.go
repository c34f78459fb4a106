package capture

import (
	"context"
	"maps"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/build"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/keyview"
)

// ConfigReader keeps a worker's view of its config topic, as the worker's
// KafkaBasedLog does: each Read lists the topic's ends and fetches only the
// records written since the last Read, so a caller that reads before each
// request pays for what changed, not for the whole topic (ReadConfigs
// reads it whole). A log that moved under it (truncated, recreated) is
// replayed whole. Safe for concurrent use: callers that arrive while a
// read is under way share the next one, which starts after they came.
type ConfigReader struct {
	// reading is held while a read is under way.
	reading sync.Mutex

	mu      sync.Mutex
	c       *Capturer
	started uint64 // reads started
	done    uint64 // the last read that succeeded
	out     map[string]snapshot.ConnectorConfig
	version uint64
	conf    *build.ConfigState // the state out was made of, at records
	records int64

	// noted are the connectors whose records the views read since out was
	// made (hooked: the views of conf whose OnRecord notes them).
	notedMu sync.Mutex
	noted   map[string]bool
	hooked  map[*keyview.TopicView]bool
}

// NewConfigReader returns a ConfigReader of topic over cl, which must not
// be configured to consume.
func NewConfigReader(cl *kgo.Client, topic string) *ConfigReader {
	return &ConfigReader{c: NewCapturer(cl, Options{ConfigTopic: topic})}
}

// Read brings the view to the topic's ends (as they were at some moment
// after Read was called) and returns every configured connector, by name,
// as ReadConfigs does, and the view's version, which changes whenever the
// view does. The map is shared with other callers and must not be changed.
func (r *ConfigReader) Read(ctx context.Context) (map[string]snapshot.ConnectorConfig, uint64, error) {
	r.mu.Lock()
	need := r.started + 1 // a read that starts after now
	r.mu.Unlock()
	r.reading.Lock()
	defer r.reading.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done >= need {
		return r.out, r.version, nil
	}
	r.started++
	seq := r.started
	r.mu.Unlock()
	_, _, err := r.c.readConfig(ctx) // r.reading keeps the Capturer to this goroutine
	r.mu.Lock()
	if err != nil {
		return nil, 0, err
	}
	r.done = seq
	if r.out == nil || r.conf != r.c.conf || r.records != r.c.conf.Records {
		r.remake()
		r.version++
	}
	return r.out, r.version, nil
}

// remake makes out anew from the Capturer's state: whole for a new state
// (the first read, a replay), else from the last out with the connectors
// noted since. The caller holds r.mu and r.reading.
func (r *ConfigReader) remake() {
	conf := r.c.conf
	r.notedMu.Lock()
	noted := r.noted
	r.noted = map[string]bool{}
	r.notedMu.Unlock()
	var out map[string]snapshot.ConnectorConfig
	if r.out != nil && r.conf == conf {
		out = maps.Clone(r.out)
		for name := range noted {
			delete(out, name)
			if _, ok := conf.Connectors[name]; ok {
				out[name] = connectorConfig(conf, name)
			}
		}
	} else {
		out = make(map[string]snapshot.ConnectorConfig, len(conf.Connectors))
		for name := range conf.Connectors {
			out[name] = connectorConfig(conf, name)
		}
		r.hooked = map[*keyview.TopicView]bool{}
	}
	r.out, r.conf, r.records = out, conf, conf.Records
	// Views are made with a new state only: hook them for the next read.
	for _, v := range r.c.views {
		if r.hooked[v] {
			continue
		}
		r.hooked[v] = true
		apply := v.OnRecord
		v.OnRecord = func(rec keyview.LogRecord) {
			apply(rec)
			if name := recordConnector(rec.Key); name != "" {
				r.notedMu.Lock()
				r.noted[name] = true
				r.notedMu.Unlock()
			}
		}
	}
}

func connectorConfig(conf *build.ConfigState, name string) snapshot.ConnectorConfig {
	c := conf.Connector(name)
	return snapshot.ConnectorConfig{Name: name, Config: conf.Connectors[name].Props, TargetState: c.TargetState, Tasks: c.Tasks}
}

// recordConnector is the connector a config topic record's key changes in
// a ConnectorConfig (its config, target state or task count), "" for
// another key (a task's config).
func recordConnector(key []byte) string {
	for _, prefix := range []string{"connector-", "target-state-", "commit-"} {
		if name, ok := strings.CutPrefix(string(key), prefix); ok {
			return name
		}
	}
	return ""
}

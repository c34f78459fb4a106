package capture

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
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
	conf    *snapshot.ConfigState // the state out was made of, at records
	records int64
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
		out := make(map[string]snapshot.ConnectorConfig, len(r.c.conf.Connectors))
		for name, cc := range r.c.conf.Connectors {
			conn := r.c.conf.Connector(name)
			out[name] = snapshot.ConnectorConfig{Name: name, Config: cc.Props, TargetState: conn.TargetState, Tasks: conn.Tasks}
		}
		r.out, r.conf, r.records = out, r.c.conf, r.c.conf.Records
		r.version++
	}
	return r.out, r.version, nil
}

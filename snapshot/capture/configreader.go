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
// replayed whole. Safe for concurrent use: Reads are serialized.
type ConfigReader struct {
	mu sync.Mutex
	c  *Capturer
}

// NewConfigReader returns a ConfigReader of topic over cl, which must not
// be configured to consume.
func NewConfigReader(cl *kgo.Client, topic string) *ConfigReader {
	return &ConfigReader{c: NewCapturer(cl, Options{ConfigTopic: topic})}
}

// Read brings the view to the topic's ends and returns every configured
// connector, by name, as ReadConfigs does. The configs' maps are shared
// between Reads and must not be changed.
func (r *ConfigReader) Read(ctx context.Context) (map[string]snapshot.ConnectorConfig, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, _, err := r.c.readConfig(ctx); err != nil {
		return nil, err
	}
	out := make(map[string]snapshot.ConnectorConfig, len(r.c.conf.Connectors))
	for name, cc := range r.c.conf.Connectors {
		conn := r.c.conf.Connector(name)
		out[name] = snapshot.ConnectorConfig{Name: name, Config: cc.Props, TargetState: conn.TargetState, Tasks: conn.Tasks}
	}
	return out, nil
}

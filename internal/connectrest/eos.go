package connectrest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// WorkerEOS is what a worker's REST API tells of its exactly.once.source.support.
type WorkerEOS struct {
	// Known is false when the answer does not tell (a worker before 3.3,
	// Confluent Cloud, no source plugin to ask about).
	Known bool
	// Enabled is exactly.once.source.support=enabled: the worker reads its
	// offsets topic read_committed. Not enabled (disabled, the default, or
	// preparing), it reads read_uncommitted.
	Enabled bool
	// Why says how it was learned, or why it is not known.
	Why string
}

// eosRefusal is what Connect's DistributedHerder (3.3+,
// validateSourceConnectorExactlyOnceSupport) adds to exactly.once.support
// when a source config requires exactly-once support and the worker's
// exactly.once.source.support is not "enabled" (WorkerConfig
// exactlyOnceSourceEnabled, the same test that makes KafkaOffsetBackingStore
// read read_committed).
const eosRefusal = "does not have exactly-once source support enabled"

// WorkerExactlyOnceSource asks the worker whether it has exactly-once
// source support enabled. Connect exposes no worker config over REST; this
// validates (PUT /connector-plugins/{class}/config/validate: nothing is
// created or written) a source config with exactly.once.support=required,
// which a distributed worker refuses with "This worker does not have
// exactly-once source support enabled." exactly when the setting is not
// enabled. A worker before 3.3 has no exactly.once.support key: unknown.
func (c *Client) WorkerExactlyOnceSource(ctx context.Context) (WorkerEOS, error) {
	if c.cloud != nil {
		return WorkerEOS{Why: "Confluent Cloud's API has no worker validate"}, nil
	}
	plugins, err := c.Plugins(ctx)
	if err != nil {
		return WorkerEOS{}, err
	}
	class := probeSource(plugins)
	if class == "" {
		return WorkerEOS{Why: "the worker has no source connector plugin to validate a config of"}, nil
	}
	problems, known, err := c.validateEOS(ctx, class)
	if errors.Is(err, ErrNotFound) {
		return WorkerEOS{Why: "the worker answers no PUT /connector-plugins/{class}/config/validate"}, nil
	}
	if err != nil {
		return WorkerEOS{}, err
	}
	if !known {
		return WorkerEOS{Why: "the worker's validate has no exactly.once.support (Connect before 3.3)"}, nil
	}
	for _, e := range problems {
		if strings.Contains(e, eosRefusal) {
			return WorkerEOS{Known: true, Why: "the worker's validate of a " + class + " config with exactly.once.support=required: " + e}, nil
		}
	}
	return WorkerEOS{Known: true, Enabled: true, Why: "the worker's validate of a " + class + " config accepts exactly.once.support=required"}, nil
}

// probeSource picks the source plugin to validate a config of: Kafka's
// FileStreamSource or MirrorMaker 2's heartbeat connector when installed
// (their validate reads nothing outside), else the first source plugin.
func probeSource(plugins []Plugin) string {
	first := ""
	for _, pref := range []string{"org.apache.kafka.connect.file.FileStreamSourceConnector", "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector"} {
		for _, p := range plugins {
			if p.Class == pref {
				return p.Class
			}
		}
	}
	for _, p := range plugins {
		if p.Type == "source" && first == "" {
			first = p.Class
		}
	}
	return first
}

// validateEOS validates a config of class with exactly.once.support=required
// and returns the errors given for that key, and whether the answer holds
// the key at all.
func (c *Client) validateEOS(ctx context.Context, class string) ([]string, bool, error) {
	cfg := map[string]string{
		"connector.class":      class,
		"name":                 "offsetkeeper-exactly-once-probe",
		"exactly.once.support": "required",
	}
	keys, err := c.validateKeys(ctx, class, cfg)
	if err != nil {
		return nil, false, fmt.Errorf("ask the worker about exactly-once source support: %w", err)
	}
	errs, ok := keys["exactly.once.support"]
	return errs, ok, nil
}

// validateAnswer is the answer of PUT /connector-plugins/{class}/config/validate.
type validateAnswer struct {
	ErrorCount int `json:"error_count"`
	Configs    []struct {
		Value struct {
			Name   string   `json:"name"`
			Errors []string `json:"errors"`
		} `json:"value"`
	} `json:"configs"`
}

// validate asks the worker to validate config for class (PUT
// /connector-plugins/{class}/config/validate); nothing is created.
func (c *Client) validate(ctx context.Context, class string, config map[string]string) (*validateAnswer, error) {
	body, err := json.Marshal(config)
	if err != nil {
		return nil, fmt.Errorf("encode config of class %s: %w", class, err)
	}
	path := "/connector-plugins/" + url.PathEscape(class) + "/config/validate"
	_, resp, err := c.do(ctx, request{method: http.MethodPut, path: path, body: body})
	if err != nil {
		return nil, err
	}
	var a validateAnswer
	if err := json.Unmarshal(resp, &a); err != nil {
		return nil, fmt.Errorf("decode PUT %s answer: %w", path, err)
	}
	return &a, nil
}

// validateKeys validates config for class and returns every key of the
// answer with its errors (none for a key accepted).
func (c *Client) validateKeys(ctx context.Context, class string, config map[string]string) (map[string][]string, error) {
	a, err := c.validate(ctx, class, config)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]string, len(a.Configs))
	for _, ci := range a.Configs {
		out[ci.Value.Name] = ci.Value.Errors
	}
	return out, nil
}

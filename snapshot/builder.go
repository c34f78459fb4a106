package snapshot

import (
	"strings"

	"github.com/offsetkeeper/offsetkeeper/internal/connectjson"
	"github.com/offsetkeeper/offsetkeeper/internal/english"
)

// This file reads the keys and configs of Kafka Connect as a capture and a
// restore need them: a source key's connector (ParseSourceKey), a
// connector's type from its config (ConnectorType), and what a connector's
// config says (ConnectorConfig). snapshot/internal/build builds the
// entries of a snapshot with them.

// ParseSourceKey is connectjson.ParseKey for what a capture needs, the
// connector name (interned in names) and the raw partition object, with a
// fast path for the keys nearly every connector writes: ["name",{...}] with
// a plain ASCII name and a flat object of plain ASCII strings, integers,
// booleans and nulls, and nothing else around. Every key the fast path
// accepts, ParseKey accepts with the same name and raw partition; any
// other key goes to ParseKey.
func ParseSourceKey(key []byte, names map[string]string) (string, []byte, error) {
	if name, raw, ok := connectjson.PlainKey(key); ok {
		return Intern(names, name), raw, nil
	}
	name, _, raw, err := connectjson.ParseKey(key)
	if err != nil {
		return "", nil, err
	}
	return Intern(names, []byte(name)), raw, nil
}

func Intern(names map[string]string, b []byte) string {
	if s, ok := names[string(b)]; ok {
		return s
	}
	s := string(b)
	names[s] = s
	return s
}

// validJSON is connectjson.Valid: json.Valid with a fast path for what
// connectors write as offset values.
func validJSON(b []byte) bool { return connectjson.Valid(b) }

// ConnectorType tells a sink (TypeSink) from a source (TypeSource) by a
// connector's config, without the plugin at hand: by the simple name of
// connector.class first (MirrorMaker 2 sources have a topics setting too),
// then by the topics or topics.regex setting every sink must have.
func ConnectorType(props map[string]string) string {
	class := props["connector.class"]
	simple := class[strings.LastIndex(class, ".")+1:]
	switch {
	case strings.Contains(simple, "Sink"):
		return TypeSink
	case strings.Contains(simple, "Source"), strings.HasPrefix(simple, "Mirror"):
		return TypeSource
	case props["topics"] != "" || props["topics.regex"] != "":
		return TypeSink
	}
	return TypeSource
}

// ConnectorConfig is the worker's view of one connector that has a config
// in the config topic.
type ConnectorConfig struct {
	Name string
	// Config is the connector's configuration as stored.
	Config map[string]string
	// TargetState is STARTED, PAUSED or STOPPED (state.v2 first); STARTED
	// when there is no target-state record.
	TargetState string
	// Tasks is the task count of the latest commit-<name>, -1 when none.
	Tasks int
}

// Stopped reports whether the worker considers the connector stopped:
// target state STOPPED and a task count of 0 (or no task commit at all,
// which the herder counts as 0: a connector created STOPPED).
func (c ConnectorConfig) Stopped() bool { return c.TargetState == StateStopped && c.Tasks <= 0 }

// CountWarning is "1 <one>" or "<n> <many>".
func CountWarning(n int, one, many string) string { return english.Count(n, one, many) }

// Defaults for Options.
const (
	DefaultOffsetsTopic = "connect-offsets"
	DefaultConfigTopic  = "connect-configs"
	DefaultGroupPrefix  = "connect-"
)

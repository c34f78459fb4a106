package snapshot

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Defaults for Options.
const (
	DefaultOffsetsTopic = "connect-offsets"
	DefaultConfigTopic  = "connect-configs"
	DefaultGroupPrefix  = "connect-"
)

// Options say what to capture. STUB: being implemented.
type Options struct {
	// OffsetsTopics are the worker offsets topics; default [DefaultOffsetsTopic].
	// Per-connector offsets.storage.topic values found in configs are added.
	OffsetsTopics []string
	// ConfigTopic is the Connect config topic; default DefaultConfigTopic.
	ConfigTopic string
	// GroupPrefix selects sink groups; default DefaultGroupPrefix.
	GroupPrefix string
	// Connectors limits the capture to these connectors; empty means all.
	Connectors []string
	// ProgramVersion and Reason are copied into the snapshot.
	ProgramVersion string
	Reason         string
}

// Capturer takes snapshots from one cluster. A Capturer may keep what it read
// between calls and read only what is new (see Options); it is not safe for
// concurrent use.
type Capturer struct {
	cl   *kgo.Client
	opts Options
}

// NewCapturer returns a Capturer reading through cl.
func NewCapturer(cl *kgo.Client, opts Options) *Capturer { return &Capturer{cl: cl, opts: opts} }

// Capture reads the cluster and returns a normalized snapshot without ID.
func (c *Capturer) Capture(ctx context.Context) (*Snapshot, error) { panic("unimplemented") }

// Capture is NewCapturer(cl, opts).Capture(ctx): one full read.
func Capture(ctx context.Context, cl *kgo.Client, opts Options) (*Snapshot, error) {
	return NewCapturer(cl, opts).Capture(ctx)
}

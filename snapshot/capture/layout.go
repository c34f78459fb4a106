package capture

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Layout finds the worker groups of a cluster by topic name, for platforms
// where every connector has topics of its own: Amazon MSK Connect runs each
// connector as a worker cluster of its own with three internal topics,
// __msk_connect_{offsets,configs,status}_<connector-name>_<connector-id>.
// Each pattern's first capture group (the whole name without one) is the
// worker group a topic belongs to: topics whose groups match make a trio.
type Layout struct {
	Offsets, Config, Status *regexp.Regexp
}

// The patterns of MSK Connect's internal topics (AWS, "State management of
// Amazon MSK Connect applications").
const (
	MSKOffsetsPattern = `^__msk_connect_offsets_(.+)$`
	MSKConfigPattern  = `^__msk_connect_configs_(.+)$`
	MSKStatusPattern  = `^__msk_connect_status_(.+)$`
)

// LayoutMSKConnect names the MSK Connect layout (--layout msk-connect).
const LayoutMSKConnect = "msk-connect"

// NewLayout compiles the three patterns; an empty pattern matches nothing
// (a layout with no status topics, say). The offsets and config patterns
// are required.
func NewLayout(offsets, config, status string) (*Layout, error) {
	if offsets == "" || config == "" {
		return nil, fmt.Errorf("a topic layout needs both an offsets topic pattern and a config topic pattern (got %q and %q)", offsets, config)
	}
	var l Layout
	for _, p := range []struct {
		what, expr string
		into       **regexp.Regexp
	}{{"offsets", offsets, &l.Offsets}, {"config", config, &l.Config}, {"status", status, &l.Status}} {
		if p.expr == "" {
			continue
		}
		re, err := regexp.Compile(p.expr)
		if err != nil {
			return nil, fmt.Errorf("%s topic pattern %q: %w", p.what, p.expr, err)
		}
		*p.into = re
	}
	return &l, nil
}

// MSKConnect is the layout of Amazon MSK Connect.
func MSKConnect() *Layout {
	l, err := NewLayout(MSKOffsetsPattern, MSKConfigPattern, MSKStatusPattern)
	if err != nil {
		panic(err)
	}
	return l
}

// WorkerGroup is one trio of a layout: the topics of one worker cluster.
// A topic the cluster lacks is "".
type WorkerGroup struct {
	ID                                     string
	OffsetsTopic, ConfigTopic, StatusTopic string
}

// groupOf is the worker group name t belongs to under re, and whether it
// matches.
func groupOf(re *regexp.Regexp, t string) (string, bool) {
	if re == nil {
		return "", false
	}
	m := re.FindStringSubmatch(t)
	switch {
	case m == nil:
		return "", false
	case len(m) > 1:
		return m[1], true
	}
	return m[0], true
}

// Match sorts topic names into worker groups, by ID.
func (l *Layout) Match(topics []string) []WorkerGroup {
	byID := map[string]*WorkerGroup{}
	get := func(id string) *WorkerGroup {
		g := byID[id]
		if g == nil {
			g = &WorkerGroup{ID: id}
			byID[id] = g
		}
		return g
	}
	for _, t := range topics {
		if id, ok := groupOf(l.Offsets, t); ok {
			get(id).OffsetsTopic = t
		}
		if id, ok := groupOf(l.Config, t); ok {
			get(id).ConfigTopic = t
		}
		if id, ok := groupOf(l.Status, t); ok {
			get(id).StatusTopic = t
		}
	}
	out := make([]WorkerGroup, 0, len(byID))
	for _, g := range byID {
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Discover lists the cluster's topics and sorts them into worker groups.
// Finding none is an error: a layout given to a cluster that has no topic
// it matches is a mistake (a wrong pattern, or the wrong cluster).
func (l *Layout) Discover(ctx context.Context, adm *kadm.Client) ([]WorkerGroup, error) {
	listed, err := adm.ListTopics(ctx)
	if err != nil {
		return nil, fmt.Errorf("list topics to find the worker groups of the topic layout: %w", err)
	}
	gs := l.Match(listed.Names())
	if len(gs) == 0 {
		return nil, fmt.Errorf("%w: no topic of this cluster matches the offsets topic pattern %q or the config topic pattern %q: check --layout and the --*-topic-pattern settings, and that the brokers are the connectors' cluster (a principal sees only the topics it may describe)", ErrTopicMissing, l.Offsets, l.Config)
	}
	return gs, nil
}

// UseGroups makes o read the worker groups gs: their offsets, config and
// status topics replace the worker topics o names.
func (o *Options) UseGroups(gs []WorkerGroup) {
	o.OffsetsTopics, o.ConfigTopics, o.StatusTopics = nil, nil, nil
	for _, g := range gs {
		if g.OffsetsTopic != "" {
			o.OffsetsTopics = append(o.OffsetsTopics, g.OffsetsTopic)
		}
		if g.ConfigTopic != "" {
			o.ConfigTopics = append(o.ConfigTopics, g.ConfigTopic)
		}
		if g.StatusTopic != "" {
			o.StatusTopics = append(o.StatusTopics, g.StatusTopic)
		}
	}
	if len(o.ConfigTopics) > 0 {
		o.ConfigTopic = o.ConfigTopics[0]
	}
	if len(o.StatusTopics) > 0 {
		o.StatusTopic = o.StatusTopics[0]
	}
}

// WorkerConfigTopics are the config topics o reads: ConfigTopics, or
// ConfigTopic alone.
func (o *Options) WorkerConfigTopics() []string {
	if len(o.ConfigTopics) > 0 {
		return slices.Clone(o.ConfigTopics)
	}
	return []string{o.ConfigTopic}
}

// WorkerStatusTopics are the status topics o names: StatusTopics, or
// StatusTopic (DefaultStatusTopic when unset) alone.
func (o *Options) WorkerStatusTopics() []string {
	if len(o.StatusTopics) > 0 {
		return slices.Clone(o.StatusTopics)
	}
	if o.StatusTopic == "" {
		return []string{DefaultStatusTopic}
	}
	return []string{o.StatusTopic}
}

// groupWarnings name the worker groups a layout found incomplete: an
// offsets topic without a config topic is read, but its connectors count as
// having no config (never as running).
func groupWarnings(gs []WorkerGroup) []string {
	var out []string
	for _, g := range gs {
		switch {
		case g.OffsetsTopic != "" && g.ConfigTopic == "":
			out = append(out, fmt.Sprintf("worker group %q has offsets topic %q but no config topic: its connectors count as having no config", g.ID, g.OffsetsTopic))
		case g.OffsetsTopic == "" && g.ConfigTopic != "":
			out = append(out, fmt.Sprintf("worker group %q has config topic %q but no offsets topic: its source connectors' offsets are read only from an offsets topic the layout finds (a connector given a custom offset.storage.topic needs one whose name matches the offsets pattern)", g.ID, g.ConfigTopic))
		}
	}
	return out
}

// ReadWorkerStatuses reads the status topics o names (those its Layout
// finds now, with one) as ReadStatuses does.
func ReadWorkerStatuses(ctx context.Context, cl *kgo.Client, o Options) (*Statuses, error) {
	if o.Layout != nil {
		gs, err := o.Layout.Discover(ctx, kadm.NewClient(cl))
		if err != nil {
			return nil, err
		}
		o.UseGroups(gs)
		if len(o.StatusTopics) == 0 {
			return &Statuses{Connectors: map[string]*ConnectorStatus{}}, nil
		}
	}
	ts := o.WorkerStatusTopics()
	return ReadStatuses(ctx, cl, ts[0], ts[1:]...)
}

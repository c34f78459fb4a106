package restore

import (
	"fmt"
	"io"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// CheckConfigTopics is the Refusal.Check of a sink connector that the
// restore would create or resume with a config that does not read the
// topics its offsets are restored into.
const CheckConfigTopics = "config-topics"

// Sink connector config keys naming what a sink reads.
const (
	keyTopics      = "topics"
	keyTopicsRegex = "topics.regex"
)

// ConfigRewrite is one config key of a sink connector that a translation
// renaming sink topics (--topic-prefix, --map-topic, MirrorMaker 2's
// copies) rewrote, so that the connector --create-connectors creates reads
// the topics its offsets are restored into.
type ConfigRewrite struct {
	Connector string `json:"connector"`
	Key       string `json:"key"`
	Old       string `json:"old"`
	// New is the rewritten value; empty when Unmappable.
	New string `json:"new,omitempty"`
	// Unmappable says why the key could not be rewritten (a topics.regex
	// that does not match the renamed topics): a restore refuses to create
	// or resume the connector with it.
	Unmappable string `json:"unmappable,omitempty"`
}

func (c ConfigRewrite) String() string {
	if c.Unmappable != "" {
		return fmt.Sprintf("connector %s: %s=%s NOT REWRITTEN: %s", c.Connector, c.Key, c.Old, c.Unmappable)
	}
	return fmt.Sprintf("connector %s: %s=%s -> %s=%s", c.Connector, c.Key, c.Old, c.Key, c.New)
}

// SplitTopics splits a topics setting as Connect's LIST type does: on
// commas, each name trimmed, empty names dropped.
func SplitTopics(v string) []string {
	var out []string
	for _, n := range strings.Split(v, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// RegexReads reports whether topics.regex re matches topic whole, as
// Java's Pattern.matcher(topic).matches() does. A pattern Go's regexp
// cannot compile (Java-only syntax) is taken to match: it cannot be told.
func RegexReads(re, topic string) bool {
	x, err := regexp.Compile(`^(?:` + re + `)$`)
	if err != nil {
		return true
	}
	return x.MatchString(topic)
}

// readsTopic reports whether a sink connector with config reads topic:
// its topics list names it, or its topics.regex matches it.
func readsTopic(config map[string]string, topic string) bool {
	if v := config[keyTopics]; strings.TrimSpace(v) != "" {
		return slices.Contains(SplitTopics(v), topic)
	}
	if re := config[keyTopicsRegex]; re != "" {
		return RegexReads(re, topic)
	}
	return false
}

// readSetting is a sink config's topics or topics.regex as key=value.
func readSetting(config map[string]string) string {
	if v := config[keyTopics]; strings.TrimSpace(v) != "" {
		return keyTopics + "=" + v
	}
	if v := config[keyTopicsRegex]; v != "" {
		return keyTopicsRegex + "=" + v
	}
	return "no topics setting"
}

// unreadRefusals refuses, before anything is changed, to create or resume
// a sink connector whose config would not read the topics its offsets are
// restored into (the offsets written there would be for nothing, and the
// connector would start on its topics from wherever their group has, or
// has not, committed): one created by CreateConnectors, always; one put
// back by Resume, with Resume. Only offsets on topics the snapshot's own
// config read count (a group keeps the commits of topics its connector
// no longer reads), and every renamed topic of a topics.regex the
// translation could not rewrite.
func (r *run) unreadRefusals(plan *Plan, creations []Creation) []Refusal {
	var out []Refusal
	for _, cp := range plan.Connectors {
		if cp.Sink == nil {
			continue
		}
		sc, _ := r.req.Snapshot.Connector(cp.Name)
		unmappable := ""
		for _, c := range r.req.ConfigRewrites {
			if c.Connector == cp.Name && c.Unmappable != "" {
				unmappable = c.Unmappable
			}
		}
		var config map[string]string
		created := false
		if i := slices.IndexFunc(creations, func(c Creation) bool { return c.Connector == cp.Name && c.Action == CreateCreate }); i >= 0 {
			config, created = creations[i].config, true
		} else if r.req.Resume && r.req.StopConnectors && cp.Live.HasConfig && (r.req.Start || !cp.Live.Stopped()) {
			config = cp.Live.Config
		}
		if config == nil || (sc.Config == nil && unmappable == "") {
			continue
		}
		var unread []string
		for _, ch := range cp.Sink.Changes() {
			meant := unmappable != "" || readsTopic(sc.Config, ch.Topic)
			if (ch.Action == Changed || ch.Action == Added) && meant && !readsTopic(config, ch.Topic) && !slices.Contains(unread, ch.Topic) {
				unread = append(unread, ch.Topic)
			}
		}
		if len(unread) == 0 {
			continue
		}
		out = append(out, Refusal{Connector: cp.Name, Check: CheckConfigTopics, Reason: unreadReason(cp.Name, config, unread, unmappable, created)})
	}
	return out
}

// unreadReason is the Reason of a CheckConfigTopics refusal.
func unreadReason(name string, config map[string]string, unread []string, unmappable string, created bool) string {
	why := ""
	if unmappable != "" {
		why = " (" + unmappable + ")"
	}
	topics := strings.Join(unread, ", ")
	if created {
		return fmt.Sprintf("--create-connectors would create it with %s%s, which does not read %s, where its offsets are restored; create it by hand STOPPED with topics that read them (POST /connectors with \"initial_state\":\"STOPPED\"), then restore without --create-connectors",
			readSetting(config), why, topics)
	}
	return fmt.Sprintf("its config here reads %s, not %s, where its offsets are restored: --resume would start it on topics it has no restored offsets for; change its topics first (PUT /connectors/%s/config), or restore without --resume and resume it once its config reads them",
		readSetting(config), topics, url.PathEscape(name))
}

// printCreatedConfigs names, for each connector to be created, the
// config keys a translation rewrote, and records them on its Creation.
func (r *run) printCreatedConfigs(w io.Writer, cs []Creation) {
	for i, c := range cs {
		if c.Action != CreateCreate {
			continue
		}
		for _, x := range r.req.ConfigRewrites {
			if x.Connector == c.Connector && x.Unmappable == "" {
				cs[i].Rewritten = append(cs[i].Rewritten, x)
				fmt.Fprintf(w, "  %s: created with %s=%s (the snapshot has %s=%s)\n", c.Connector, x.Key, x.New, x.Key, x.Old)
			}
		}
	}
}

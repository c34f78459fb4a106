package translate

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// Sink connector config keys naming what a sink reads.
const (
	keyTopics      = "topics"
	keyTopicsRegex = "topics.regex"
)

// printConfigRewrites writes one "config:" line per rewrite.
func printConfigRewrites(e *errWriter, rs []restore.ConfigRewrite) {
	for _, c := range rs {
		what := " (the config --create-connectors creates it with)"
		if c.Unmappable != "" {
			what = " (--create-connectors and --resume refuse it)"
		}
		e.printf("config: %s%s\n", c, what)
	}
}

// renamesTopics reports whether opts rename sink topics.
func (o TranslateOptions) renamesTopics() bool {
	return len(o.MapTopics) > 0 || o.TopicPrefix != "" || o.Method == TranslateMM2
}

// newTopic is the target's name of sink topic topic, as the translation
// names it (MirrorMaker 2's default copy name unless named explicitly).
func (t *translator) newTopic(topic string) string {
	if t.opts.Method == TranslateMM2 && !t.explicitName(topic) {
		return t.opts.SourceAlias + "." + topic
	}
	return t.rename(topic)
}

// rewriteSinkConfigs applies the translation's topic renames to the
// topics setting of every sink connector's config in out (the config
// --create-connectors creates it with), and records in t.tr what it
// rewrote, and each topics.regex it cannot rewrite: a pattern is not a
// list of names, and one that does not match the renamed topics would
// read none of the offsets restored.
func (t *translator) rewriteSinkConfigs(out *snapshot.Snapshot) {
	if !t.opts.renamesTopics() || t.opts.SourceOnly {
		return
	}
	for i := range out.Connectors {
		c := &out.Connectors[i]
		if c.Type != snapshot.TypeSink || c.Config == nil {
			continue
		}
		if old := c.Config[keyTopics]; strings.TrimSpace(old) != "" {
			names := restore.SplitTopics(old)
			for j, n := range names {
				names[j] = t.newTopic(n)
			}
			if n := strings.Join(names, ","); n != old {
				c.Config = maps.Clone(c.Config)
				c.Config[keyTopics] = n
				t.tr.Configs = append(t.tr.Configs, restore.ConfigRewrite{Connector: c.Name, Key: keyTopics, Old: old, New: n})
			}
			continue
		}
		re := c.Config[keyTopicsRegex]
		if re == "" {
			continue
		}
		var unread []string
		for _, o := range t.tr.Offsets {
			if o.Connector == c.Name && o.NewTopic != o.Topic && !slices.Contains(unread, o.NewTopic) && !restore.RegexReads(re, o.NewTopic) {
				unread = append(unread, o.NewTopic)
			}
		}
		if len(unread) > 0 {
			t.tr.Configs = append(t.tr.Configs, restore.ConfigRewrite{Connector: c.Name, Key: keyTopicsRegex, Old: re,
				Unmappable: fmt.Sprintf("a pattern cannot be rewritten to the renamed topics, and it does not match %s", strings.Join(unread, ", "))})
		}
	}
}

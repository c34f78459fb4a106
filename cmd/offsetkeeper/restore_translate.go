package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/kafkaconf"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/restore/translate"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// translateFlags are restore's flags for moving offsets to another
// cluster (docs/migrate.md): sink offsets translated, topics and
// connectors renamed. They are per-run choices.
type translateFlags struct {
	method        string
	sourceAlias   string
	targetAlias   string
	sourceBrokers string
	margin        time.Duration
	mapTopics     listFlag
	topicPrefix   string
	rename        listFlag
	// rewrites are the sink configs the translation rewrote, for
	// restore.Request.ConfigRewrites.
	rewrites []restore.ConfigRewrite
}

// translateFlagNames are the flags of translateFlags.
var translateFlagNames = []string{"translate", "mm2-source-alias", "mm2-target-alias", "source-brokers", "translate-margin", "map-topic", "topic-prefix", "rename-connector"}

func (t *translateFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&t.method, "translate", "", "translate sink offsets into the target cluster's copies of the topics: mm2 (MirrorMaker 2's checkpoints, then its offset syncs, then timestamps) or timestamp (the last consumed record's timestamp); see docs/migrate.md")
	fs.StringVar(&t.sourceAlias, "mm2-source-alias", "", "with --translate mm2: MirrorMaker 2's alias of the source cluster (checkpoints topic ALIAS.checkpoints.internal, copies named ALIAS.<topic>)")
	fs.StringVar(&t.targetAlias, "mm2-target-alias", "", "with --translate mm2 and --source-brokers: MirrorMaker 2's alias of the target cluster (offset syncs topic mm2-offset-syncs.ALIAS.internal; default the one such topic on the source cluster)")
	fs.StringVar(&t.sourceBrokers, "source-brokers", "", "with --translate mm2: the source cluster's brokers (host:port,...), for MirrorMaker 2's offset syncs when a group has no checkpoints; the same security settings as the target")
	fs.DurationVar(&t.margin, "translate-margin", 0, "with --translate timestamp: look this much before the last consumed record's timestamp (more re-deliveries, fewer records skipped when producers' clocks disagree)")
	fs.Var(&t.mapTopics, "map-topic", "SRC=DST: restore sink offsets of topic SRC into topic DST; repeatable")
	fs.StringVar(&t.topicPrefix, "topic-prefix", "", "restore sink offsets of every topic not in --map-topic into PREFIX<topic> (MirrorMaker 2's default copies are named <source alias>.<topic>)")
	fs.Var(&t.rename, "rename-connector", "OLD=NEW: restore connector OLD's offsets as connector NEW's (source keys rewritten as a worker writes them, sink offsets into NEW's group); OLD's offsets are left alone; repeatable")
}

// active reports whether the snapshot must be translated.
func (t *translateFlags) active() bool {
	return t.method != "" || len(t.mapTopics) > 0 || t.topicPrefix != "" || len(t.rename) > 0
}

// options checks the flags and returns the translation options.
func (t *translateFlags) options() (translate.TranslateOptions, error) {
	o := translate.TranslateOptions{Method: t.method, SourceAlias: t.sourceAlias, TargetAlias: t.targetAlias, Margin: t.margin, TopicPrefix: t.topicPrefix}
	switch t.method {
	case "", translate.TranslateTimestamp, translate.TranslateMM2:
	default:
		return o, usagef("--translate %q: want mm2 or timestamp", t.method)
	}
	switch {
	case t.method == translate.TranslateMM2 && t.sourceAlias == "":
		return o, usagef("--translate mm2 needs --mm2-source-alias ALIAS (MirrorMaker 2's name of the source cluster)")
	case t.method != translate.TranslateMM2 && (t.sourceAlias != "" || t.sourceBrokers != "" || t.targetAlias != ""):
		return o, usagef("--mm2-source-alias, --mm2-target-alias and --source-brokers go with --translate mm2")
	case t.margin < 0:
		return o, usagef("--translate-margin %s: want a duration of 0 or more", t.margin)
	case t.margin > 0 && t.method == "":
		return o, usagef("--translate-margin goes with --translate timestamp or mm2")
	}
	pairs := func(flagName string, l listFlag) (map[string]string, error) {
		m := map[string]string{}
		for _, v := range l {
			k, val, ok := strings.Cut(v, "=")
			if !ok || k == "" || val == "" {
				return nil, usagef("--%s %q: want OLD=NEW", flagName, v)
			}
			if _, dup := m[k]; dup {
				return nil, usagef("--%s: %q is given twice", flagName, k)
			}
			m[k] = val
		}
		return m, nil
	}
	var err error
	if o.MapTopics, err = pairs("map-topic", t.mapTopics); err != nil {
		return o, err
	}
	if o.Rename, err = pairs("rename-connector", t.rename); err != nil {
		return o, err
	}
	return o, nil
}

// translate turns snap into the snapshot to restore into cl's cluster and
// prints the translation table. A sink partition that cannot be
// translated refuses the restore (exit 3) unless --force, which leaves it
// alone. The scope's connector names follow their renames.
func (c *restoreCmd) translate(ctx context.Context, cl *kgo.Client, snap *snapshot.Snapshot, ropts *restore.Options) (*snapshot.Snapshot, error) {
	topts, err := c.tr.options()
	if err != nil {
		return nil, err
	}
	topts.ConfigTopic, topts.GroupPrefix = ropts.ConfigTopic, ropts.GroupPrefix
	if c.tr.sourceBrokers != "" {
		cfg, _, err := c.g.kafkaSettings()
		if err != nil {
			return nil, err
		}
		cfg.Brokers = splitList(c.tr.sourceBrokers)
		src, err := cfg.Connect(ctx)
		if err != nil {
			return nil, fmt.Errorf("connect to the source cluster (--source-brokers): %w; nothing was written", kafkaconf.DescribeError(err))
		}
		defer src.Close()
		topts.Source = src
	}
	// Only what the restore writes is translated (and can refuse it).
	topts.Connectors, topts.SourceOnly = ropts.Connectors, ropts.SourceOnly
	out, tr, err := translate.Translate(ctx, cl, snap, topts)
	if err != nil {
		var nis *restore.NotInSnapshotError
		if errors.As(err, &nis) { // listed with this run's settings, before the text is made
			nis.Show = c.g.commandSettings().ShowOf(snap)
		}
		return nil, fmt.Errorf("translate snapshot %s: %w; nothing was written", snap.ID, kafkaconf.DescribeError(err))
	}
	if err := tr.Print(c.progress()); err != nil {
		return nil, err
	}
	c.tr.rewrites = tr.Configs
	for i, n := range ropts.Connectors {
		if nn, ok := topts.Rename[n]; ok {
			ropts.Connectors[i] = nn
		}
	}
	bad := tr.Untranslated()
	if len(bad) == 0 {
		return out, nil
	}
	refusal := &restore.RefusedError{}
	for _, o := range bad {
		refusal.Refusals = append(refusal.Refusals, restore.Refusal{Connector: o.Connector, Check: translate.CheckUntranslatable,
			Reason: fmt.Sprintf("group %s %s/%d cannot be translated: %s", o.Group, o.Topic, o.Partition, o.Why)})
	}
	if c.force {
		fmt.Fprintf(c.stderr, "WARNING: --force: %s cannot be translated and left as they are on the target:\n", plural(len(bad), "sink partition", "sink partitions"))
		for _, r := range refusal.Refusals {
			fmt.Fprintf(c.stderr, "WARNING:   - %s\n", r.Reason)
		}
		return out, nil
	}
	if c.dryRun {
		fmt.Fprintln(c.progress(), "dry run: nothing written; the restore would be refused (see below)")
	}
	return nil, fmt.Errorf("%w%s", refusal, untranslatedAdvice(tr, bad))
}

// forceTurnsOff is what --force turns off, for advice that offers it.
const forceTurnsOff = "every safety check of the restore (connector running, sink group members, open transactions, offsets topic cleanup.policy, another restore running)"

// untranslatedAdvice says how to go ahead when sink partitions cannot be
// translated: the flag that translates them when there is one, --connector
// to restore only the connectors that translate, and --force only when no
// flag fixes them, saying what it turns off.
func untranslatedAdvice(tr *translate.Translation, bad []translate.TranslatedOffset) string {
	var fixes []string
	noFix := false
	badConn := map[string]bool{}
	for _, o := range bad {
		badConn[o.Connector] = true
		switch {
		case o.Fix == "":
			noFix = true
		case !slices.Contains(fixes, o.Fix):
			fixes = append(fixes, o.Fix)
		}
	}
	var good []string
	for _, o := range tr.Offsets {
		if !badConn[o.Connector] && !slices.Contains(good, o.Connector) {
			good = append(good, o.Connector)
		}
	}
	var parts []string
	if len(fixes) > 0 {
		parts = append(parts, "to translate them, restore with "+strings.Join(fixes, " "))
	}
	if len(good) > 0 {
		narrow := make([]string, len(good))
		for i, g := range good {
			narrow[i] = "--connector " + restore.ShellQuote(g)
		}
		parts = append(parts, "to restore only the connectors that translate: "+strings.Join(narrow, " "))
	}
	if noFix {
		parts = append(parts, "--force restores the others and leaves these as they are on the target, but it also turns off "+forceTurnsOff)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// failedBeforeRun reports an error met before restore.Run (a translation
// that cannot be made or is refused): with --output json it writes the
// document of the failed or refused restore.
func (c *restoreCmd) failedBeforeRun(snap *snapshot.Snapshot, err error) error {
	if c.output == "json" && snap != nil {
		rep := &restore.Report{Snapshot: snap.ID, DryRun: c.dryRun, Forced: c.force}
		if jerr := writeJSON(c.stdout, rep.Document(err)); jerr != nil {
			return errors.Join(err, jerr)
		}
	}
	return err
}

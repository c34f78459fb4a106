package standby

// This file is the standby's Connect internal topics (offsets, config,
// status): those missing on the standby are created with
// Config.CreateTopics (--standby-create-topics) as restore --create-topics
// creates them (restore.CreateConnectTopics: cleanup.policy=compact, the
// primary's partition counts), or named, each with the command that
// creates it, and nothing is written.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/english"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// ErrTopicsMissing: offsets topics are missing on the standby and
// Config.CreateTopics is not set: nothing was written. (A missing config
// or status topic only is named in the Report's warnings: the offsets
// are still kept in step.)
var ErrTopicsMissing = errors.New("the standby lacks Connect's topics")

// connectTopics are the standby's Connect internal topics for a sync of
// snap with opts: its worker offsets topics and the connectors' own (with
// the primary's partition counts where the primary has a topic of that
// name, else Connect's default), its config topic and its status topic.
// The primary's topics of other names are not the standby's.
func connectTopics(snap *snapshot.Snapshot, opts restore.Options) []restore.ConnectTopic {
	names := append(slices.Clone(opts.OffsetsTopics), opts.ConfigTopic, opts.StatusTopic)
	counts := &snapshot.Snapshot{}
	for _, t := range snap.Topics {
		if slices.Contains(names, t.Name) {
			counts.Topics = append(counts.Topics, t)
		}
	}
	return restore.ConnectTopics(counts, opts)
}

// ensureTopics creates the standby's missing Connect topics
// (Config.CreateTopics; a dry run names them in rep.CreatedTopics), or
// returns ErrTopicsMissing naming them.
func (s *Syncer) ensureTopics(ctx context.Context, snap *snapshot.Snapshot, opts restore.Options, rep *Report) error {
	topics := connectTopics(snap, opts)
	if s.cfg.CreateTopics {
		names, err := restore.CreateConnectTopics(ctx, s.cfg.Client, topics, s.cfg.ReplicationFactor, s.cfg.DryRun, func(t restore.ConnectTopic, what string) {
			if !s.cfg.DryRun {
				s.cfg.Log.Info("standby topic created: "+what, "topic", t.Name, "partitions", t.Partitions)
			}
		})
		rep.CreatedTopics = names
		if err != nil {
			return fmt.Errorf("create the standby's Connect topics: %w", err)
		}
		return nil
	}
	adm := kadm.NewClient(s.cfg.Client)
	have, err := adm.ListTopics(ctx, names(topics)...)
	if err != nil {
		return fmt.Errorf("list the standby's Connect topics: %w; nothing was written", err)
	}
	var missing []restore.ConnectTopic
	offsets := false
	for _, t := range topics {
		if d, ok := have[t.Name]; !ok || d.Err != nil {
			missing = append(missing, t)
			offsets = offsets || t.Role == snapshot.RoleOffsets
		}
	}
	if len(missing) == 0 {
		return nil
	}
	err = s.missingTopics(ctx, adm, missing)
	if !offsets {
		// The offsets can still be kept in step; the standby's workers
		// need the others before they start.
		rep.Warnings = append(rep.Warnings, err.Error())
		s.cfg.Log.Warn("standby topics missing", "error", err)
		return nil
	}
	return err
}

// missingTopics is ErrTopicsMissing naming missing, each with the command
// that creates it.
func (s *Syncer) missingTopics(ctx context.Context, adm *kadm.Client, missing []restore.ConnectTopic) error {
	rf := s.cfg.ReplicationFactor
	if rf <= 0 {
		rf = 3
		if md, err := adm.BrokerMetadata(ctx); err == nil && len(md.Brokers) > 0 {
			rf = min(rf, len(md.Brokers))
		}
	}
	bootstrap := ""
	if seeds, ok := s.cfg.Client.OptValue(kgo.SeedBrokers).([]string); ok {
		bootstrap = strings.Join(seeds, ",")
	}
	var b strings.Builder
	for _, t := range missing {
		m := restore.MissingTopic{Topic: t.Name, OffsetsTopic: true, Partitions: t.Partitions, ReplicationFactor: rf, Bootstrap: bootstrap}
		fmt.Fprintf(&b, "\n%s\n%s", english.Wrap(fmt.Sprintf("  %s (Connect %s topic, %s %s):", t.Name, t.Role,
			english.Count(int(t.Partitions), "partition", "partitions"), t.From), 120, "    "),
			english.Continue(m.Command(), 120, "    ", "      "))
	}
	how := "create them (or run the daemon with --standby-create-topics, which creates them so)"
	if s.cfg.Failover {
		how = "create them"
	}
	head := english.Wrap(fmt.Sprintf("%s: %s; nothing was written; %s:", ErrTopicsMissing, strings.Join(names(missing), ", "), how), 120, "  ")
	return fmt.Errorf("%w%s%s", ErrTopicsMissing, strings.TrimPrefix(head, ErrTopicsMissing.Error()), b.String())
}

func names(ts []restore.ConnectTopic) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

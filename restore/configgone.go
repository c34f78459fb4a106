package restore

import (
	"fmt"
	"slices"
	"strings"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
)

// This file is the advice for connectors the Connect workers run from
// memory while the config topic holds no config for them: the config topic
// was deleted, or deleted and created again, after the workers read it. A
// real Connect 3.8 worker then keeps running them, answers 500 to a config
// change ("Error writing connector configuration to Kafka": it cannot read
// its own write back) and loses them at its next restart. Nothing written
// to the offsets brings the configs back, and --create-connectors cannot
// create a connector Connect still reports: the workers must restart
// first, then the restore creates the connectors with the snapshot's
// configs.

// memoryOnly names, sorted, the connectors of plan that Connect reports
// (known) although the config topic holds no config for them.
func memoryOnly(plan *Plan, known func(string) bool) []string {
	var out []string
	for _, cp := range plan.Connectors {
		if !cp.Live.HasConfig && known(cp.Name) {
			out = append(out, cp.Name)
		}
	}
	slices.Sort(out)
	return out
}

// configGoneAdvice says what to do about connectors run from memory
// (memoryOnly): restart the workers, then restore with --create-connectors,
// from a state that holds their configs.
func (r *run) configGoneAdvice(names []string) string {
	topic := r.req.Options.ConfigTopic
	if topic == "" {
		topic = snapshot.DefaultConfigTopic
	}
	var noConfig []string
	for _, n := range names {
		if c, ok := r.req.Snapshot.Connector(n); !ok || !c.HasConfig || c.Config == nil {
			noConfig = append(noConfig, n)
		}
	}
	what := fmt.Sprintf("Connect runs %s from memory, but the config topic %s holds no config for %s: it was deleted or re-created since the workers read it (or --config-topic names another topic than theirs). The workers cannot write a config change (PUT answers 500) and lose %s at their next restart; restoring offsets does not bring configs back.",
		plural(len(names), "connector", "connectors")+" "+strings.Join(names, ", "), topic, pick(len(names) == 1, "it", "them"), pick(len(names) == 1, "it", "them"))
	if len(noConfig) > 0 {
		return what + fmt.Sprintf(" The state restored holds no config for %s either: restart the workers, then restore a state from before the config topic went, with --create-connectors (%s lists config-topic-deleted with that restore).",
			strings.Join(noConfig, ", "), eventsCommand(r.req.Commands))
	}
	again := r.req.Again.Run
	if again == "" && r.req.Snapshot.Reason == journal.ReasonAt {
		again = r.req.Commands.At(r.req.Snapshot.CreatedAt, r.req.Connectors...).Run
	}
	if again == "" {
		return what + " Restart the workers (each reads the config topic again and drops them), then run this restore again with --create-connectors: it creates them with the snapshot's configs, STOPPED, writes their offsets, then starts them with --resume."
	}
	return what + " Restart the workers (each reads the config topic again and drops them), then create them with the snapshot's configs, their offsets written before they start: " + again + " --create-connectors"
}

// configGoneCommands are the commands configGoneAdvice(names) holds.
func (r *run) configGoneCommands(names []string) []string {
	for _, n := range names {
		if c, ok := r.req.Snapshot.Connector(n); !ok || !c.HasConfig || c.Config == nil {
			return []string{eventsCommand(r.req.Commands)}
		}
	}
	again := r.req.Again.Run
	if again == "" && r.req.Snapshot.Reason == journal.ReasonAt {
		again = r.req.Commands.At(r.req.Snapshot.CreatedAt, r.req.Connectors...).Run
	}
	if again == "" {
		return nil
	}
	return []string{again + " --create-connectors"}
}

// eventsCommand is the events command with the printing command's
// settings.
func eventsCommand(s CommandSettings) string {
	program := s.Program
	if program == "" {
		program = "offsetkeeper"
	}
	return program + " " + quoteArgs(append([]string{"events"}, s.Flags...))
}

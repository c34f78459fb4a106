package main

// This file is failover before a primary whose Connect answers while its
// Kafka does not. A worker answers GET /connectors and the statuses from
// memory (AbstractHerder.connectors reads configBackingStore.snapshot(),
// never Kafka): it reports the connectors RUNNING as it last knew them,
// and failover refuses; but a stop is written to the worker's config
// topic, in that Kafka, so the switchover's stops the refusal prints
// cannot be done. Only --force gets through, and the refusal says so.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/kafkaconf"
	"github.com/offsetkeeper/offsetkeeper/restore"
)

// primaryKafkaWait bounds how long failover waits for the primary's Kafka
// before it takes it as down (--kafka-timeout, when shorter, bounds it).
const primaryKafkaWait = 10 * time.Second

// primaryKafkaNamed reports whether the primary's brokers were given
// (--brokers or its environment twin, or --worker-config): the default
// localhost:9092 names no primary.
func (c *failoverCmd) primaryKafkaNamed() bool {
	return c.g.fs != nil && c.g.explicit("brokers") || c.g.workerConfig != ""
}

// primaryKafkaDown connects to the primary's Kafka, when named: it
// returns why it did not answer (the error names the brokers), nil when
// it answered or is not named.
func (c *failoverCmd) primaryKafkaDown(ctx context.Context) error {
	if !c.primaryKafkaNamed() {
		return nil
	}
	cfg, _, err := c.g.kafkaSettings()
	if err != nil {
		return err
	}
	if cfg.RetryTimeout <= 0 || cfg.RetryTimeout > primaryKafkaWait {
		cfg.RetryTimeout = primaryKafkaWait
	}
	cl, err := cfg.Connect(ctx)
	if err != nil {
		return kafkaconf.DescribeError(err)
	}
	cl.Close()
	return nil
}

// kafkaDownRefusal is the refusal of a failover whose primary's Connect
// reports connectors of the state running (running) while the primary's
// Kafka does not answer (why, which names the brokers): it says what failed, that the
// stops cannot be done, and prints the failover with --force, with its
// risk.
func (c *failoverCmd) kafkaDownRefusal(running []string, why error) error {
	force := "run the same " + c.by + " with --force"
	var cmds []string
	if words := c.againCommand("--force"); words != nil {
		cmds = append(cmds, strings.Join(words, " "))
		force = "fail over with --force: " + cmds[0]
	}
	msg := fmt.Sprintf("%s refused, nothing was written: the primary's Connect answers and reports %s of the state "+
		"RUNNING (%s), but the primary's Kafka does not answer (%v). A worker whose Kafka is down answers "+
		"from memory: those are the states it last knew, and it cannot stop them (a stop is written to its config topic, "+
		"in that Kafka), so stopping them there first is not possible now. Only --force gets through; its risk: when the "+
		"primary's Kafka is back, its workers run these connectors again beside the standby's, each committing its own "+
		"offsets (sinks deliver twice, sources produce twice), so keep the primary's workers down until you have stopped "+
		"them there (PUT /connectors/NAME/stop once its Kafka answers). To %s",
		c.by, plural(len(running), "connector", "connectors"), strings.Join(running, ", "), why, force)
	return &restore.AdvisedError{Err: refusedError(msg), Commands: cmds}
}

// kafkaUnasked is what the refusal of a primary that runs connectors adds
// when the primary's Kafka was not asked: a Kafka down makes its stops
// impossible, and only failover asked tells.
func (c *failoverCmd) kafkaUnasked() string {
	if c.primaryKafkaNamed() {
		return ""
	}
	return fmt.Sprintf(" (the primary's Kafka was not asked: if it is down, its Connect answers from memory and cannot stop them; "+
		"give --brokers of the primary and %s says so, with the way through)", c.by)
}

package main

// This file is the standby's names of the sink topics: --standby-map-topic
// and --standby-topic-prefix (settings of a standby pairing, with their
// environment twins), also spelt as restore's --map-topic and
// --topic-prefix on the command line. A failback after a MirrorMaker 2
// failover needs them: the new primary's sinks committed offsets on
// primary.orders, MirrorMaker 2's copy of the old primary's orders, and
// the old primary has no copy of its own topic (MirrorMaker 2 does not
// mirror a topic back to the cluster it came from): primary.orders=orders.

import (
	"flag"
	"strings"
)

func (f *standbyFlags) registerTopicNames(fs *flag.FlagSet, cliSpellings bool) {
	fs.Var(&f.mapTopics, "standby-map-topic", "SRC=DST: the standby's copy of sink topic SRC is DST (a failback after a MirrorMaker 2 failover: primary.orders=orders); repeatable; with --standby-translate the offsets are translated into DST, without it kept as numbers")
	fs.StringVar(&f.topicPrefix, "standby-topic-prefix", "", "the standby's copy of every sink topic not in --standby-map-topic is PREFIX<topic> (replaces MirrorMaker 2's ALIAS. with --standby-translate mm2)")
	if cliSpellings {
		// restore's per-run spellings, which restore's advice prints
		// (no twin: use OFFSETKEEPER_STANDBY_MAP_TOPIC, ..._TOPIC_PREFIX).
		fs.Var(&f.mapCLI, "map-topic", "SRC=DST: the same as --standby-map-topic; repeatable")
		fs.StringVar(&f.prefixCLI, "topic-prefix", "", "the same as --standby-topic-prefix")
	}
}

// checkTopicNames checks the topic names given, both spellings: usage
// errors.
func (f *standbyFlags) checkTopicNames() error {
	if f.prefixCLI != "" {
		if f.topicPrefix != "" && f.topicPrefix != f.prefixCLI {
			return usagef("--topic-prefix %q and --standby-topic-prefix %q differ: give one", f.prefixCLI, f.topicPrefix)
		}
		f.topicPrefix = f.prefixCLI
	}
	seen := map[string]string{}
	for _, v := range append(append([]string{}, f.mapTopics...), f.mapCLI...) {
		src, dst, ok := strings.Cut(v, "=")
		if !ok || src == "" || dst == "" {
			return usagef("--standby-map-topic %q: want SRC=DST", v)
		}
		if d, dup := seen[src]; dup && d != dst {
			return usagef("--standby-map-topic: %q is mapped twice (to %q and %q)", src, d, dst)
		}
		seen[src] = dst
	}
	return nil
}

// renamesTopics reports whether the standby's copies are named.
func (f *standbyFlags) renamesTopics() bool {
	return len(f.mapTopics) > 0 || len(f.mapCLI) > 0 || f.topicPrefix != "" || f.prefixCLI != ""
}

// topicMap is --standby-map-topic and --map-topic as a map (checked by
// checkTopicNames), nil when neither is given.
func (f *standbyFlags) topicMap() map[string]string {
	m := map[string]string{}
	for _, v := range append(append([]string{}, f.mapTopics...), f.mapCLI...) {
		if src, dst, ok := strings.Cut(v, "="); ok {
			m[src] = dst
		}
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

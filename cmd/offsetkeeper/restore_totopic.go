package main

import (
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// checkToTopic is the usage check of restore --connector X
// --to-offsets-topic NEW: the AWS recipe for carrying a connector's
// offsets to a connector recreated on MSK Connect (whose own topics are
// new), or to any worker started with offset.storage.topic=NEW.
// restore.Run does the rest (Request.ToOffsetsTopic): the plan, the undo
// snapshot, one transaction into the new topic, the read back and the
// worker setting to use.
func (c *restoreCmd) checkToTopic(snap *snapshot.Snapshot, hasClient bool) error {
	switch {
	case len(c.connectors) != 1:
		return usagef("--to-offsets-topic takes one source connector: give --connector NAME once")
	case c.via != restore.ViaKafka, !hasClient:
		return usagef("--to-offsets-topic writes through Kafka: drop --via connect and give --brokers")
	case c.sinkOnly:
		return usagef("--to-offsets-topic restores a source connector's offsets: drop --sink-only")
	}
	if snap == nil {
		return nil // --from-file: restore.Run checks it
	}
	tab := snap.SourceTable()
	for i := range int32(tab.Len()) {
		if tab.Connector(i) == c.connectors[0] && tab.Topic(i) == c.toOffsetsTopic {
			return usagef("--to-offsets-topic %q is the topic the snapshot read the connector's offsets from: restore it without --to-offsets-topic", c.toOffsetsTopic)
		}
	}
	return nil
}

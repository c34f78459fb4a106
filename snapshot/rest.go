package snapshot

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/offsetkeeper/offsetkeeper/internal/connectjson"
)

// ConnectREST returns, for one connector, exactly the body Kafka Connect's
// GET /connectors/{name}/offsets would answer for the state in the snapshot,
// so it can be fed to PATCH /connectors/{name}/offsets as is.
//
// Source connectors: Connect lists each partition once (keys equal as Java
// maps are one partition) and looks its offset up under the key bytes its
// own JsonConverter round trip produces (connectjson.CanonicalKey), in the
// topic the connector reads: its own offsets.storage.topic if it has one.
// A partition stored only under other bytes shows "offset": null, as
// Connect shows it. Sink connectors: {"kafka_topic","kafka_partition"} ->
// {"kafka_offset"} per committed partition of the group.
func (s *Snapshot) ConnectREST(connector string) ([]byte, error) {
	conn, ok := s.Connector(connector)
	if !ok {
		return nil, fmt.Errorf("render REST offsets of connector %q: not in snapshot %s", connector, s.ID)
	}
	var entries []connectjson.OffsetEntry
	if conn.Type == TypeSink {
		g, _ := s.SinkGroupOf(connector)
		for _, o := range g.Offsets {
			entries = append(entries, connectjson.OffsetEntry{Partition: connectjson.SinkPartition(o.Topic, o.Partition), Offset: connectjson.SinkOffset(o.Offset)})
		}
	} else {
		entries = s.sourceREST(conn)
	}
	return connectjson.EncodeOffsets(entries), nil
}

func (s *Snapshot) sourceREST(conn Connector) []connectjson.OffsetEntry {
	partitions := make(map[string]connectjson.Map) // canonical key -> partition
	var order []string
	// Values are looked up in the topic the connector reads.
	values := make(map[string][]SourceOffset) // key bytes -> entries
	for _, o := range s.SourceOffsetsOf(conn.Name) {
		name, m, _, err := connectjson.ParseKey(o.Key)
		if err != nil || name != conn.Name || connectjson.Nested(m) {
			continue
		}
		canon := string(connectjson.CanonicalKey(name, m))
		if _, dup := partitions[canon]; !dup {
			partitions[canon] = m
			order = append(order, canon)
		}
		if conn.OffsetsTopic == "" || o.Topic == conn.OffsetsTopic {
			values[string(o.Key)] = append(values[string(o.Key)], o)
		}
	}
	var items []connectjson.OffsetEntry
	for _, canon := range order {
		item := connectjson.OffsetEntry{Partition: partitions[canon]}
		copies := values[canon]
		var n int32
		if len(copies) > 0 {
			n = s.PartitionCount(copies[0].Topic)
		}
		if o, ok := pickValue(copies, n); ok {
			if m, err := connectjson.ParseMap(o.Value); err == nil && !connectjson.Nested(m) {
				item.Offset = m
			} else if err == nil || !errors.Is(err, connectjson.ErrNullOffset) {
				continue // Connect leaves such a partition out of its listing
			}
		}
		items = append(items, item)
	}
	return items
}

// pickValue chooses among copies of one key in several partitions the one a
// worker would most likely end with: the copy on the key's murmur2
// partition (a copy elsewhere was written there by hand).
func pickValue(copies []SourceOffset, partitions int32) (SourceOffset, bool) {
	switch len(copies) {
	case 0:
		return SourceOffset{}, false
	case 1:
		return copies[0], true
	}
	want := PartitionFor(copies[0].Key, partitions)
	for _, c := range copies {
		if c.Partition == want {
			return c, true
		}
	}
	return copies[0], true
}

// Where names where a source offset lives, for people: "topic/partition",
// or for one captured through the Connect REST API (NoPartition) "rest",
// after the connector's own offsets topic when it has one ("topic/rest").
func Where(topic string, partition int32) string {
	switch {
	case partition != NoPartition:
		return topic + "/" + strconv.Itoa(int(partition))
	case topic == "":
		return "rest"
	}
	return topic + "/rest"
}

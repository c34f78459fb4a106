package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"sort"

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
	var items [][2][]byte
	if conn.Type == TypeSink {
		g, _ := s.SinkGroupOf(connector)
		for _, o := range g.Offsets {
			p := connectjson.Map{
				{Key: "kafka_topic", Value: connectjson.StringValue(o.Topic)},
				{Key: "kafka_partition", Value: connectjson.LongValue(int64(o.Partition))},
			}
			v := connectjson.Map{{Key: "kafka_offset", Value: connectjson.LongValue(o.Offset)}}
			items = append(items, [2][]byte{connectjson.RESTMap(p), connectjson.RESTMap(v)})
		}
	} else {
		items = s.sourceREST(conn)
	}
	sort.Slice(items, func(i, j int) bool { return bytes.Compare(items[i][0], items[j][0]) < 0 })
	var b bytes.Buffer
	b.WriteString(`{"offsets":[`)
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"partition":`)
		b.Write(it[0])
		b.WriteString(`,"offset":`)
		if it[1] == nil {
			b.WriteString("null")
		} else {
			b.Write(it[1])
		}
		b.WriteByte('}')
	}
	b.WriteString(`]}`)
	return b.Bytes(), nil
}

func (s *Snapshot) sourceREST(conn Connector) [][2][]byte {
	partitions := make(map[string]connectjson.Map) // canonical key -> partition
	var order []string
	// Values are looked up in the topic the connector reads.
	values := make(map[string][]SourceOffset) // key bytes -> entries
	for _, o := range s.SourceOffsetsOf(conn.Name) {
		name, m, _, err := connectjson.ParseKey(o.Key)
		if err != nil || name != conn.Name || nested(m) {
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
	var items [][2][]byte
	for _, canon := range order {
		item := [2][]byte{connectjson.RESTMap(partitions[canon]), nil}
		if o, ok := pickValue(values[canon], s.partitionCount(values[canon])); ok {
			if m, err := connectjson.ParseMap(o.Value); err == nil && !nested(m) {
				item[1] = connectjson.RESTMap(m)
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

func (s *Snapshot) partitionCount(copies []SourceOffset) int32 {
	if len(copies) == 0 {
		return 0
	}
	for _, t := range s.Topics {
		if t.Name == copies[0].Topic {
			return int32(len(t.Partitions))
		}
	}
	return 0
}

func nested(m connectjson.Map) bool {
	for _, f := range m {
		if k := f.Value.Kind(); k == connectjson.KindObject || k == connectjson.KindArray {
			return true
		}
	}
	return false
}

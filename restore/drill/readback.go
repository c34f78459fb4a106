package drill

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/offsetkeeper/offsetkeeper/internal/connectjson"
	"github.com/offsetkeeper/offsetkeeper/internal/english"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// maxFailures bounds the failures a check lists one by one; the rest are
// counted in a note.
const maxFailures = 50

// findings collects a check's failures and notes.
type findings struct {
	failures []Failure
	more     map[string]int // failures past maxFailures, by cause
	notes    []string
}

func (f *findings) fail(x Failure) {
	if len(f.failures) < maxFailures {
		f.failures = append(f.failures, x)
		return
	}
	if f.more == nil {
		f.more = map[string]int{}
	}
	f.more[x.Cause]++
}

func (f *findings) note(format string, args ...any) {
	f.notes = append(f.notes, fmt.Sprintf(format, args...))
}

// finish fills c from f: Failed with any failure, else Passed.
func (f *findings) finish(c *Check) {
	c.Failures, c.Notes, c.Result = f.failures, f.notes, Passed
	for _, cause := range slices.Sorted(maps.Keys(f.more)) {
		c.Notes = append(c.Notes, fmt.Sprintf("and %d more %s failures not listed", f.more[cause], cause))
	}
	if len(f.failures) > 0 {
		c.Result = Failed
	}
}

// expect is one key the scratch cluster must hold after the restore: the
// state's source offset i, on partition part.
type expect struct {
	i    int32
	part int32
}

// checkKeys checks each source key of state: a connector's key parses the
// way Connect's JsonConverter reads it, and lives on its murmur2 partition
// (where Connect's producer writes it and a restore puts it). It returns
// the keys the scratch cluster must hold, sorted by topic, key and
// partition, and the keys not to expect (strays and keys off their
// partition), by topic and key.
func checkKeys(tab *snapshot.SourceTable, parts map[string]int32, f *findings) (want []expect, ignore map[string]bool) {
	idx := make([]int32, tab.Len())
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int { return cmpRec(tab, a, b) })
	ignore = map[string]bool{}
	strays, unowned := 0, 0
	for lo := 0; lo < len(idx); {
		hi := lo + 1
		for hi < len(idx) && sameKey(tab, idx[lo], idx[hi]) {
			hi++
		}
		i := idx[lo]
		topic, key, conn := tab.Topic(i), tab.Key(i), tab.Connector(i)
		if conn == "" {
			unowned += hi - lo
			for _, j := range idx[lo:hi] {
				if tab.Value(j) != nil {
					want = append(want, expect{i: j, part: tab.Partition(j)})
				}
			}
			lo = hi
			continue
		}
		sp := jsonCheck(tab, i, f)
		q := snapshot.PartitionFor(key, parts[topic])
		home := slices.IndexFunc(idx[lo:hi], func(j int32) bool { return tab.Partition(j) == q })
		if home < 0 {
			ignore[topic+"\x00"+string(key)] = true
			for _, j := range idx[lo:hi] {
				f.fail(Failure{Cause: CauseWrongPartition, Connector: conn, Topic: topic, Partition: tab.Partition(j), SourcePartition: sp,
					Detail: fmt.Sprintf("the key is on partition %d, but murmur2 puts it on partition %d of %d: the task's next commit goes there, and which copy a worker keeps at its next start depends on the order it reads the partitions in", tab.Partition(j), q, parts[topic])})
			}
			lo = hi
			continue
		}
		if hi-lo > 1 {
			strays += hi - lo - 1
			ignore[topic+"\x00"+string(key)] = true
		}
		if j := idx[lo+home]; tab.Value(j) != nil {
			want = append(want, expect{i: j, part: q})
		}
		lo = hi
	}
	if strays > 0 {
		f.note("%s off its murmur2 partition beside the copy on it (the capture warned of it): a restore writes the copy on the murmur2 partition only", english.Count(strays, "stray copy of a key", "stray copies of keys"))
	}
	if unowned > 0 {
		f.note("%s not [connector, {partition}] (kept raw): restored as they are, to the partition they had", english.Count(unowned, "key is", "keys are"))
	}
	slices.SortFunc(want, func(a, b expect) int {
		if c := cmp.Compare(tab.Topic(a.i), tab.Topic(b.i)); c != 0 {
			return c
		}
		if c := bytes.Compare(tab.Key(a.i), tab.Key(b.i)); c != 0 {
			return c
		}
		return cmp.Compare(a.part, b.part)
	})
	return want, ignore
}

// jsonCheck checks that source offset i of a connector reads as Connect's
// JsonConverter reads it: the key a [name, {partition}] of its connector,
// the value a flat object. It returns the partition as Connect's REST API
// shows it ("" if the key does not parse).
func jsonCheck(tab *snapshot.SourceTable, i int32, f *findings) string {
	conn, topic := tab.Connector(i), tab.Topic(i)
	name, part, _, err := connectjson.ParseKey(tab.Key(i))
	if err != nil || name != conn {
		detail := fmt.Sprintf("key %q does not read as [%q, {partition}]", tab.Key(i), conn)
		if err != nil {
			detail += ": " + err.Error()
		}
		f.fail(Failure{Cause: CauseNotConnectJSON, Connector: conn, Topic: topic, Partition: tab.Partition(i), Detail: detail})
		return ""
	}
	sp := string(connectjson.RESTMap(part))
	if v := tab.Value(i); v != nil {
		m, err := connectjson.ParseMap(v)
		if err == nil {
			err = connectjson.CheckFlat(m)
		}
		if err != nil {
			f.fail(Failure{Cause: CauseNotConnectJSON, Connector: conn, Topic: topic, Partition: tab.Partition(i), SourcePartition: sp,
				Detail: fmt.Sprintf("value %q does not read as a flat JSON object: %v", v, err)})
		}
	}
	return sp
}

func cmpRec(tab *snapshot.SourceTable, a, b int32) int {
	if c := cmp.Compare(tab.Topic(a), tab.Topic(b)); c != 0 {
		return c
	}
	if c := bytes.Compare(tab.Key(a), tab.Key(b)); c != 0 {
		return c
	}
	return cmp.Compare(tab.Partition(a), tab.Partition(b))
}

func sameKey(tab *snapshot.SourceTable, a, b int32) bool {
	return tab.Topic(a) == tab.Topic(b) && bytes.Equal(tab.Key(a), tab.Key(b))
}

// compareSinks reads each group of state back from the scratch cluster
// and compares every offset (offset, leader epoch, metadata); a partition
// committed there that the state does not hold fails too.
func compareSinks(ctx context.Context, adm *kadm.Client, state *snapshot.Snapshot, f *findings) error {
	for _, g := range state.SinkGroups {
		resp, err := adm.FetchOffsets(ctx, g.Group)
		if err == nil {
			err = resp.Error()
		}
		if errors.Is(err, kerr.GroupIDNotFound) {
			resp, err = kadm.OffsetResponses{}, nil // nothing committed: each offset fails below
		}
		if err != nil {
			return fmt.Errorf("read back offsets of group %q from the scratch cluster: %w", g.Group, err)
		}
		held := map[string]bool{}
		for _, o := range g.Offsets {
			held[fmt.Sprint(o.Topic, "\x00", o.Partition)] = true
			r, ok := resp.Lookup(o.Topic, o.Partition)
			switch {
			case !ok || r.At < 0:
				f.fail(Failure{Cause: CauseSinkDiffers, Connector: g.Connector, Group: g.Group, Topic: o.Topic, Partition: o.Partition,
					Detail: fmt.Sprintf("no offset committed in the scratch cluster; the state holds %d", o.Offset)})
			case r.At != o.Offset || r.Metadata != o.Metadata || r.LeaderEpoch != o.LeaderEpoch:
				f.fail(Failure{Cause: CauseSinkDiffers, Connector: g.Connector, Group: g.Group, Topic: o.Topic, Partition: o.Partition,
					Detail: fmt.Sprintf("reads back offset %d (epoch %d, metadata %q); the state holds %d (epoch %d, metadata %q)", r.At, r.LeaderEpoch, r.Metadata, o.Offset, o.LeaderEpoch, o.Metadata)})
			}
		}
		resp.Each(func(r kadm.OffsetResponse) {
			if r.At >= 0 && !held[fmt.Sprint(r.Topic, "\x00", r.Partition)] {
				f.fail(Failure{Cause: CauseSinkDiffers, Connector: g.Connector, Group: g.Group, Topic: r.Topic, Partition: r.Partition,
					Detail: fmt.Sprintf("offset %d committed in the scratch cluster, none in the state", r.At)})
			}
		})
	}
	return nil
}

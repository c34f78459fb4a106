package capture

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// ReadGroup classifies and describes one consumer group (DescribeTyped)
// and fetches its committed offsets, in Normalize's order. A group that is
// Gone (or GroupIDNotFound on the fetch) is found == false; one that cannot
// be described is an error matching ErrGroupUnread, never "not found".
func ReadGroup(ctx context.Context, adm *kadm.Client, group string) (_ snapshot.SinkGroup, found bool, _ error) {
	described, err := DescribeTyped(ctx, adm, []string{group}, nil)
	if err != nil {
		return snapshot.SinkGroup{}, false, err
	}
	d := described[group]
	switch {
	case d.Err != nil:
		return snapshot.SinkGroup{}, false, d.Err
	case d.Gone:
		return snapshot.SinkGroup{}, false, nil
	}
	fetched, err := adm.FetchOffsets(ctx, group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return snapshot.SinkGroup{}, false, nil
	}
	if err != nil {
		return snapshot.SinkGroup{}, false, fmt.Errorf("fetch committed offsets of consumer group %q: %w", group, err)
	}
	g, err := newSinkGroup(group, "", d, fetched)
	return g, err == nil, err
}

// newSinkGroup is the SinkGroup of a described group and its fetched
// offsets; partitions with no commit are left out.
func newSinkGroup(group, connector string, d GroupDescription, fetched kadm.OffsetResponses) (snapshot.SinkGroup, error) {
	// Offsets holds exactly the committed partitions: appended one at a
	// time, 100,000 sink partitions in groups of 50 held a quarter more.
	n := 0
	fetched.Each(func(o kadm.OffsetResponse) {
		if o.Err == nil && o.At >= 0 {
			n++
		}
	})
	sg := snapshot.SinkGroup{Group: group, Connector: connector, Type: d.Type, State: d.State, Members: d.Members, Offsets: make([]snapshot.SinkOffset, 0, n)}
	var perr error
	fetched.Each(func(o kadm.OffsetResponse) {
		if o.Err != nil {
			if perr == nil {
				perr = fmt.Errorf("fetch committed offset of consumer group %q for %s/%d: %w", group, o.Topic, o.Partition, o.Err)
			}
			return
		}
		if o.At < 0 {
			return // no commit for this partition
		}
		sg.Offsets = append(sg.Offsets, snapshot.SinkOffset{Topic: o.Topic, Partition: o.Partition, Offset: o.At, LeaderEpoch: o.LeaderEpoch, Metadata: o.Metadata})
	})
	if perr != nil {
		return snapshot.SinkGroup{}, perr
	}
	// In Normalize's order, cheaply: a group's partitions nearly all share
	// one topic.
	slices.SortFunc(sg.Offsets, cmpSinkOffset)
	return sg, nil
}

// committed is one group's answer to a batched offset fetch.
type committed struct {
	offsets []snapshot.SinkOffset
	err     error // the group's error, as kadm's FetchManyOffsets reports it
	perr    error // a partition's error
}

// fetchCommitted fetches the committed offsets of groups in one
// OffsetFetch request, which the client shards per coordinator, and decodes
// each group's answer straight into SinkOffsets in Normalize's order: no
// kadm maps of maps (for a large number of sink partitions they were most
// of a read's CPU and most of the garbage of an idle journal). A group whose offsets are all
// as in prev gets prev's slice back, LastConsumed included: an idle group
// allocates nothing that lasts.
func fetchCommitted(ctx context.Context, cl *kgo.Client, groups []string, prev map[string]snapshot.SinkGroup) map[string]committed {
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Groups = make([]kmsg.OffsetFetchRequestGroup, len(groups))
	for i, g := range groups {
		req.Groups[i] = kmsg.NewOffsetFetchRequestGroup()
		req.Groups[i].Group = g
	}
	out := make(map[string]committed, len(groups))
	names := map[string]string{} // topic names, one string each
	for _, shard := range cl.RequestSharded(ctx, req) {
		sreq := shard.Req.(*kmsg.OffsetFetchRequest)
		err := shard.Err
		var resp *kmsg.OffsetFetchResponse
		if err == nil {
			resp = shard.Resp.(*kmsg.OffsetFetchResponse)
			err = authErr(resp.ErrorCode)
		}
		if err != nil {
			for _, g := range sreq.Groups {
				out[g.Group] = committed{err: err}
			}
			continue
		}
		for i := range resp.Groups {
			g := &resp.Groups[i]
			if err := authErr(g.ErrorCode); err != nil {
				out[g.Group] = committed{err: err}
				continue
			}
			offs, perr := decodeCommitted(g.Group, g.Topics, prev[g.Group].Offsets, names)
			out[g.Group] = committed{offsets: offs, err: kerr.ErrorForCode(g.ErrorCode), perr: perr}
		}
	}
	return out
}

// authErr is the error of an authorization failure code, as kadm reports
// one (an *kadm.AuthError), or nil for any other code.
func authErr(code int16) error {
	switch err := kerr.ErrorForCode(code); err {
	case kerr.ClusterAuthorizationFailed, kerr.TopicAuthorizationFailed, kerr.GroupAuthorizationFailed,
		kerr.TransactionalIDAuthorizationFailed, kerr.DelegationTokenAuthorizationFailed:
		return &kadm.AuthError{Err: err}
	}
	return nil
}

// decodeCommitted returns a group's committed offsets (partitions with no
// commit left out) in Normalize's order: prev itself when they are all the
// same as prev's. It sorts the response's topics and partitions in place.
func decodeCommitted(group string, ts []kmsg.OffsetFetchResponseGroupTopic, prev []snapshot.SinkOffset, names map[string]string) ([]snapshot.SinkOffset, error) {
	if !slices.IsSortedFunc(ts, cmpFetchedTopic) {
		slices.SortFunc(ts, cmpFetchedTopic)
	}
	n, same := 0, prev != nil
	for ti := range ts {
		t := &ts[ti]
		sortFetchedPartitions(t.Partitions)
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				return nil, fmt.Errorf("fetch committed offset of consumer group %q for %s/%d: %w", group, t.Topic, p.Partition, kerr.ErrorForCode(p.ErrorCode))
			}
			if p.Offset < 0 {
				continue // no commit for this partition
			}
			if same {
				same = n < len(prev) && prev[n].Topic == t.Topic && prev[n].Partition == p.Partition && prev[n].Offset == p.Offset &&
					prev[n].LeaderEpoch == p.LeaderEpoch && prev[n].Metadata == metadataOf(p.Metadata)
			}
			n++
		}
	}
	if same && n == len(prev) {
		return prev, nil
	}
	// Offsets holds exactly the committed partitions: appended one at a
	// time, 100,000 sink partitions in groups of 50 held a quarter more.
	out := make([]snapshot.SinkOffset, 0, n)
	for ti := range ts {
		t := &ts[ti]
		topic, ok := names[t.Topic]
		if !ok {
			topic = t.Topic
			names[topic] = topic
		}
		for _, p := range t.Partitions {
			if p.Offset >= 0 {
				out = append(out, snapshot.SinkOffset{Topic: topic, Partition: p.Partition, Offset: p.Offset, LeaderEpoch: p.LeaderEpoch, Metadata: metadataOf(p.Metadata)})
			}
		}
	}
	// A topic answered twice (by name and by ID) would be out of order.
	if !slices.IsSortedFunc(out, cmpSinkOffset) {
		slices.SortFunc(out, cmpSinkOffset)
	}
	return out, nil
}

// sortFetchedPartitions sorts a topic's answered partitions by number. A
// coordinator answers them in any order (kfake in its map's), and a group
// commits for most partitions of its topics: when the numbers are the
// consecutive run from the least, each is swapped to its place (a sort of
// every partition was a large part of an idle read).
func sortFetchedPartitions(ps []kmsg.OffsetFetchResponseGroupTopicPartition) {
	if slices.IsSortedFunc(ps, cmpFetchedPartition) {
		return
	}
	lo, hi := ps[0].Partition, ps[0].Partition
	for _, p := range ps {
		lo, hi = min(lo, p.Partition), max(hi, p.Partition)
	}
	if int(hi-lo) == len(ps)-1 {
		for i := range ps {
			for {
				j := int(ps[i].Partition - lo)
				if j == i {
					break
				}
				if ps[j].Partition == ps[i].Partition {
					slices.SortFunc(ps, cmpFetchedPartition) // a number answered twice
					return
				}
				ps[i], ps[j] = ps[j], ps[i]
			}
		}
		return
	}
	slices.SortFunc(ps, cmpFetchedPartition)
}

func metadataOf(m *string) string {
	if m == nil {
		return ""
	}
	return *m
}

func cmpFetchedTopic(a, b kmsg.OffsetFetchResponseGroupTopic) int {
	return strings.Compare(a.Topic, b.Topic)
}

func cmpFetchedPartition(a, b kmsg.OffsetFetchResponseGroupTopicPartition) int {
	return cmp.Compare(a.Partition, b.Partition)
}

func cmpSinkOffset(a, b snapshot.SinkOffset) int {
	if a.Topic != b.Topic {
		return strings.Compare(a.Topic, b.Topic)
	}
	return cmp.Compare(a.Partition, b.Partition)
}

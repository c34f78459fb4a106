package capture

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// ListedTypes lists every consumer group of the cluster with its type
// (ListGroups), as ReadGroup and DescribeTyped list them.
func ListedTypes(ctx context.Context, adm *kadm.Client) (kadm.ListedGroups, error) {
	listed, err := listGroups(ctx, adm)
	if err != nil {
		return nil, fmt.Errorf("list consumer groups: %w", err)
	}
	return listed, nil
}

// ReadCommitted fetches the committed offsets of groups in one OffsetFetch
// request (the client shards it per coordinator), each group's in
// Normalize's order as ReadGroup's Offsets; a group that does not exist has
// none. A group listed (see ListedTypes) with a type no sink connector uses
// fails the read, as it fails ReadGroup, and so does any group's or
// partition's error.
func ReadCommitted(ctx context.Context, cl *kgo.Client, groups []string, listed kadm.ListedGroups) (map[string][]snapshot.SinkOffset, error) {
	for _, g := range groups {
		if l, ok := listed[g]; ok && !isConnectGroup(l) {
			return nil, fmt.Errorf("%w: group %q is a %s group, not a consumer group a sink connector uses", ErrGroupUnread, g, l.GroupType)
		}
	}
	var fetched map[string]committed
	err := retryDropped(ctx, func() error {
		fetched = fetchCommitted(ctx, cl, groups, nil)
		for _, f := range fetched {
			if f.err != nil && !errors.Is(f.err, kerr.GroupIDNotFound) {
				return f.err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("fetch committed offsets of %d consumer groups: %w", len(groups), err)
	}
	out := make(map[string][]snapshot.SinkOffset, len(groups))
	for _, g := range groups {
		f, ok := fetched[g]
		switch {
		case !ok:
			return nil, fmt.Errorf("fetch committed offsets of consumer group %q: no answer for it", g)
		case f.perr != nil:
			return nil, f.perr
		}
		out[g] = f.offsets
	}
	return out, nil
}

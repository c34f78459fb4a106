package capture

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Group types as ListGroups v5 (Kafka 3.8+) names them. A classic group
// joins with JoinGroup/SyncGroup and is described by DescribeGroups; a
// consumer group (KIP-848, GA in Kafka 4.0: a sink task whose consumer sets
// group.protocol=consumer) joins with ConsumerGroupHeartbeat and is
// described by ConsumerGroupDescribe only. Share and streams groups are
// never a sink connector's.
const (
	GroupTypeClassic  = "classic"
	GroupTypeConsumer = "consumer"
)

// ErrGroupUnread matches a GroupDescription.Err: the group could not be
// classified or described, so neither its members nor its offsets are
// known. A capture names such a group (Snapshot.Unread), never drops it.
var ErrGroupUnread = errors.New("consumer group not read")

// GroupDescription is one group as its coordinator describes it, whatever
// its type.
type GroupDescription struct {
	Group string
	// Type is GroupTypeClassic or GroupTypeConsumer for a group that was
	// described; for an unread one, what ListGroups said ("" if nothing).
	Type    string
	State   string
	Members int
	// Clients names each member as "client C on host H" (Kafka's
	// client.id and the address it connects from), for saying where a
	// member runs; sorted.
	Clients []string
	// Gone: the coordinator knows no group of this name of any type (never
	// created, deleted, or expired once empty). A capture leaves it out, a
	// restore counts it as empty.
	Gone bool
	// Err, matching ErrGroupUnread, says why the group could not be read.
	Err error
}

// DescribeTyped is the one classification of consumer groups: each group is
// described the way the broker means it. The type comes from listed (a
// ListGroups answer; nil lists the groups now): a consumer group is
// described with ConsumerGroupDescribe, a classic one (or one a broker
// before 3.8 lists without a type) with DescribeGroups. A group not found as
// the type it was listed with is asked as the other (it may have been
// converted since); not found as either, it is Gone. DescribeGroups v6+
// answers a consumer group GROUP_ID_NOT_FOUND and older versions Dead,
// which is why a classic describe alone would drop it in silence. A share
// or streams group is never a sink's: it is unread, naming its type.
//
// The error is for the request as a whole (the list failing); a group that
// cannot be described is in the map with Err set. Every group asked for is
// in the map.
func DescribeTyped(ctx context.Context, adm *kadm.Client, groups []string, listed kadm.ListedGroups) (map[string]GroupDescription, error) {
	out := make(map[string]GroupDescription, len(groups))
	if len(groups) == 0 {
		return out, nil
	}
	if listed == nil {
		var err error
		listed, err = listGroups(ctx, adm)
		if err != nil {
			return nil, fmt.Errorf("list consumer groups: %w", err)
		}
	}
	var classic, consumer []string
	for _, g := range groups {
		switch t := listed[g].GroupType; t {
		case GroupTypeConsumer:
			consumer = append(consumer, g)
		case GroupTypeClassic, "":
			classic = append(classic, g)
		default:
			out[g] = GroupDescription{Group: g, Type: t, Err: fmt.Errorf("%w: group %q is a %s group, not a consumer group a sink connector uses", ErrGroupUnread, g, t)}
		}
	}
	var toConsumer, toClassic []string
	describeClassic(ctx, adm, classic, out, func(g string) {
		if listed[g].GroupType != "" {
			toConsumer = append(toConsumer, g) // typed: a broker that knows consumer groups
		} else {
			out[g] = GroupDescription{Group: g, Gone: true}
		}
	})
	describeConsumer(ctx, adm, consumer, out, func(g string) { toClassic = append(toClassic, g) })
	gone := func(g string) { out[g] = GroupDescription{Group: g, Gone: true} }
	describeConsumer(ctx, adm, toConsumer, out, gone)
	describeClassic(ctx, adm, toClassic, out, gone)
	return out, nil
}

// listGroups lists every group with its type and state, retried over a
// dropped connection.
func listGroups(ctx context.Context, adm *kadm.Client) (kadm.ListedGroups, error) {
	var listed kadm.ListedGroups
	err := retryDropped(ctx, func() (err error) {
		listed, err = adm.ListGroups(ctx)
		return err
	})
	return listed, err
}

// isConnectGroup reports whether a listed group can be a sink connector's:
// classic, consumer, or untyped (a broker before 3.8). Share and streams
// groups are skipped by name with a debug line.
func isConnectGroup(l kadm.ListedGroup) bool {
	switch l.GroupType {
	case "", GroupTypeClassic, GroupTypeConsumer:
		return true
	}
	slog.Debug("group skipped: not a consumer group", "group", l.Group, "group_type", l.GroupType)
	return false
}

// describeClassic describes groups with DescribeGroups into out; notFound
// gets each one the coordinator does not know as a classic group.
func describeClassic(ctx context.Context, adm *kadm.Client, groups []string, out map[string]GroupDescription, notFound func(string)) {
	if len(groups) == 0 {
		return
	}
	var described kadm.DescribedGroups
	err := retryDropped(ctx, func() (err error) {
		described, err = adm.DescribeGroups(ctx, groups...)
		return err
	})
	for _, g := range groups {
		d, ok := described[g]
		switch {
		case !ok:
			out[g] = unread(g, "", "describe", cmpErr(err, "no answer from its coordinator"))
		case errors.Is(d.Err, kerr.GroupIDNotFound), d.Err == nil && (d.State == "Dead" || d.State == ""):
			notFound(g)
		case d.Err != nil:
			out[g] = unread(g, GroupTypeClassic, "describe", d.Err)
		default:
			gd := GroupDescription{Group: g, Type: GroupTypeClassic, State: d.State, Members: len(d.Members)}
			for _, m := range d.Members {
				gd.Clients = append(gd.Clients, memberClient(m.ClientID, m.ClientHost))
			}
			slices.Sort(gd.Clients)
			out[g] = gd
		}
	}
}

// describeConsumer describes groups with ConsumerGroupDescribe (KIP-848)
// into out; notFound gets each one the coordinator does not know as a
// consumer group.
func describeConsumer(ctx context.Context, adm *kadm.Client, groups []string, out map[string]GroupDescription, notFound func(string)) {
	if len(groups) == 0 {
		return
	}
	var described kadm.DescribedConsumerGroups
	err := retryDropped(ctx, func() (err error) {
		described, err = adm.DescribeConsumerGroups(ctx, groups...)
		return err
	})
	for _, g := range groups {
		d, ok := described[g]
		switch {
		case !ok:
			out[g] = unread(g, GroupTypeConsumer, "describe (ConsumerGroupDescribe)", cmpErr(err, "no answer from its coordinator"))
		case errors.Is(d.Err, kerr.GroupIDNotFound), d.Err == nil && (d.State == "Dead" || d.State == ""):
			notFound(g)
		case d.Err != nil:
			out[g] = unread(g, GroupTypeConsumer, "describe (ConsumerGroupDescribe)", d.Err)
		default:
			gd := GroupDescription{Group: g, Type: GroupTypeConsumer, State: d.State, Members: len(d.Members)}
			for _, m := range d.Members {
				gd.Clients = append(gd.Clients, memberClient(m.ClientID, m.ClientHost))
			}
			slices.Sort(gd.Clients)
			out[g] = gd
		}
	}
}

// memberClient is a member's client, as GroupDescription.Clients has it.
func memberClient(clientID, host string) string {
	return fmt.Sprintf("client %q on host %s", clientID, strings.TrimPrefix(host, "/"))
}

// unread is the description of a group that could not be described.
func unread(group, typ, what string, err error) GroupDescription {
	return GroupDescription{Group: group, Type: typ, Err: fmt.Errorf("%w: %s consumer group %q: %w", ErrGroupUnread, what, group, err)}
}

// cmpErr is err, or an error saying msg when err is nil.
func cmpErr(err error, msg string) error {
	if err != nil {
		return err
	}
	return errors.New(msg)
}

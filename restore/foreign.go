package restore

// This file is the refusal for a sink group that has members while its
// connector runs no task here: stopping the connector, which the usual
// refusal advises, changes nothing for such a member.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// membersHint ends the error of a group write the broker refused for its
// members (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, GROUP_SUBSCRIBED_TO_TOPIC):
// a member joined after the restore's check. The members are named as
// described now; it advised stopping the connector alone, which does
// nothing when the connector is STOPPED and the member runs elsewhere.
func membersHint(ctx context.Context, adm *kadm.Client, group string) string {
	who := ""
	if d, err := capture.DescribeTyped(ctx, adm, []string{group}, nil); err == nil && len(d[group].Clients) > 0 {
		who = " (" + strings.Join(d[group].Clients, ", ") + ")"
	}
	return "; the group has live members" + who + ", which joined after the restore's check: the broker takes offsets from outside a group " +
		"only while it has none; if the connector was resumed, stop it; if it is STOPPED, the member is a consumer elsewhere (a worker cut " +
		"off from its Connect group, another Connect cluster, a client with group.id " + group + "): stop it there; then run the same restore again"
}

// staysNote ends the error of a wait for connectors to stop when none
// was stopped by this restore (todo is empty: all were STOPPED before it)
// and a group kept its members: stopping is not what empties it.
func staysNote(todo []ConnectorPlan, err error) string {
	if len(todo) > 0 || !errors.Is(err, ErrNotStopped) || !strings.Contains(err.Error(), "waiting for Empty") {
		return ""
	}
	return "; the connectors were STOPPED before this restore, so a member that stays in their group is a consumer elsewhere " +
		"(a worker cut off from its Connect group, another Connect cluster, a client with that group.id): stop it there, then run the same restore again"
}

// foreignMembers is the refusal of connector cp, STOPPED with no tasks or
// without a config here, whose sink group sp still has members. The
// broker takes the restore's commit only into a group without members (a
// consumer-protocol group answers UNKNOWN_MEMBER_ID, apache/kafka
// modern/consumer/ConsumerGroup.java validateOffsetCommit), so the
// restore refuses until the group is Empty; the members are named (client
// and host, described now through cl) so that the operator can find the
// consumer. A description that fails leaves them unnamed.
func foreignMembers(ctx context.Context, cl *kgo.Client, cp ConnectorPlan, sp *SinkPlan) Refusal {
	state := "STOPPED with no tasks"
	if !cp.Live.HasConfig {
		state = "not configured here (no config in the config topic)"
	}
	who := ""
	if cl != nil {
		if d, err := capture.DescribeTyped(ctx, kadm.NewClient(cl), []string{sp.Group}, nil); err == nil && len(d[sp.Group].Clients) > 0 {
			who = " (members: " + strings.Join(d[sp.Group].Clients, ", ") + ")"
		}
	}
	reason := fmt.Sprintf("sink group %q has %s (state %s) though the connector is %s, so no running task of this Connect cluster should be in it%s: "+
		"a task still shutting down leaves within its session timeout (45 s by default); a member that stays is a consumer elsewhere "+
		"(a worker cut off from its Connect group that still runs the task, another Connect cluster with a connector of this name, "+
		"or a client with group.id %s): stop it there, wait until the group is Empty, then run the same restore again",
		sp.Group, plural(sp.Members, "live member", "live members"), sp.State, state, who, sp.Group)
	return Refusal{Connector: cp.Name, Check: CheckGroupMembers, Reason: reason, foreign: true}
}

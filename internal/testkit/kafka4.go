package testkit

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka4Groups makes c answer DescribeGroups for a group that is not
// classic (a KIP-848 consumer group, a share group) exactly as Kafka 4.x
// does, for the rest of the test. kfake describes every group as if it were
// classic (a consumer group then shows its state and no members), which
// hides the way a 4.x broker answers: apache/kafka
// GroupMetadataManager.describeGroups catches the GroupIdNotFoundException
// that classicGroup(groupId, committedOffset) throws for a group of another
// type ("Group %s is not a classic group.") and answers, when
// context.requestVersion() >= 6, ErrorCode GROUP_ID_NOT_FOUND with that
// message and state Dead; below v6, state Dead alone. franz-go sends v6.
//
// The types come from a typed ListGroups (v5 GroupType) sent by the
// helper's own client while the request waits (kfake.SleepControl); the
// classic groups of a mixed request are answered by kfake itself, through
// that client. Call it before the clients under test send DescribeGroups.
func Kafka4Groups(t testing.TB, c *kfake.Cluster) {
	t.Helper()
	side, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(side.Close)
	adm := kadm.NewClient(side)
	c.ControlKey(int16(kmsg.DescribeGroups), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kreq.(*kmsg.DescribeGroupsRequest)
		node := c.CurrentNode()
		var listed kadm.ListedGroups
		var listErr error
		c.SleepControl(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			listed, listErr = adm.ListGroups(ctx)
		})
		if listErr != nil {
			return nil, nil, false // kfake answers; the test sees its usual answer
		}
		var classic []string
		other := false
		for _, g := range req.Groups {
			if typ := listed[g].GroupType; typ != "" && typ != "classic" {
				other = true
			} else {
				classic = append(classic, g)
			}
		}
		if !other {
			return nil, nil, false
		}
		answers := map[string]kmsg.DescribeGroupsResponseGroup{}
		if len(classic) > 0 {
			var sideErr error
			c.SleepControl(func() { answers, sideErr = describeClassic(side, req, classic) })
			if sideErr != nil {
				return nil, sideErr, true
			}
		}
		resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
		resp.Version = req.Version
		for _, g := range req.Groups {
			if a, ok := answers[g]; ok {
				resp.Groups = append(resp.Groups, a)
				continue
			}
			rg := kmsg.NewDescribeGroupsResponseGroup()
			rg.Group = g
			switch {
			case c.CoordinatorFor(g) != node:
				rg.ErrorCode = kerr.NotCoordinator.Code
			default:
				rg.State = "Dead"
				if req.Version >= 6 {
					rg.ErrorCode = kerr.GroupIDNotFound.Code
					msg := fmt.Sprintf("Group %s is not a classic group.", g)
					rg.ErrorMessage = &msg
				}
			}
			resp.Groups = append(resp.Groups, rg)
		}
		return resp, nil, true
	})
}

// describeClassic is kfake's own answer to a DescribeGroups of the classic
// groups of req, asked through side, by group.
func describeClassic(side *kgo.Client, req *kmsg.DescribeGroupsRequest, groups []string) (map[string]kmsg.DescribeGroupsResponseGroup, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sub := kmsg.NewPtrDescribeGroupsRequest()
	sub.Groups = groups
	sub.IncludeAuthorizedOperations = req.IncludeAuthorizedOperations
	out := map[string]kmsg.DescribeGroupsResponseGroup{}
	for _, shard := range side.RequestSharded(ctx, sub) {
		if shard.Err != nil {
			return nil, fmt.Errorf("describe classic groups through the test kit's client: %w", shard.Err)
		}
		for _, g := range shard.Resp.(*kmsg.DescribeGroupsResponse).Groups {
			out[g.Group] = g
		}
	}
	return out, nil
}

// ConsumerMember is a member of a KIP-848 consumer group (group.protocol=
// consumer: it joins with ConsumerGroupHeartbeat, as a sink task on Kafka
// 4.x with consumer.override.group.protocol=consumer does).
type ConsumerMember struct {
	t     testing.TB
	cl    *kgo.Client
	adm   *kadm.Client
	group string
	topic string
}

// CatchUp consumes every record written to the member's topic so far
// (from the group's committed offsets, or the start) and commits what it
// consumed.
func (m *ConsumerMember) CatchUp() {
	m.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ends, err := m.adm.ListEndOffsets(ctx, m.topic)
	if err != nil || ends.Error() != nil {
		m.t.Fatalf("list end offsets of %s: %v %v", m.topic, err, ends.Error())
	}
	pos := map[int32]int64{}
	if fetched, err := m.adm.FetchOffsets(ctx, m.group); err == nil {
		fetched.Each(func(o kadm.OffsetResponse) {
			if o.Topic == m.topic && o.At > 0 {
				pos[o.Partition] = o.At
			}
		})
	}
	behind := func() bool {
		n := false
		ends.Each(func(o kadm.ListedOffset) { n = n || pos[o.Partition] < o.Offset })
		return n
	}
	for behind() {
		fs := m.cl.PollFetches(ctx)
		if ctx.Err() != nil {
			m.t.Fatalf("consumer group %s: at %v of %s, want its ends", m.group, pos, m.topic)
		}
		fs.EachRecord(func(r *kgo.Record) { pos[r.Partition] = max(pos[r.Partition], r.Offset+1) })
	}
	if err := m.cl.CommitUncommittedOffsets(ctx); err != nil {
		m.t.Fatalf("commit of consumer group %s: %v", m.group, err)
	}
}

// JoinConsumerGroup starts a member of the consumer-protocol group that
// reads topic from its start until it has consumed every record written
// so far (CatchUp), and keeps its membership until Leave or the end of
// the test. The group is then Stable with one member. topic's records
// must all be committed (not in an open transaction).
func JoinConsumerGroup(t testing.TB, c *kfake.Cluster, group, topic string) *ConsumerMember {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ServerSideBalancer(), kgo.Balancers(kgo.RangeBalancer()), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	m := &ConsumerMember{t: t, cl: cl, adm: kadm.NewClient(cl), group: group, topic: topic}
	t.Cleanup(cl.Close)
	m.CatchUp()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m.waitFor(ctx, func(d kadm.DescribedConsumerGroup) bool { return d.State == "Stable" && len(d.Members) == 1 })
	return m
}

// Leave closes the member, which leaves the group: it is Empty once this
// returns.
func (m *ConsumerMember) Leave() {
	m.t.Helper()
	side, err := kgo.NewClient(kgo.SeedBrokers(m.cl.OptValue(kgo.SeedBrokers).([]string)...))
	if err != nil {
		m.t.Fatal(err)
	}
	defer side.Close()
	m.cl.Close()
	m.adm = kadm.NewClient(side)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m.waitFor(ctx, func(d kadm.DescribedConsumerGroup) bool { return d.State == "Empty" && len(d.Members) == 0 })
}

func (m *ConsumerMember) waitFor(ctx context.Context, ok func(kadm.DescribedConsumerGroup) bool) {
	m.t.Helper()
	for {
		d, err := m.adm.DescribeConsumerGroups(ctx, m.group)
		if err == nil && d[m.group].Err == nil && ok(d[m.group]) {
			return
		}
		select {
		case <-ctx.Done():
			m.t.Fatalf("consumer group %s: %+v %v", m.group, d[m.group], err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

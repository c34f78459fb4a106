package kread

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Isolation levels of a Fetch.
const (
	ReadUncommitted int8 = 0 // what a consumer reads by default (a sink's)
	ReadCommitted   int8 = 1 // what a Connect worker reads its topics with
)

// FetchRequest is one Fetch to one broker, as a client outside any fetch
// session: the one way this module builds a Fetch, for the compacted-topic
// reads and for the sink positions' last records.
type FetchRequest struct {
	req          *kmsg.FetchRequest
	topics       map[string]int
	byID         map[[16]byte]string
	partMaxBytes int32
}

// NewFetch starts a Fetch at isolation, whose response holds at most
// maxBytes, and each partition's part of it partMaxBytes; the broker waits
// up to maxWait for a first byte.
func NewFetch(isolation int8, maxWait time.Duration, maxBytes, partMaxBytes int32) *FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.MaxWaitMillis = int32(maxWait / time.Millisecond)
	req.MinBytes = 1
	req.MaxBytes = maxBytes
	req.IsolationLevel = isolation
	req.SessionEpoch = -1 // no fetch session
	return &FetchRequest{req: req, topics: map[string]int{}, byID: map[[16]byte]string{}, partMaxBytes: partMaxBytes}
}

// Add asks for partition part of topic from offset. id is the topic's ID,
// zero when unknown (a broker of a newer Fetch version finds the topic by
// it).
func (f *FetchRequest) Add(topic string, id [16]byte, part int32, offset int64) {
	i, ok := f.topics[topic]
	if !ok {
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = topic, id
		f.req.Topics = append(f.req.Topics, rt)
		i = len(f.req.Topics) - 1
		f.topics[topic] = i
		if id != ([16]byte{}) {
			f.byID[id] = topic
		}
	}
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition = part
	rp.FetchOffset = offset
	rp.PartitionMaxBytes = f.partMaxBytes
	rp.CurrentLeaderEpoch = -1
	rp.LogStartOffset = -1
	f.req.Topics[i].Partitions = append(f.req.Topics[i].Partitions, rp)
}

// Send sends the Fetch to broker leader.
func (f *FetchRequest) Send(ctx context.Context, cl *kgo.Client, leader int32) (*kmsg.FetchResponse, error) {
	resp, err := f.req.RequestWith(ctx, cl.Broker(int(leader)))
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// TopicOf returns the name of a topic of a response to f: a broker
// answering a Fetch by topic ID names no topic.
func (f *FetchRequest) TopicOf(rt *kmsg.FetchResponseTopic) string {
	if rt.Topic != "" {
		return rt.Topic
	}
	return f.byID[rt.TopicID]
}

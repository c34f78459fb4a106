package connectdemo

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// MSKConnector is one Amazon MSK Connect connector: its own worker
// cluster and topic trio, __msk_connect_{offsets,configs,status}_<name>_<id>.
type MSKConnector struct {
	Name, ID string
	Sink     bool
}

// Topic is the connector's topic of kind: offsets, configs or status.
func (m MSKConnector) Topic(kind string) string {
	return "__msk_connect_" + kind + "_" + m.Name + "_" + m.ID
}

// MSKConnectors are the connectors SeedMSK makes: two sources and a sink
// of topic clicks.
var MSKConnectors = []MSKConnector{
	{Name: "orders-jdbc", ID: "0f1e2d3c-4b5a-6978-8695-a4b3c2d1e0f9-3"},
	{Name: "clicks-file", ID: "11112222-3333-4444-5555-666677778888-1"},
	{Name: "s3-sink", ID: "9a8b7c6d-5e4f-3a2b-1c0d-ffeeddccbbaa-2", Sink: true},
}

// MSKKey is a Connect offsets key of connector, partition a JSON object.
func MSKKey(connector, partition string) []byte {
	return []byte(`["` + connector + `",` + partition + `]`)
}

// MSKStatus are the status records a worker writes of m's connector and
// its task in state (RUNNING, or UNASSIGNED once its workers are gone).
func MSKStatus(m MSKConnector, state string) []*kgo.Record {
	st := m.Topic("status")
	v := []byte(`{"state":"` + state + `","trace":null,"worker_id":"10.0.1.17:8083","generation":2}`)
	return []*kgo.Record{
		{Topic: st, Key: []byte("status-connector-" + m.Name), Value: v},
		{Topic: st, Key: []byte("status-task-" + m.Name + "-0"), Value: v},
	}
}

// SeedMSK makes the cluster of cl MSK Connect-shaped: each of
// MSKConnectors' trios (offsets 5 partitions, configs 1, status 5,
// compacted, with replication factor rf), its config, task and commit
// records and RUNNING statuses as a worker writes them, the sources'
// offsets in their own offsets topics only (orders-jdbc with history and a
// tombstoned table), and the sink's commits in group connect-s3-sink.
// cl's partitioner must be Kafka's (kgo's default is).
func SeedMSK(ctx context.Context, cl *kgo.Client, rf int16) error {
	adm := kadm.NewClient(cl)
	if err := createTopic(ctx, adm, TopicSpec{Name: "clicks", Partitions: 3}, rf); err != nil {
		return err
	}
	var recs []*kgo.Record
	for _, m := range MSKConnectors {
		for _, ts := range []TopicSpec{{Name: m.Topic("offsets"), Partitions: 5, Compact: true}, {Name: m.Topic("configs"), Partitions: 1, Compact: true}, {Name: m.Topic("status"), Partitions: 5, Compact: true}} {
			if err := createTopic(ctx, adm, ts, rf); err != nil {
				return err
			}
		}
		props := `{"properties":{"connector.class":"io.confluent.connect.jdbc.JdbcSourceConnector","name":"` + m.Name + `","tasks.max":"1"}}`
		if m.Sink {
			props = `{"properties":{"connector.class":"io.confluent.connect.s3.S3SinkConnector","name":"` + m.Name + `","topics":"clicks","tasks.max":"1"}}`
		}
		cfg := m.Topic("configs")
		recs = append(recs,
			&kgo.Record{Topic: cfg, Key: []byte("connector-" + m.Name), Value: []byte(props)},
			&kgo.Record{Topic: cfg, Key: []byte("task-" + m.Name + "-0"), Value: []byte(props)},
			&kgo.Record{Topic: cfg, Key: []byte("commit-" + m.Name), Value: []byte(`{"tasks":1}`)},
		)
		recs = append(recs, MSKStatus(m, "RUNNING")...)
	}
	jdbc, file := MSKConnectors[0].Topic("offsets"), MSKConnectors[1].Topic("offsets")
	recs = append(recs,
		&kgo.Record{Topic: jdbc, Key: MSKKey("orders-jdbc", `{"protocol":"1","table":"shop.orders"}`), Value: []byte(`{"incrementing":10}`)},
		&kgo.Record{Topic: jdbc, Key: MSKKey("orders-jdbc", `{"protocol":"1","table":"shop.orders"}`), Value: []byte(`{"incrementing":4711}`)},
		&kgo.Record{Topic: jdbc, Key: MSKKey("orders-jdbc", `{"protocol":"1","table":"shop.customers"}`), Value: []byte(`{"incrementing":93}`)},
		&kgo.Record{Topic: jdbc, Key: MSKKey("orders-jdbc", `{"protocol":"1","table":"shop.gone"}`), Value: []byte(`{"incrementing":1}`)},
		&kgo.Record{Topic: jdbc, Key: MSKKey("orders-jdbc", `{"protocol":"1","table":"shop.gone"}`)},
		&kgo.Record{Topic: file, Key: MSKKey("clicks-file", `{"filename":"/data/clicks.log"}`), Value: []byte(`{"position":81920}`)},
	)
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("write the MSK Connect topics: %w", err)
	}
	var os kadm.Offsets
	os.Add(kadm.Offset{Topic: "clicks", Partition: 0, At: 120, LeaderEpoch: -1})
	os.Add(kadm.Offset{Topic: "clicks", Partition: 2, At: 7, LeaderEpoch: -1})
	if err := adm.CommitAllOffsets(ctx, "connect-s3-sink", os); err != nil {
		return fmt.Errorf("commit group connect-s3-sink: %w", err)
	}
	return nil
}

package connectdemo

import (
	"fmt"
	"strconv"
)

// Connector types and target states, spelled as package snapshot spells
// them.
const (
	TypeSource  = "source"
	TypeSink    = "sink"
	TypeUnknown = "unknown"

	StateStarted = "STARTED"
	StatePaused  = "PAUSED"
	StateStopped = "STOPPED"
)

// Record is one write to a topic, as exact bytes.
type Record struct {
	Topic string
	Key   []byte
	// Value nil is a tombstone.
	Value []byte
	// Forced writes the record to Partition instead of letting the
	// murmur2 partitioner choose, as a user running kcat -p does. Connect
	// itself never does this.
	Forced    bool
	Partition int32
	// Connector is the connector whose offset this is; empty for garbage
	// keys and for config, status and data records.
	Connector string
}

// Batch is a run of records written in order by one producer.
type Batch struct {
	// TransactionalID, when set, writes the batch in one transaction of a
	// producer with that id; empty writes it with a plain, non-idempotent,
	// acks=all producer like the worker's.
	TransactionalID string
	// Abort aborts the transaction: the records stay in the log but a
	// read_committed reader never sees them.
	Abort   bool
	Records []Record
}

// Connector is what the config topic says about one connector once every
// Spec write is applied: the facts a capture must find.
type Connector struct {
	Name string
	// Type is TypeSource or TypeSink, told by topics/topics.regex in the
	// config; TypeUnknown for a connector without config.
	Type  string
	Class string
	// HasConfig is false for a deleted connector (tombstoned
	// connector-<name>) whose offsets remain.
	HasConfig bool
	// TargetState is STARTED, PAUSED or STOPPED as the worker reads it
	// (state.v2 first, no record means STARTED); empty without config.
	TargetState string
	// Tasks is the task count of the latest commit-<name> record, -1 when
	// there is none.
	Tasks int
	// Group is a sink's resolved consumer group.
	Group string
	// OffsetsTopic is the connector's own offsets.storage.topic.
	OffsetsTopic string
	// ExactlyOnce is the connector's exactly.once.support.
	ExactlyOnce string
	// Counter is the integer field of the offset value that Churn advances
	// while the connector runs; empty means Churn leaves it alone.
	Counter string
}

// GroupOffset is one committed consumer group offset (next offset to
// read). Seed commits it with leader epoch -1 and empty metadata, as
// Connect does.
type GroupOffset struct {
	Topic     string
	Partition int32
	Offset    int64
}

// Group is a consumer group Seed commits offsets for.
type Group struct {
	Name string
	// Connector is the sink whose group this is; empty for a foreign group
	// and for the group of a sink whose config is gone.
	Connector string
	// Captured says whether a snapshot must contain the group: the sinks'
	// resolved groups plus every group with the connect- prefix.
	Captured bool
	Offsets  []GroupOffset
	// Active groups consume in the demo: Churn advances them.
	Active bool
	// Live marks the group that gets a running member when
	// Spec.LiveSinkMember is set.
	Live bool
}

// Spec describes a Connect cluster to seed: its topics, the exact records
// its workers (and a few careless users) wrote, and its groups.
type Spec struct {
	// Topics are the worker topics; zero fields take the defaults.
	Topics Topics
	// WorkerGroupID is the workers' group.id; default DefaultWorkerGroupID.
	WorkerGroupID string
	// ExtraTopics are created before anything is written: connectors' own
	// offsets topics and the data topics sinks read.
	ExtraTopics []TopicSpec
	// Connectors are the expected connectors (see Connector); Seed adds the
	// bulk ones.
	Connectors []Connector
	// Writes are written in order.
	Writes []Batch
	// Groups get their offsets committed after Writes.
	Groups []Group

	// ExtraFileConnectors adds that many running FileStreamSource-style
	// connectors named file-bulk-NNNN, each with FilesPerConnector source
	// partitions (default 1), for bulk and benchmarks. Some keys get an
	// earlier write first, about 2% end in a tombstone.
	ExtraFileConnectors int
	FilesPerConnector   int
	// HistoryPerKey, when above 0, replaces those random histories: every
	// bulk key gets exactly HistoryPerKey earlier writes and no tombstone,
	// written in rounds (every key's first write, then every key's second,
	// ...), so the offsets topic holds exactly keys × (1+HistoryPerKey)
	// bulk records for keys = ExtraFileConnectors × FilesPerConnector live
	// bulk keys. 0 keeps the random histories.
	HistoryPerKey int
	// BulkStopped writes the bulk connectors (file and sink) STOPPED with
	// no tasks, as a worker leaves them after PUT /connectors/<name>/stop,
	// so that a restore of them passes its safety checks. Churn leaves
	// stopped connectors alone.
	BulkStopped bool
	// ExtraSinkGroups adds that many sink connectors named
	// bulk-sink-NNNN reading the data topic BulkSinkTopic, each with its
	// consumer group connect-bulk-sink-NNNN holding a committed offset for
	// every one of GroupPartitions (default 1) partitions of that topic.
	// The data topic is created with GroupPartitions partitions and left
	// empty: the committed offsets point past its end, which Kafka allows.
	ExtraSinkGroups int
	GroupPartitions int
	// LiveSinkMember keeps a consumer in the Live group until the Seed ctx
	// ends or Expected.Stop is called.
	LiveSinkMember bool
	// Seed makes the random parts (bulk positions and histories, Churn)
	// reproducible.
	Seed int64
}

func (s Spec) withDefaults() Spec {
	s.Topics = s.Topics.withDefaults()
	if s.WorkerGroupID == "" {
		s.WorkerGroupID = DefaultWorkerGroupID
	}
	if s.ExtraFileConnectors > 0 && s.FilesPerConnector <= 0 {
		s.FilesPerConnector = 1
	}
	if s.ExtraSinkGroups > 0 && s.GroupPartitions <= 0 {
		s.GroupPartitions = 1
	}
	return s
}

// Names used by DefaultSpec.
const (
	ConnMySQL      = "inventory-connector"
	ConnSQLServer  = "sqlserver-connector"
	ConnMongo      = "mongodb-connector"
	ConnJDBC       = "jdbc-orders-source"
	ConnJDBCLegacy = "jdbc-legacy-source"
	ConnFile       = "source-file-01"
	ConnMirror     = "eu->us.MirrorSourceConnector"
	ConnCheckpoint = "eu->us.MirrorCheckpointConnector"
	ConnHeartbeat  = "eu->us.MirrorHeartbeatConnector"
	ConnUnicode    = "café-données-😀"
	ConnPoller     = "custom-poller"
	ConnEOS        = "payments-cdc"
	ConnDeleted    = "old-file-source"
	ConnSinkES     = "es-sink-orders"
	ConnSinkS3     = "s3-sink-archive"

	GroupSinkES       = "connect-es-sink-orders"
	GroupSinkS3       = "archive-loader"
	GroupDeletedSink  = "connect-legacy-jdbc-sink"
	GroupForeign      = "billing-app"
	GroupForeignAlike = "connectors-audit"

	EOSOffsetsTopic = "payments-cdc-offsets"
)

// unicodeJSON is ConnUnicode as Jackson writes it inside a JSON string.
const unicodeJSON = `café-données-\uD83D\uDE00`

// DefaultSpec is a realistic Connect cluster with the default topic names:
//
//	inventory-connector          Debezium MySQL, STARTED (no target-state record; an aborted
//	                             STOPPED write must be ignored); a stale key from its first
//	                             incarnation (server1) lives in partitions 8 and 11, the
//	                             second written with kcat -p 11 as the Debezium docs say
//	sqlserver-connector          Debezium SQL Server, PAUSED (v2 form)
//	mongodb-connector            Debezium MongoDB, STOPPED (commit tasks 0), one rs tombstoned
//	jdbc-orders-source           Confluent JDBC v1, STARTED after stop/resume (explicit v2
//	                             STARTED), 2 tasks, a table tombstoned, an aborted alter
//	jdbc-legacy-source           Confluent JDBC v0 key, PAUSED (pre-3.5 v1 form)
//	source-file-01               FileStreamSource, STARTED (paused, then target state tombstoned)
//	eu->us.MirrorSourceConnector MM2 source, STARTED, 2 tasks, a partition tombstoned, plus
//	                             one key in copy-constructed field order (a separate entry)
//	eu->us.MirrorCheckpointConnector, eu->us.MirrorHeartbeatConnector  STARTED
//	café-données-😀              FileStreamSource, STOPPED; keys with é, <>&, U+2028,
//	                             \uD83D\uDE00, \u001F, \t, \" and \\
//	custom-poller                STARTED, config but never a commit (Tasks -1), double values
//	payments-cdc                 Debezium Postgres, STARTED, exactly.once.support=required,
//	                             own offsets topic payments-cdc-offsets (5 partitions),
//	                             transactional writes (one aborted), secondary copies in
//	                             connect-offsets
//	old-file-source              deleted (config and target state tombstoned), offsets remain
//	es-sink-orders               sink, STARTED, group connect-es-sink-orders (the Live group)
//	s3-sink-archive              sink, STOPPED, topics.regex, group archive-loader from
//	                             consumer.override.group.id
//
// Groups: connect-es-sink-orders and archive-loader (sinks),
// connect-legacy-jdbc-sink (a deleted sink with no config: captured by
// prefix), billing-app and connectors-audit (foreign, not captured). The
// offsets topic also holds 3 live unparsable keys: a JSON string, binary
// bytes and a 3-element array.
//
// Traps on purpose: MirrorSourceConnector's config has a topics setting
// (as Strimzi writes it) although it is a source; the config record keys
// spell café-données-😀 in raw UTF-8 while its offsets keys and config
// values spell the emoji \uD83D\uDE00; the config topic is written in
// leader transactions, one of them aborted.
func DefaultSpec() Spec { return SpecFor(Topics{}, DefaultWorkerGroupID) }

// SpecFor is DefaultSpec with other worker topic names, partition counts or
// worker group.id (empty takes the default).
func SpecFor(t Topics, workerGroupID string) Spec {
	t = t.withDefaults()
	if workerGroupID == "" {
		workerGroupID = DefaultWorkerGroupID
	}
	b := &builder{}
	off, cfg, st := t.Offsets, t.Configs, t.Status
	leader := "connect-cluster-" + workerGroupID
	eosTxn := workerGroupID + "-" + ConnEOS + "-0"

	s := Spec{
		Topics:        t,
		WorkerGroupID: workerGroupID,
		ExtraTopics: []TopicSpec{
			{Name: EOSOffsetsTopic, Partitions: 5, Compact: true},
			{Name: "orders", Partitions: 6, Records: 40},
			{Name: "clicks", Partitions: 3, Records: 60},
			{Name: "invoices", Partitions: 2, Records: 30},
			{Name: "legacy.customers", Partitions: 1, Records: 10},
			{Name: "pgpayments.public.payments", Partitions: 3},
		},
	}

	writeConfigTopic(b, cfg, leader)
	writeStatusTopic(b, st)
	writeOffsetsTopic(b, off, workerGroupID)
	writeEOSOffsets(b, off, eosTxn)
	s.Writes = b.done()
	s.Connectors = defaultConnectors()
	s.Groups = defaultGroups()
	return s
}

// writeConfigTopic writes the config topic: creation, in one leader
// transaction, then state changes, one leader transaction each.
func writeConfigTopic(b *builder, cfg, leader string) {
	// ---- Config topic: creation, in one leader transaction. ----
	b.begin(leader, false)
	b.put(cfg, "", "session-key", `{"key":"dGhpcyBpcyBub3QgYSByZWFsIGtleSE=","algorithm":"HmacSHA256","creation-timestamp":1700000000000}`)
	type def struct {
		name, nameJSON, class, taskClass string
		tasks                            int // tasks at creation; -1 none
		props                            []string
	}
	defs := []def{
		{ConnMySQL, ConnMySQL, "io.debezium.connector.mysql.MySqlConnector", "io.debezium.connector.mysql.MySqlConnectorTask", 1,
			[]string{"tasks.max", "1", "database.hostname", "mysql", "database.port", "3306", "database.user", "debezium", "database.password", "dbz", "database.server.id", "223344", "topic.prefix", "dbserver1", "database.include.list", "inventory", "schema.history.internal.kafka.bootstrap.servers", "kafka:9092", "schema.history.internal.kafka.topic", "schema-changes.inventory"}},
		{ConnSQLServer, ConnSQLServer, "io.debezium.connector.sqlserver.SqlServerConnector", "io.debezium.connector.sqlserver.SqlServerConnectorTask", 1,
			[]string{"tasks.max", "1", "database.hostname", "sqlserver", "database.port", "1433", "database.user", "sa", "database.names", "testDB,inventory", "topic.prefix", "sqlserver1"}},
		{ConnMongo, ConnMongo, "io.debezium.connector.mongodb.MongoDbConnector", "io.debezium.connector.mongodb.MongoDbConnectorTask", 1,
			[]string{"tasks.max", "1", "mongodb.connection.string", "mongodb://mongo1:27017/?replicaSet=rs0", "topic.prefix", "mongo1"}},
		{ConnJDBC, ConnJDBC, "io.confluent.connect.jdbc.JdbcSourceConnector", "io.confluent.connect.jdbc.source.JdbcSourceTask", 2,
			[]string{"tasks.max", "2", "connection.url", "jdbc:mysql://mysql:3306/shop", "mode", "incrementing", "incrementing.column.name", "id", "table.whitelist", "shop.orders,shop.customers", "topic.prefix", "jdbc-"}},
		{ConnJDBCLegacy, ConnJDBCLegacy, "io.confluent.connect.jdbc.JdbcSourceConnector", "io.confluent.connect.jdbc.source.JdbcSourceTask", 1,
			[]string{"tasks.max", "1", "connection.url", "jdbc:postgresql://legacy:5432/app", "mode", "incrementing", "incrementing.column.name", "id", "table.whitelist", "orders", "topic.prefix", "legacy-"}},
		{ConnFile, ConnFile, "org.apache.kafka.connect.file.FileStreamSourceConnector", "org.apache.kafka.connect.file.FileStreamSourceTask", 1,
			[]string{"tasks.max", "1", "file", "/data/testdata.txt", "topic", "file-lines"}},
		{ConnMirror, ConnMirror, "org.apache.kafka.connect.mirror.MirrorSourceConnector", "org.apache.kafka.connect.mirror.MirrorSourceTask", 2,
			[]string{"tasks.max", "2", "source.cluster.alias", "eu", "target.cluster.alias", "us", "topics", "orders,clicks", "replication.factor", "3"}},
		{ConnCheckpoint, ConnCheckpoint, "org.apache.kafka.connect.mirror.MirrorCheckpointConnector", "org.apache.kafka.connect.mirror.MirrorCheckpointTask", 1,
			[]string{"tasks.max", "1", "source.cluster.alias", "eu", "target.cluster.alias", "us", "groups", "billing-app"}},
		{ConnHeartbeat, ConnHeartbeat, "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector", "org.apache.kafka.connect.mirror.MirrorHeartbeatTask", 1,
			[]string{"tasks.max", "1", "source.cluster.alias", "eu", "target.cluster.alias", "us"}},
		{ConnUnicode, unicodeJSON, "org.apache.kafka.connect.file.FileStreamSourceConnector", "org.apache.kafka.connect.file.FileStreamSourceTask", 1,
			[]string{"tasks.max", "1", "file", "/data/é<>&\u2028ligne\\uD83D\\uDE00\\u001Fend.txt", "topic", "unicode-lines"}},
		{ConnPoller, ConnPoller, "com.example.connect.PollerSourceConnector", "", -1,
			[]string{"tasks.max", "1", "endpoint", "https://api.example.com/v1/items?page=1&size=100", "topic", "items"}},
		{ConnEOS, ConnEOS, "io.debezium.connector.postgresql.PostgresConnector", "io.debezium.connector.postgresql.PostgresConnectorTask", 1,
			[]string{"tasks.max", "1", "database.hostname", "pg-payments", "database.dbname", "payments", "topic.prefix", "pgpayments", "plugin.name", "pgoutput", "exactly.once.support", "required", "transaction.boundary", "poll", "offsets.storage.topic", EOSOffsetsTopic}},
		{ConnDeleted, ConnDeleted, "org.apache.kafka.connect.file.FileStreamSourceConnector", "org.apache.kafka.connect.file.FileStreamSourceTask", 1,
			[]string{"tasks.max", "1", "file", "/var/log/old.log", "topic", "old-lines"}},
		{ConnSinkES, ConnSinkES, "io.confluent.connect.elasticsearch.ElasticsearchSinkConnector", "io.confluent.connect.elasticsearch.ElasticsearchSinkTask", 2,
			[]string{"tasks.max", "2", "topics", "orders", "connection.url", "http://elasticsearch:9200", "key.ignore", "true"}},
		{ConnSinkS3, ConnSinkS3, "io.confluent.connect.s3.S3SinkConnector", "io.confluent.connect.s3.S3SinkTask", 1,
			[]string{"tasks.max", "1", "topics.regex", "clicks|orders", "s3.bucket.name", "archive", "flush.size", "1000", "consumer.override.group.id", GroupSinkS3, "consumer.override.auto.offset.reset", "earliest"}},
	}
	for _, d := range defs {
		props := append([]string{"connector.class", d.class}, d.props...)
		props = append(props, "name", d.nameJSON)
		b.put(cfg, "", "connector-"+d.name, propsJSON(props))
		for i := 0; i < d.tasks; i++ {
			b.put(cfg, "", fmt.Sprintf("task-%s-%d", d.name, i), propsJSON(append(append([]string{}, props...), "task.class", d.taskClass)))
		}
		if d.tasks >= 0 {
			b.put(cfg, "", "commit-"+d.name, fmt.Sprintf(`{"tasks":%d}`, d.tasks))
		}
	}
	b.put(cfg, "", "tasks-fencing-"+ConnEOS, `{"task-count":1}`)

	// ---- Config topic: state changes, one leader transaction each. ----
	b.begin(leader, false)
	b.put(cfg, "", "target-state-"+ConnSQLServer, `{"state":"PAUSED","state.v2":"PAUSED"}`)
	b.put(cfg, "", "target-state-"+ConnJDBCLegacy, `{"state":"PAUSED"}`)
	b.put(cfg, "", "target-state-"+ConnHeartbeat, `{"state":"STARTED"}`)
	b.put(cfg, "", "target-state-"+ConnFile, `{"state":"PAUSED","state.v2":"PAUSED"}`)
	for _, n := range []string{ConnMongo, ConnUnicode, ConnSinkS3, ConnJDBC} { // stop sequence
		b.put(cfg, "", "commit-"+n, `{"tasks":0}`)
		b.put(cfg, "", "target-state-"+n, `{"state":"PAUSED","state.v2":"STOPPED"}`)
	}
	b.put(cfg, "", "restart-connector-"+ConnSinkES, `{"include-tasks":false,"only-failed":true}`)
	b.put(cfg, "", "logger-cluster-org.apache.kafka.connect", `{"level":"DEBUG"}`)
	b.begin(leader, false) // resumes
	b.tomb(cfg, "", "target-state-"+ConnFile)
	b.put(cfg, "", "target-state-"+ConnJDBC, `{"state":"STARTED","state.v2":"STARTED"}`)
	jdbcProps := propsJSON([]string{"connector.class", "io.confluent.connect.jdbc.JdbcSourceConnector", "tasks.max", "2", "connection.url", "jdbc:mysql://mysql:3306/shop", "mode", "incrementing", "incrementing.column.name", "id", "table.whitelist", "shop.orders,shop.customers", "topic.prefix", "jdbc-", "name", ConnJDBC, "task.class", "io.confluent.connect.jdbc.source.JdbcSourceTask"})
	b.put(cfg, "", "task-"+ConnJDBC+"-0", jdbcProps)
	b.put(cfg, "", "task-"+ConnJDBC+"-1", jdbcProps)
	b.put(cfg, "", "commit-"+ConnJDBC, `{"tasks":2}`)
	b.begin(leader, true) // a leader that lost its fencing: aborted, must be ignored
	b.put(cfg, "", "commit-"+ConnMySQL, `{"tasks":0}`)
	b.put(cfg, "", "target-state-"+ConnMySQL, `{"state":"PAUSED","state.v2":"STOPPED"}`)
	b.put(cfg, "", "connector-ghost-connector", `{"properties":{"connector.class":"org.apache.kafka.connect.file.FileStreamSourceConnector","name":"ghost-connector"}}`)
	b.begin(leader, false) // delete
	b.tomb(cfg, "", "connector-"+ConnDeleted)
	b.tomb(cfg, "", "target-state-"+ConnDeleted)
}

// writeStatusTopic writes the status topic (advisory; plain writes).
func writeStatusTopic(b *builder, st string) {
	// ---- Status topic (advisory; plain writes). ----
	b.begin("", false)
	for _, x := range []struct {
		name, state string
		tasks       int
	}{
		{ConnMySQL, "RUNNING", 1}, {ConnSQLServer, "PAUSED", 1}, {ConnMongo, "STOPPED", 0},
		{ConnJDBC, "RUNNING", 2}, {ConnJDBCLegacy, "PAUSED", 1}, {ConnFile, "RUNNING", 1},
		{ConnMirror, "RUNNING", 2}, {ConnCheckpoint, "RUNNING", 1}, {ConnHeartbeat, "RUNNING", 1},
		{ConnUnicode, "STOPPED", 0}, {ConnPoller, "UNASSIGNED", 0}, {ConnEOS, "RUNNING", 1},
		{ConnDeleted, "DESTROYED", 1}, {ConnSinkES, "RUNNING", 2}, {ConnSinkS3, "STOPPED", 0},
	} {
		b.put(st, "", "status-connector-"+x.name, statusJSON(x.state, 7))
		for i := 0; i < x.tasks; i++ {
			b.put(st, "", fmt.Sprintf("status-task-%s-%d", x.name, i), statusJSON(x.state, 7))
		}
	}
	b.put(st, "", "status-topic-orders:connector-"+ConnSinkES, `{"topic":{"name":"orders","connector":"es-sink-orders","task":0,"discoverTimestamp":1700000000000}}`)
	b.put(st, "", "status-topic-file-lines:connector-"+ConnFile, `{"topic":{"name":"file-lines","connector":"source-file-01","task":0,"discoverTimestamp":1700000000000}}`)
}

// writeOffsetsTopic writes the worker offsets topic: its history, then
// the final writes and tombstones, then an aborted exactly-once alter.
func writeOffsetsTopic(b *builder, off, workerGroupID string) {
	// ---- Worker offsets topic: history. ----
	b.begin("", false)
	fileKey := k(ConnFile, `{"filename":"/data/testdata.txt"}`)
	b.put(off, ConnFile, fileKey, `{"position":0}`)
	b.put(off, ConnFile, fileKey, `{"position":512}`)

	mysqlStale := k(ConnMySQL, `{"server":"server1"}`) // murmur2 partition 8 of 25
	b.put(off, ConnMySQL, mysqlStale, `{"file":"mysql-bin.000001","pos":154}`)
	b.put(off, ConnMySQL, mysqlStale, `{"ts_sec":1690000000,"file":"mysql-bin.000001","pos":4077,"row":1,"server_id":223344,"event":1}`)
	mysqlKey := k(ConnMySQL, `{"server":"dbserver1"}`) // murmur2 partition 11 of 25
	b.put(off, ConnMySQL, mysqlKey, `{"file":"mysql-bin.000002","pos":154}`)
	b.put(off, ConnMySQL, mysqlKey, `{"ts_sec":1699990000,"file":"mysql-bin.000002","pos":98231,"row":1,"server_id":223344,"event":4}`)
	b.put(off, ConnMySQL, mysqlKey, `{"ts_sec":1699999000,"file":"mysql-bin.000002","pos":120004,"row":2,"server_id":223344,"event":3}`)

	sqlTest := k(ConnSQLServer, `{"server":"sqlserver1","database":"testDB"}`)
	sqlInv := k(ConnSQLServer, `{"server":"sqlserver1","database":"inventory"}`)
	b.put(off, ConnSQLServer, sqlTest, `{"transaction_id":null,"event_serial_no":1,"commit_lsn":"00000025:00000d98:0002","change_lsn":"00000025:00000d98:0003"}`)
	b.put(off, ConnSQLServer, sqlInv, `{"transaction_id":null,"event_serial_no":1,"commit_lsn":"00000025:00000b20:0001","change_lsn":"00000025:00000b20:0002"}`)

	mongo0 := k(ConnMongo, `{"rs":"rs0","server_id":"mongo1"}`)
	mongo1 := k(ConnMongo, `{"rs":"rs1","server_id":"mongo1"}`)
	mongo2 := k(ConnMongo, `{"rs":"rs2","server_id":"mongo1"}`)
	b.put(off, ConnMongo, mongo0, `{"sec":1699990000,"ord":1,"transaction_id":null,"resume_token":"8265A1B2C3000000012B022C0100296E5A1004"}`)
	b.put(off, ConnMongo, mongo1, `{"sec":1699990100,"ord":4,"transaction_id":null,"resume_token":"8265A1B2D4000000042B022C0100296E5A1004"}`)
	b.put(off, ConnMongo, mongo2, `{"sec":1699990200,"ord":2,"transaction_id":null,"resume_token":"8265A1B2E5000000022B022C0100296E5A1004"}`)

	jdbcOrders := k(ConnJDBC, `{"protocol":"1","table":"shop.orders"}`)
	jdbcCustomers := k(ConnJDBC, `{"protocol":"1","table":"shop.customers"}`)
	jdbcAudit := k(ConnJDBC, `{"protocol":"1","table":"shop.legacy_audit"}`)
	b.put(off, ConnJDBC, jdbcOrders, `{"incrementing":10}`)
	b.put(off, ConnJDBC, jdbcOrders, `{"incrementing":25}`)
	b.put(off, ConnJDBC, jdbcCustomers, `{"timestamp_nanos":0,"timestamp":1699990000000}`)
	b.put(off, ConnJDBC, jdbcAudit, `{"incrementing":5}`)
	legacyOrders := k(ConnJDBCLegacy, `{"table":"orders"}`)
	b.put(off, ConnJDBCLegacy, legacyOrders, `{"incrementing":3}`)

	mirror := func(topic string, p int) string {
		return k(ConnMirror, `{"cluster":"eu","partition":`+strconv.Itoa(p)+`,"topic":"`+topic+`"}`)
	}
	for p := 0; p < 6; p++ {
		b.put(off, ConnMirror, mirror("orders", p), `{"offset":`+strconv.Itoa(100*p)+`}`)
	}
	for p := 0; p < 3; p++ {
		b.put(off, ConnMirror, mirror("clicks", p), `{"offset":`+strconv.Itoa(50*p)+`}`)
	}
	// The same source partition in copy-constructed HashMap order (cap 8):
	// a separate, independent entry the task never reads.
	b.put(off, ConnMirror, k(ConnMirror, `{"topic":"orders","cluster":"eu","partition":0}`), `{"offset":7}`)
	for p := 0; p < 3; p++ {
		b.put(off, ConnCheckpoint, k(ConnCheckpoint, `{"partition":`+strconv.Itoa(p)+`,"topic":"orders","group":"billing-app"}`), `{"offset":0}`)
	}
	b.put(off, ConnHeartbeat, k(ConnHeartbeat, `{"sourceClusterAlias":"eu","targetClusterAlias":"us"}`), `{"offset":0}`)

	uni1 := k(unicodeJSON, `{"filename":"/data/é<>&`+"\u2028"+`ligne\uD83D\uDE00\u001Fend.txt"}`)
	uni2 := k(unicodeJSON, `{"filename":"/data/tab\there \"quoted\" back\\slash.csv"}`)
	uni3 := k(unicodeJSON, `{"filename":"/data/日本語/ファイル\u0001.log"}`)
	b.put(off, ConnUnicode, uni1, `{"position":1024}`)
	b.put(off, ConnUnicode, uni2, `{"position":10}`)
	b.put(off, ConnUnicode, uni3, `{"position":5}`)

	poller := k(ConnPoller, `{"endpoint":"https://api.example.com/v1/items?page=1&size=100","ratio":100.0}`)
	b.put(off, ConnPoller, poller, `{"cursor":"eyJpZCI6NDF9","ts":1.0E-4,"scale":1.0E7}`)

	deleted := k(ConnDeleted, `{"filename":"/var/log/old.log"}`)
	b.put(off, ConnDeleted, deleted, `{"position":100}`)
	b.put(off, ConnDeleted, deleted, `{"position":999}`)

	// Garbage: not [name,{map}]; Connect keeps them in data, a capture
	// must keep them too.
	b.put(off, "", `"not-a-connect-key"`, `{"x":1}`)
	b.put(off, "", "\x00\x01\xfe\xffbinary-key", "\x01\x02\xff")
	b.put(off, "", `["broken",{"a":1},"extra"]`, `{"offset":1}`)
	b.put(off, "", `"temp-garbage"`, `{"x":2}`)

	// The Debezium docs' "reset" with kcat -P -p 11 for a key murmur2 puts
	// in partition 8: the key now lives in two partitions.
	b.begin("", false)
	b.force(off, ConnMySQL, mysqlStale, `{"ts_sec":1530168950,"file":"mysql-bin.000003","pos":817,"row":1,"server_id":223344,"event":2}`, 11)

	// ---- Worker offsets topic: final writes and tombstones. ----
	b.begin("", false)
	b.put(off, ConnFile, fileKey, `{"position":1234}`)
	b.put(off, ConnMySQL, mysqlKey, `{"ts_sec":1700000000,"file":"mysql-bin.000003","pos":154,"row":1,"server_id":223344,"event":2}`)
	b.put(off, ConnSQLServer, sqlTest, `{"transaction_id":null,"event_serial_no":2,"commit_lsn":"00000027:00000758:0005","change_lsn":"00000027:00000758:0003"}`)
	b.put(off, ConnSQLServer, sqlInv, `{"transaction_id":null,"event_serial_no":1,"commit_lsn":"00000027:00000760:0001","change_lsn":"00000027:00000760:0002"}`)
	b.put(off, ConnMongo, mongo0, `{"sec":1700000000,"ord":3,"transaction_id":null,"resume_token":"8265A1C3F1000000032B022C0100296E5A1004"}`)
	b.put(off, ConnMongo, mongo1, `{"sec":1700000060,"ord":1,"transaction_id":null,"resume_token":"8265A1C42C000000012B022C0100296E5A1004"}`)
	b.tomb(off, ConnMongo, mongo2) // replica set removed
	b.put(off, ConnJDBC, jdbcOrders, `{"incrementing":42}`)
	b.put(off, ConnJDBC, jdbcCustomers, `{"timestamp_nanos":123000000,"timestamp":1700000000123}`)
	b.tomb(off, ConnJDBC, jdbcAudit) // table dropped
	b.put(off, ConnJDBCLegacy, legacyOrders, `{"incrementing":17}`)
	for p := 0; p < 5; p++ {
		b.put(off, ConnMirror, mirror("orders", p), `{"offset":`+strconv.Itoa(1000+100*p+p)+`}`)
	}
	b.tomb(off, ConnMirror, mirror("orders", 5)) // partition no longer replicated
	for p := 0; p < 3; p++ {
		b.put(off, ConnMirror, mirror("clicks", p), `{"offset":`+strconv.Itoa(700+p)+`}`)
	}
	b.tomb(off, ConnUnicode, uni2)
	b.put(off, ConnUnicode, uni1, `{"position":4096}`)
	b.put(off, ConnUnicode, uni2, `{"position":77}`) // back after its tombstone
	b.tomb(off, "", `"temp-garbage"`)

	// An exactly-once alter of jdbc-orders-source that was aborted.
	b.begin(workerGroupID+"-"+ConnJDBC+"-0", true)
	b.put(off, ConnJDBC, jdbcOrders, `{"incrementing":999999}`)
	b.put(off, ConnJDBC, k(ConnJDBC, `{"protocol":"1","table":"shop.ghost"}`), `{"incrementing":1}`)
}

// writeEOSOffsets writes payments-cdc, exactly-once, to its own offsets
// topic (and best-effort to the worker topic off).
func writeEOSOffsets(b *builder, off, eosTxn string) {
	// ---- payments-cdc: exactly-once, own offsets topic. ----
	eosKey := k(ConnEOS, `{"server":"pgpayments"}`)
	eosOld := k(ConnEOS, `{"server":"pgpayments-old"}`)
	pg := func(lsn, txID int) string {
		return fmt.Sprintf(`{"transaction_id":null,"lsn_proc":%d,"messageType":"UPDATE","lsn_commit":%d,"lsn":%d,"txId":%d,"ts_usec":%d}`, lsn, lsn, lsn, txID, 1700000000000000+int64(txID)*1000)
	}
	eosTx := func(abort bool, row int, offs ...[2]string) {
		b.begin(eosTxn, abort)
		b.put("pgpayments.public.payments", "", fmt.Sprintf(`{"id":%d}`, row), fmt.Sprintf(`{"before":null,"after":{"id":%d,"amount":"12.50","currency":"EUR"},"op":"c"}`, row))
		for _, o := range offs {
			b.put(EOSOffsetsTopic, ConnEOS, o[0], o[1])
		}
		if abort {
			return
		}
		// Best-effort secondary write of non-tombstones to the worker topic.
		b.begin("", false)
		for _, o := range offs {
			b.put(off, ConnEOS, o[0], o[1])
		}
	}
	eosTx(false, 1, [2]string{eosOld, pg(23000000, 700)}, [2]string{eosKey, pg(23967456, 771)})
	eosTx(false, 2, [2]string{eosKey, pg(23968000, 772)})
	eosTx(true, 3, [2]string{eosKey, pg(23999999, 799)}, [2]string{k(ConnEOS, `{"server":"pgpayments-replica"}`), pg(1, 1)})
	// Tombstones go to the secondary store first, then to the primary.
	b.begin("", false)
	b.tomb(off, ConnEOS, eosOld)
	b.begin(eosTxn, false)
	b.tomb(EOSOffsetsTopic, ConnEOS, eosOld)
	eosTx(false, 4, [2]string{eosKey, pg(23970112, 773)})
}

// defaultConnectors are the connectors DefaultSpec expects a capture to find.
func defaultConnectors() []Connector {
	worker := func(c Connector) Connector { c.HasConfig = true; return c }
	return []Connector{
		worker(Connector{Name: ConnMySQL, Type: TypeSource, Class: "io.debezium.connector.mysql.MySqlConnector", TargetState: StateStarted, Tasks: 1, Counter: "pos"}),
		worker(Connector{Name: ConnSQLServer, Type: TypeSource, Class: "io.debezium.connector.sqlserver.SqlServerConnector", TargetState: StatePaused, Tasks: 1, Counter: "event_serial_no"}),
		worker(Connector{Name: ConnMongo, Type: TypeSource, Class: "io.debezium.connector.mongodb.MongoDbConnector", TargetState: StateStopped, Tasks: 0, Counter: "ord"}),
		worker(Connector{Name: ConnJDBC, Type: TypeSource, Class: "io.confluent.connect.jdbc.JdbcSourceConnector", TargetState: StateStarted, Tasks: 2, Counter: "incrementing"}),
		worker(Connector{Name: ConnJDBCLegacy, Type: TypeSource, Class: "io.confluent.connect.jdbc.JdbcSourceConnector", TargetState: StatePaused, Tasks: 1, Counter: "incrementing"}),
		worker(Connector{Name: ConnFile, Type: TypeSource, Class: "org.apache.kafka.connect.file.FileStreamSourceConnector", TargetState: StateStarted, Tasks: 1, Counter: "position"}),
		worker(Connector{Name: ConnMirror, Type: TypeSource, Class: "org.apache.kafka.connect.mirror.MirrorSourceConnector", TargetState: StateStarted, Tasks: 2, Counter: "offset"}),
		worker(Connector{Name: ConnCheckpoint, Type: TypeSource, Class: "org.apache.kafka.connect.mirror.MirrorCheckpointConnector", TargetState: StateStarted, Tasks: 1}),
		worker(Connector{Name: ConnHeartbeat, Type: TypeSource, Class: "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector", TargetState: StateStarted, Tasks: 1}),
		worker(Connector{Name: ConnUnicode, Type: TypeSource, Class: "org.apache.kafka.connect.file.FileStreamSourceConnector", TargetState: StateStopped, Tasks: 0, Counter: "position"}),
		worker(Connector{Name: ConnPoller, Type: TypeSource, Class: "com.example.connect.PollerSourceConnector", TargetState: StateStarted, Tasks: -1}),
		worker(Connector{Name: ConnEOS, Type: TypeSource, Class: "io.debezium.connector.postgresql.PostgresConnector", TargetState: StateStarted, Tasks: 1, OffsetsTopic: EOSOffsetsTopic, ExactlyOnce: "required", Counter: "lsn"}),
		{Name: ConnDeleted, Type: TypeUnknown, HasConfig: false, Tasks: 1},
		worker(Connector{Name: ConnSinkES, Type: TypeSink, Class: "io.confluent.connect.elasticsearch.ElasticsearchSinkConnector", TargetState: StateStarted, Tasks: 2, Group: GroupSinkES}),
		worker(Connector{Name: ConnSinkS3, Type: TypeSink, Class: "io.confluent.connect.s3.S3SinkConnector", TargetState: StateStopped, Tasks: 0, Group: GroupSinkS3}),
	}
}

// defaultGroups are the consumer groups DefaultSpec seeds.
func defaultGroups() []Group {
	offs := func(topic string, vals ...int64) []GroupOffset {
		var out []GroupOffset
		for p, v := range vals {
			out = append(out, GroupOffset{Topic: topic, Partition: int32(p), Offset: v})
		}
		return out
	}
	return []Group{
		{Name: GroupSinkES, Connector: ConnSinkES, Captured: true, Active: true, Live: true,
			Offsets: offs("orders", 40, 38, 40, 35, 40, 12)},
		{Name: GroupSinkS3, Connector: ConnSinkS3, Captured: true,
			Offsets: append(offs("clicks", 60, 55, 58), offs("orders", 40, 40, 39, 40, 37, 40)...)},
		{Name: GroupDeletedSink, Captured: true, Offsets: offs("legacy.customers", 10)},
		{Name: GroupForeign, Active: true, Offsets: offs("invoices", 30, 28)},
		{Name: GroupForeignAlike, Offsets: offs("invoices", 5)},
	}
}

// k is an offsets key [name,{map}]; nameJSON and part are already Jackson bytes.
func k(nameJSON, part string) string { return `["` + nameJSON + `",` + part + `]` }

// propsJSON writes {"properties":{...}} from key/value pairs that are
// already Jackson-escaped string contents, in the order given.
func propsJSON(kv []string) string {
	out := `{"properties":{`
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			out += ","
		}
		out += `"` + kv[i] + `":"` + kv[i+1] + `"`
	}
	return out + `}}`
}

func statusJSON(state string, generation int) string {
	return `{"state":"` + state + `","trace":null,"worker_id":"connect-0.connect.svc:8083","generation":` + strconv.Itoa(generation) + `}`
}

// builder accumulates batches for SpecFor.
type builder struct{ batches []Batch }

func (b *builder) begin(txnID string, abort bool) {
	b.batches = append(b.batches, Batch{TransactionalID: txnID, Abort: abort})
}

func (b *builder) add(r Record) {
	cur := &b.batches[len(b.batches)-1]
	cur.Records = append(cur.Records, r)
}

func (b *builder) put(topic, conn, key, value string) {
	b.add(Record{Topic: topic, Key: []byte(key), Value: []byte(value), Connector: conn})
}

func (b *builder) tomb(topic, conn, key string) {
	b.add(Record{Topic: topic, Key: []byte(key), Connector: conn})
}

func (b *builder) force(topic, conn, key, value string, p int32) {
	b.add(Record{Topic: topic, Key: []byte(key), Value: []byte(value), Connector: conn, Forced: true, Partition: p})
}

func (b *builder) done() []Batch {
	var out []Batch
	for _, bt := range b.batches {
		if len(bt.Records) > 0 {
			out = append(out, bt)
		}
	}
	return out
}

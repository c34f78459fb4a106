package main

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
)

// wideSinkTopic is the data topic the wide sinks read.
const wideSinkTopic = "customer-events-enriched-eu-west-1-v2"

// wideConnectors writes, beside whatever the cluster holds, 30 STOPPED
// connectors with long names and the offsets real plugins write, as
// their workers would: Confluent JDBC sources ({"timestamp_nanos":0,
// "incrementing":207,"timestamp":...}), Confluent S3 sources (file paths),
// Debezium MySQL sources (binlog file, pos and GTID sets) and sinks with
// groups over 6 partitions, configs with long values. round moves every
// position (0 is the first write). It returns the connectors' names.
func (c *cluster) wideConnectors(round int) []string {
	c.t.Helper()
	ctx := context.Background()
	if round == 0 {
		if _, err := c.adm.CreateTopic(ctx, 6, 1, nil, wideSinkTopic); err != nil {
			c.t.Fatal(err)
		}
	}
	var names []string
	var recs []*kgo.Record
	cfg := func(name string, props ...string) {
		props = append(props, "name", name)
		js := `{"properties":{`
		for i := 0; i+1 < len(props); i += 2 {
			if i > 0 {
				js += ","
			}
			js += fmt.Sprintf("%q:%q", props[i], props[i+1])
		}
		recs = append(recs,
			&kgo.Record{Topic: connectdemo.DefaultConfigsTopic, Key: []byte("connector-" + name), Value: []byte(js + "}}")},
			&kgo.Record{Topic: connectdemo.DefaultConfigsTopic, Key: []byte("commit-" + name), Value: []byte(`{"tasks":0}`)},
			&kgo.Record{Topic: connectdemo.DefaultConfigsTopic, Key: []byte("target-state-" + name), Value: []byte(`{"state":"PAUSED","state.v2":"STOPPED"}`)})
		names = append(names, name)
	}
	offset := func(name, partition, value string) {
		recs = append(recs, &kgo.Record{Topic: connectdemo.DefaultOffsetsTopic, Key: []byte(`["` + name + `",` + partition + `]`), Value: []byte(value)})
	}
	ts := 1733551234000 + int64(round)*86_400_000
	for i := range 12 {
		name := fmt.Sprintf("jdbc-warehouse-eu-west-1-orders-history-archive-source-%02d", i)
		if round == 0 {
			cfg(name, "connector.class", "io.confluent.connect.jdbc.JdbcSourceConnector", "tasks.max", "4", "mode", "timestamp+incrementing",
				"connection.url", "jdbc:postgresql://warehouse-eu-west-1.cluster-c9akciq32.eu-west-1.rds.amazonaws.com:5432/warehouse?ssl=true&sslmode=verify-full&sslrootcert=/etc/ssl/certs/rds-ca-2019-root.pem&ApplicationName=kafka-connect-jdbc",
				"table.whitelist", "public.orders_history_archive_2024,public.order_lines_history_archive_2024,public.customers_history_archive_2024")
		}
		for _, table := range []string{"orders_history_archive_2024", "order_lines_history_archive_2024", "customers_history_archive_2024"} {
			offset(name, `{"protocol":"1","table":"warehouse.public.`+table+`"}`,
				fmt.Sprintf(`{"timestamp_nanos":%d,"incrementing":%d,"timestamp":%d}`, 123456*round, 207+5000*round+i, ts+int64(i)))
		}
	}
	for i := range 8 {
		name := fmt.Sprintf("s3-source-landing-zone-customer-events-replay-eu-west-1-%02d", i)
		if round == 0 {
			cfg(name, "connector.class", "io.confluent.connect.s3.source.S3SourceConnector", "tasks.max", "2", "s3.bucket.name", "landing-zone-customer-events-eu-west-1",
				"topics.dir", "topics/customer-events-enriched-eu-west-1-v2", "format.class", "io.confluent.connect.s3.format.json.JsonFormat")
		}
		for p := range 3 {
			folder := fmt.Sprintf("topics/customer-events-enriched-eu-west-1-v2/year=2026/month=12/day=07/partition=%d/", p)
			offset(name, `{"folder":"`+folder+`"}`,
				fmt.Sprintf(`{"lastFileRead":"%scustomer-events-enriched-eu-west-1-v2+%d+%010d.json","fileOffset":"%d","eof":"false"}`, folder, p, 1234*(round+1)+i, 4711+round))
		}
	}
	for i := range 4 {
		name := fmt.Sprintf("debezium-mysql-orders-cdc-production-eu-west-1-%02d", i)
		if round == 0 {
			cfg(name, "connector.class", "io.debezium.connector.mysql.MySqlConnector", "tasks.max", "1", "database.hostname", "orders-mysql-primary.production.eu-west-1.internal.example.com",
				"topic.prefix", "orders-cdc-production-eu-west-1", "database.include.list", "orders,order_lines,customers,payments,refunds,shipments,inventory")
		}
		offset(name, `{"server":"orders-cdc-production-eu-west-1"}`,
			fmt.Sprintf(`{"transaction_id":null,"ts_sec":%d,"file":"mysql-bin-changelog.%06d","pos":%d,"gtids":"3E11FA47-71CA-11E1-9E33-C80AA9429562:1-%d,7B3E9F2A-1C4D-11EF-8A1B-0A58A9FEAC02:1-%d","row":1,"server_id":223344,"event":2}`,
				ts/1000, 123+round, 987654321+1000*round, 5000+round, 8100+round))
	}
	for i := range 6 {
		name := fmt.Sprintf("elasticsearch-sink-customer-events-enriched-eu-west-1-%02d", i)
		if round == 0 {
			cfg(name, "connector.class", "io.confluent.connect.elasticsearch.ElasticsearchSinkConnector", "tasks.max", "6", "topics", wideSinkTopic,
				"connection.url", "https://search-customer-events-eu-west-1-abcdefghijklmnopqrstuvwxyz.eu-west-1.es.amazonaws.com:443")
		}
		var os []kadm.Offset
		for p := range int32(6) {
			os = append(os, kadm.Offset{Topic: wideSinkTopic, Partition: p, At: int64(1000*(round+1) + i)})
		}
		defer c.commit("connect-"+name, os...) // after the configs
	}
	c.produce(recs...)
	return names
}

// fits fails the test for every line of out wider than 120 columns.
func fits(t *testing.T, what, out string) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if n := len([]rune(l)); n > lineWidth {
			t.Errorf("%s: a line of %d columns: %s", what, n, l)
		}
	}
}

// TestTextFitsWithRealData: every command's text output, run on offsets
// that real plugins write (JDBC, S3 source, Debezium MySQL with GTIDs),
// 30 connectors with long names and long config values, stays within 120
// columns on stdout and stderr: list, show, diff (two snapshots, and
// live), check, verify, the restore's plan, the restore, the drill, the
// --create-connectors dry run and the output of a restore that failed
// after it wrote. (Issue 42: a JDBC plan line reached 145 columns, the
// created list 377.)
func TestTextFitsWithRealData(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	wide := c.wideConnectors(0)
	c.stopAll()
	a := c.snapshot()
	c.wideConnectors(1)
	b := c.snapshot()

	for _, args := range [][]string{
		{"list"},
		{"show", a},
		{"show", b, "--connector", wide[0], "--connector", wide[len(wide)-1]},
		{"diff", a, b},
		{"diff", a, "--live"},
		{"verify"},
		{"restore", a, "--dry-run"},
		{"restore", a},
		{"drill", b},
	} {
		code, out, errs := c.run(args...)
		if code != exitOK {
			t.Errorf("%s: exit %d\n%s\n%s", strings.Join(args, " "), code, out, errs)
		}
		fits(t, strings.Join(args, " "), out+errs)
		if args[0] == "restore" && !strings.Contains(out, `"incrementing":`) {
			t.Errorf("%s: no JDBC offset in its plan:\n%s", strings.Join(args, " "), out)
		}
	}
	code, out, errs := c.run("check")
	fits(t, "check", out+errs)
	t.Logf("check: exit %d", code)

	// Into another cluster with no connectors: the dry run, then
	// a run whose sink commits fail once the source offsets are written.
	dst := newCluster(t, nil, kfake.ClusterID("dr-eu-west-1"))
	dst.store = c.store
	ctx := context.Background()
	if err := connectdemo.CreateTopics(ctx, dst.cl, connectdemo.DefaultTopics()); err != nil {
		t.Fatal(err)
	}
	if _, err := dst.adm.CreateTopic(ctx, 6, 1, nil, wideSinkTopic); err != nil {
		t.Fatal(err)
	}
	srv := dst.startConnect(connectsim.Options{Plugins: []connectsim.Plugin{
		{Class: "io.confluent.connect.jdbc.JdbcSourceConnector", Type: "source", Version: "10.8.0"},
		{Class: "io.confluent.connect.s3.source.S3SourceConnector", Type: "source", Version: "2.6.1"},
		{Class: "io.debezium.connector.mysql.MySqlConnector", Type: "source", Version: "2.7.3.Final"},
		{Class: "io.confluent.connect.elasticsearch.ElasticsearchSinkConnector", Type: "sink", Version: "14.1.1"},
	}})
	args := []string{"restore", b, "--create-connectors", "--connect-url", srv.URL, "--allow-other-cluster"}
	for _, n := range wide {
		args = append(args, "--connector", n)
	}
	out, errs = dst.mustRun(exitOK, append(args, "--dry-run")...)
	fits(t, "restore --create-connectors --dry-run", out+errs)
	if !strings.Contains(out, "would create 30 connectors") {
		t.Errorf("the dry run names no connectors to create:\n%s", out)
	}
	var commitsWork atomic.Bool
	dst.kc.ControlKey(int16(kmsg.OffsetCommit), func(req kmsg.Request) (kmsg.Response, error, bool) {
		dst.kc.KeepControl()
		if commitsWork.Load() {
			return nil, nil, false // kfake answers
		}
		r := req.(*kmsg.OffsetCommitRequest)
		resp := r.ResponseKind().(*kmsg.OffsetCommitResponse)
		for _, rt := range r.Topics {
			st := kmsg.NewOffsetCommitResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewOffsetCommitResponseTopicPartition()
				sp.Partition = rp.Partition
				sp.ErrorCode = kerr.UnknownServerError.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	out, errs = dst.mustRun(exitError, args...)
	// Its error fits too, each command it advises on lines of its own
	// (a command broken at a space and pasted a line at a time would run
	// its first line alone: a restore without its --dry-run).
	fits(t, "restore --create-connectors (failed)", out+errs)
	if !strings.Contains(out, "created: 30 connectors") || !strings.Contains(flat(errs), "to roll back") {
		t.Errorf("the failed restore names no connectors created or no roll back:\n%s\n%s", out, errs)
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("the failed restore:\n%s\n%s", out, errs)
	}
	failedRestoreAdvice(t, dst, errs, &commitsWork)
}

// failedRestoreAdvice runs, as printed, the commands the error of the
// failed restore advises (errs): its two dry runs (the same restore
// again, the undo) write nothing and exit 0; once commits work again, the
// same restore again restores and verifies.
func failedRestoreAdvice(t *testing.T, dst *cluster, errs string, commitsWork *atomic.Bool) {
	t.Helper()
	cmds := printedCommands(t, errs, "offsetkeeper")
	if len(cmds) != 4 {
		t.Fatalf("%d commands printed, want 4 (the restore again, the undo, each with its dry run): %q", len(cmds), cmds)
	}
	again, againDry, undoDry := cmds[0], cmds[1], cmds[3]
	if againDry != again+" --dry-run" || undoDry != cmds[2]+" --dry-run" {
		t.Fatalf("not the restore again and the undo, each with its dry run: %q", cmds)
	}
	for _, c := range []string{againDry, undoDry} {
		code, out, errs := dst.runPrinted(c)
		fits(t, "printed dry run", out+errs)
		if code != exitOK || !strings.Contains(out, "restore plan: ") {
			t.Errorf("%s: exit %d\n%s\n%s", c, code, out, errs)
		}
	}
	commitsWork.Store(true)
	code, out, errs := dst.runPrinted(again)
	if code != exitOK || !strings.Contains(out, "verified: ") {
		t.Errorf("%s: exit %d\n%s\n%s", again, code, out, errs)
	}
}

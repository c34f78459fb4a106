package main

import (
	"context"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// runKafkaConfigsPrinted runs a kafka-configs.sh --alter of a topic's
// configs as printed, with kadm in place of the Java tool: against the
// brokers its --bootstrap-server names. A placeholder such as <brokers>
// fails the test (in a shell it is a redirection).
func runKafkaConfigsPrinted(t *testing.T, cmd string) {
	t.Helper()
	args := strings.Fields(cmd)
	if len(args) == 0 || args[0] != "kafka-configs.sh" {
		t.Fatalf("not a kafka-configs.sh command: %q", cmd)
	}
	var bootstrap, entityType, name string
	var alter bool
	var set []kadm.AlterConfig
	for i := 1; i < len(args); i++ {
		a := args[i]
		if strings.ContainsAny(a, "<>") {
			t.Fatalf("a placeholder in a printed command: %q in %s", a, cmd)
		}
		value := func() string {
			i++
			if i >= len(args) {
				t.Fatalf("%s without a value: %s", a, cmd)
			}
			return args[i]
		}
		switch a {
		case "--alter":
			alter = true
		case "--bootstrap-server":
			bootstrap = value()
		case "--entity-type":
			entityType = value()
		case "--entity-name":
			name = value()
		case "--add-config":
			for _, kv := range strings.Split(value(), ",") {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					t.Fatalf("--add-config without =: %s", cmd)
				}
				set = append(set, kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: kadm.StringPtr(v)})
			}
		default:
			t.Fatalf("an argument kafka-configs.sh does not take here: %q in %s", a, cmd)
		}
	}
	if !alter || entityType != "topics" || name == "" || len(set) == 0 {
		t.Fatalf("not an --alter of a topic's configs: %s", cmd)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(bootstrap, ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	rs, err := kadm.NewClient(cl).AlterTopicConfigs(context.Background(), set, name)
	if err == nil {
		_, err = rs.On(name, nil)
	}
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
}

// TestOffsetsTopicNotCompactedWarnsAndFixAsPrinted: someone sets the
// offsets topic's cleanup.policy to delete while the workers run (Connect
// checks it only when a worker starts, so nothing else says so), and
// Kafka starts deleting offsets by age. The snapshot stores what is left
// and warns, with the kafka-configs.sh command that sets the policy back;
// a restore into that topic is refused with the same command, the brokers
// filled in. Pasted, the command fixes it: the next snapshot does not warn.
func TestOffsetsTopicNotCompactedWarnsAndFixAsPrinted(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	id := c.snapshot()
	topic := snapshot.DefaultOffsetsTopic
	rs, err := c.adm.AlterTopicConfigs(context.Background(), []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "cleanup.policy", Value: kadm.StringPtr("delete")}}, topic)
	if err == nil {
		_, err = rs.On(topic, nil)
	}
	if err != nil {
		t.Fatalf("set cleanup.policy=delete: %v", err)
	}

	_, warn := c.mustRun(0, "snapshot")
	if !strings.Contains(flat(warn), `offsets topic "`+topic+`" has cleanup.policy=delete`) || !strings.Contains(flat(warn), "refuses to start") {
		t.Fatalf("the snapshot does not warn of the policy:\n%s", warn)
	}
	for _, l := range strings.Split(warn, "\n") {
		if len([]rune(l)) > lineWidth {
			t.Errorf("a line of %d columns: %q", len([]rune(l)), l)
		}
	}
	fix := pasted(warn, "kafka-configs.sh")
	if !strings.Contains(fix, "--bootstrap-server "+c.brokers+" ") {
		t.Fatalf("no kafka-configs.sh command with the brokers on a line of its own in:\n%s", warn)
	}

	// A bad reset, then a restore into the topic: refused, with the same
	// fix and no placeholder.
	c.stopConnectors(connectdemo.ConnMySQL)
	reset := &kgo.Record{Topic: topic, Key: []byte(`["` + connectdemo.ConnMySQL + `",{"server":"server1"}]`), Value: []byte(`{"file":"mysql-bin.000001","pos":4}`)}
	if err := c.cl.ProduceSync(context.Background(), reset).FirstErr(); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := c.run("restore", id, "--connector", connectdemo.ConnMySQL)
	if code != exitRefused || !strings.Contains(flat(out+errOut), "cleanup.policy=delete") {
		t.Fatalf("restore into the delete-policy topic: exit %d, want %d with the policy named\n%s\n%s", code, exitRefused, out, errOut)
	}
	if all := flat(out + errOut); strings.Contains(all, "<brokers>") || !strings.Contains(all, "kafka-configs.sh --bootstrap-server "+c.brokers+" ") {
		t.Errorf("the refusal's fix lacks the brokers:\n%s\n%s", out, errOut)
	}

	runKafkaConfigsPrinted(t, fix)
	if _, warn = c.mustRun(0, "snapshot"); strings.Contains(warn, "cleanup.policy") {
		t.Errorf("after the printed fix, the snapshot still warns:\n%s", warn)
	}
	c.mustRun(0, "restore", id, "--connector", connectdemo.ConnMySQL)
}

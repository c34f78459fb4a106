package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
)

// strimziWorkerID is what a Strimzi Connect pod advertises: the pod's DNS
// name through the headless service, port 8083.
const strimziWorkerID = "my-connect-connect-0.my-connect-connect.kafka.svc:8083"

// TestRestoreStopConnectorsRefusedOnStrimzi: on workers that answer as a
// Strimzi KafkaConnect's pods do, --stop-connectors refuses before it
// stops or writes anything (the operator would undo the stop) and prints
// the kubectl commands; --not-strimzi-managed goes ahead.
func TestRestoreStopConnectorsRefusedOnStrimzi(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	id := c.snapshot()
	c.rewrite(connectdemo.ConnMySQL, `{"file":"mysql-bin.000009","pos":4}`)
	srv := c.startConnect(connectsim.Options{WorkerID: strimziWorkerID})
	ends := c.ends(offsetsTopics()...)
	stored := c.storeIDs()

	args := []string{"restore", id, "--connector", connectdemo.ConnMySQL, "--stop-connectors", "--resume", "--connect-url", srv.URL}
	for _, extra := range [][]string{nil, {"--dry-run"}, {"--force"}} {
		_, stderr := c.mustRun(3, append(slices.Clone(args), extra...)...)
		wantLines(t, "stderr", stderr,
			`--stop-connectors: these Connect workers belong to the Strimzi KafkaConnect "my-connect" (worker `+strimziWorkerID+` is the pod of a Strimzi KafkaConnect)`,
			"nothing was stopped or written",
			`kubectl -n kafka patch kafkaconnector inventory-connector --type merge -p '{"spec":{"state":"stopped"}}'`,
			`kubectl -n kafka wait kafkaconnector/inventory-connector --for=jsonpath='{.status.connectorStatus.connector.state}'=STOPPED`,
			`kubectl -n kafka patch kafkaconnector inventory-connector --type merge -p '{"spec":{"state":"running"}}'`,
			"run again with --not-strimzi-managed")
	}
	for _, r := range srv.Requests() {
		if strings.HasPrefix(r, "PUT ") || strings.HasPrefix(r, "PATCH ") {
			t.Errorf("a refused restore sent %s", r)
		}
	}
	if st := c.configStates()[connectdemo.ConnMySQL]; st.Stopped() {
		t.Errorf("a refused restore stopped the connector")
	}
	if got := c.ends(offsetsTopics()...); !sameEnds(got, ends) {
		t.Errorf("a refused restore wrote: ends %v, were %v", got, ends)
	}
	if got := c.storeIDs(); !slices.Equal(got, stored) {
		t.Errorf("a refused restore stored %v, the store held %v", got, stored)
	}

	c.mustRun(2, "restore", id, "--not-strimzi-managed")
	out, _ := c.mustRun(0, append(args, "--not-strimzi-managed")...)
	wantLines(t, "stdout", out, "stopping 1 connector: inventory-connector", "verified: ", "resumed: connector inventory-connector")
}

func sameEnds(a, b map[string]map[int32]int64) bool {
	for t, ps := range a {
		for p, e := range ps {
			if b[t][p] != e {
				return false
			}
		}
	}
	return len(a) == len(b)
}

package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/english"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// runMSK is demo --layout msk-connect: an embedded cluster shaped as
// Amazon MSK Connect leaves it (connectdemo.SeedMSK: three connectors,
// each a worker cluster with its own topic trio, one a sink), a first
// snapshot, and the walk-through of docs/msk-connect.md. MSK Connect has no
// REST API, so there is none here either. It runs until ctx ends.
func (c *demoCmd) runMSK(ctx context.Context) error {
	k, cl, err := c.demoCluster("demo-msk-cluster", c.port)
	if err != nil {
		return err
	}
	defer k.Close()
	defer cl.Close()
	if err := connectdemo.SeedMSK(ctx, cl, 3); err != nil {
		return fmt.Errorf("seed the MSK Connect-shaped cluster: %w", err)
	}
	st, err := c.g.createStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	snap, err := capture.Capture(ctx, cl, capture.Options{ProgramVersion: programVersion(), Reason: snapshot.ReasonManual, Layout: capture.MSKConnect()})
	if err != nil {
		return fmt.Errorf("take first snapshot: %w", err)
	}
	info, err := st.Snapshots().Put(ctx, snap)
	if err != nil {
		return fmt.Errorf("store first snapshot: %w", err)
	}
	brokers := strings.Join(k.ListenAddrs(), ",")
	var b strings.Builder
	fmt.Fprintf(&b, "offsetkeeper demo --layout msk-connect\n  Kafka (kfake, 3 brokers): %s   cluster id demo-msk-cluster\n", brokers)
	b.WriteString("  Amazon MSK Connect's layout: each connector is a worker cluster of its own, with its own topics:\n")
	for _, m := range connectdemo.MSKConnectors {
		kind := "source"
		if m.Sink {
			kind = "sink, group connect-" + m.Name
		}
		fmt.Fprintf(&b, "    %s (%s): %s, %s, %s\n", m.Name, kind, m.Topic("offsets"), m.Topic("configs"), m.Topic("status"))
	}
	b.WriteString("  No Connect REST API (MSK Connect has none): the status topics say what runs.\n")
	fmt.Fprintf(&b, "\nFirst snapshot: %s (%s, %s, %s) in %s\n", info.ID, english.Count(len(snap.Connectors), "connector", "connectors"),
		english.Count(info.SourceKeys, "source key", "source keys"), english.Count(info.SinkGroups, "sink group", "sink groups"), c.g.store)
	storeFlag := ""
	if c.g.store != defaultStore {
		storeFlag = " --store " + restore.ShellQuote(c.g.store)
	}
	mskGuide(&b, demoProgram(os.Args[0]), brokers, storeFlag, info.ID, demoListen(c.port))
	fmt.Fprint(c.stdout, b.String())
	<-ctx.Done()
	c.log.Info("demo stopped")
	return nil
}

// mskGuide writes the walk-through of docs/msk-connect.md on the demo's
// cluster: look around, a bad reset the journal catches, the refusal while
// the status topic says RUNNING, the restore once the connector's workers
// are gone, and the move to a recreated connector's offsets topic. The
// restores name the first snapshot by ID: once the daemon has snapshotted
// the damage, latest is the damage.
func mskGuide(b *strings.Builder, ok, brokers, store, first, listen string) {
	jdbc := connectdemo.MSKConnectors[0]
	k := " --layout msk-connect --brokers " + brokers + store
	badKey := connectdemo.MSKKey(jdbc.Name, `{"protocol":"1","table":"shop.orders"}`)
	statusKey := []byte("status-connector-" + jdbc.Name)
	taskKey := []byte("status-task-" + jdbc.Name + "-0")
	fmt.Fprintf(b, `
Look around, from another terminal in this directory (or set OFFSETKEEPER_LAYOUT=msk-connect):
  %[1]s list%[2]s
  %[1]s show %[3]s%[2]s
  %[1]s daemon%[2]s --schedule "@every 1m" --journal-interval 1s --listen %[14]s
     (every trio followed in one journal; the page at http://%[14]s/)

A bad reset of %[4]s, then the restore (start the daemon above first: its journal catches it):
  1. The mistake: a script writes an offset back to 0 (on the key's murmur2 partition, %[5]d):
       echo '%[6]s|{"incrementing":0}' | kcat -b %[7]s -P -t %[8]s -p %[5]d -K '|'
  2. See it:     %[1]s events%[2]s
  3. Refused while the status topic says RUNNING (MSK Connect has no stop: delete the connector):
       %[1]s restore %[3]s --connector %[4]s%[2]s
  4. Its workers gone, they write UNASSIGNED for the connector and its task (here by hand):
       echo '%[10]s|{"state":"UNASSIGNED","trace":null,"worker_id":"10.0.1.17:8083","generation":3}' | kcat -b %[7]s -P -t %[11]s -p %[9]d -K '|'
       echo '%[12]s|{"state":"UNASSIGNED","trace":null,"worker_id":"10.0.1.17:8083","generation":3}' | kcat -b %[7]s -P -t %[11]s -p %[13]d -K '|'
  5. Created again, MSK Connect gives it new topics: carry its offsets to the offsets topic it will
     be created with (AWS's recipe; by ID: once the daemon has snapshotted the damage, latest is
     the damage). It prints the custom worker configuration line to create it with:
       %[1]s restore %[3]s --connector %[4]s --to-offsets-topic __msk_connect_offsets_%[4]s-recreated%[2]s --dry-run
       %[1]s restore %[3]s --connector %[4]s --to-offsets-topic __msk_connect_offsets_%[4]s-recreated%[2]s
  A connector whose worker configuration already names its offsets topic reads that one again
  when created again: restore it in place, checked first:
       %[1]s restore %[3]s --connector %[4]s%[2]s --dry-run
       %[1]s restore %[3]s --connector %[4]s%[2]s

Walk-through: docs/msk-connect.md. Ctrl-C stops the demo.
`, ok, k, first, jdbc.Name, snapshot.PartitionFor(badKey, 5), badKey, brokers, jdbc.Topic("offsets"), snapshot.PartitionFor(statusKey, 5), statusKey, jdbc.Topic("status"), taskKey, snapshot.PartitionFor(taskKey, 5), listen)
}

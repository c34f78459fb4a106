package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// TestDeletedConnectorUndoWithoutConnect is an incident nobody rehearsed:
// a connector deleted (its config tombstoned, as DELETE /connectors/NAME
// writes it), then its offsets cleaned up, under a daemon started without
// --connect-url. The undo the daemon logs, run as printed, writes the
// offsets back but cannot create the connector: it used to end "verified"
// with the connector still gone, the log, the plan and the page silent
// about it (the page even called the reset restored). Now the log's note,
// the plan's note and the page each say that the connector stays gone and
// what creates it again.
func TestDeletedConnectorUndoWithoutConnect(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	addr := freeAddr(t)
	logs := c.startDaemon("--journal-interval", "1s", "--schedule", "@every 1h", "--listen", addr)
	c.waitJournal(time.Now(), logs)
	conn := connectdemo.ConnMongo
	var keys []*kgo.Record
	for _, o := range c.capture().SourceTable().Collect() {
		if o.Connector == conn {
			keys = append(keys, &kgo.Record{Topic: o.Topic, Key: o.Key}) // a tombstone, as a cleanup writes it
		}
	}
	if len(keys) == 0 {
		t.Fatalf("the demo holds no source offsets of %s", conn)
	}
	cfg := connectdemo.DefaultConfigsTopic
	c.produce(&kgo.Record{Topic: cfg, Key: []byte("connector-" + conn)}, &kgo.Record{Topic: cfg, Key: []byte("target-state-" + conn)})
	c.waitJournal(moment(), logs)
	c.produce(keys...)
	c.waitJournal(moment(), logs)

	line := waitLog(t, logs, `"msg":"reset seen"`, `"kind":"`+snapshot.EventConnectorDeleted+`"`)
	var seen map[string]any
	if err := json.Unmarshal([]byte(line), &seen); err != nil {
		t.Fatal(err)
	}
	undo, _ := seen["undo"].(string)
	if note, _ := seen["note"].(string); !strings.Contains(note, "--create-connectors") || !strings.Contains(note, "--connect-url") {
		t.Errorf("the daemon's reset seen line does not say how the connector comes back: %s", line)
	}
	code, out, errOut := c.runPrinted(undo)
	if code != 0 || !strings.Contains(out, "verified: ") {
		t.Fatalf("%s: exit %d\n%s%s", undo, code, out, errOut)
	}
	text := joinWrapped(out)
	for _, want := range []string{"note: connector " + conn + " has no config here, but the state restored has one: deleted since",
		"add --connect-url with the Connect REST URL, --create-connectors and --resume to this restore"} {
		if !strings.Contains(text, want) {
			t.Errorf("the undo, run as printed, does not say %q:\n%s", want, out)
		}
	}
	if _, ok := snapshotConnector(c.capture(), conn); ok {
		t.Errorf("connector %s has a config again: the test does not show the incident", conn)
	}

	// The page: the reset is not put back while the connector is gone.
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, body, err := httpGet("http://" + addr + "/api/connectors/" + conn)
		var row struct {
			Status string   `json:"status"`
			Why    []string `json:"why"`
		}
		if err == nil && json.Unmarshal([]byte(body), &row) == nil && row.Status != "OK" &&
			strings.Contains(strings.Join(row.Why, "\n"), "but not the connector") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page does not say the connector is still gone: %v\n%s", err, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The page's plan back to just before the deletion says the same,
	// and its restore is the daemon's undo.
	at := strings.Fields(undo)[3]
	_, body, err := httpGet("http://" + addr + "/api/timeline?at=" + at + "&connector=" + conn)
	var tl struct {
		Plan struct {
			Commands struct {
				Run string `json:"run"`
			} `json:"commands"`
			Notes []string `json:"notes"`
		} `json:"plan"`
	}
	if err != nil || json.Unmarshal([]byte(body), &tl) != nil {
		t.Fatalf("the page's plan at %s: %v\n%s", at, err, body)
	}
	if tl.Plan.Commands.Run != undo || !strings.Contains(strings.Join(tl.Plan.Notes, "\n"), "--create-connectors") {
		t.Errorf("the page's plan at %s: run %q (the daemon's undo: %q), notes %q", at, tl.Plan.Commands.Run, undo, tl.Plan.Notes)
	}
}

// joinWrapped joins the lines a note was wrapped on.
func joinWrapped(s string) string { return strings.ReplaceAll(s, "\n  ", " ") }

// snapshotConnector is connector name of s when it has a config.
func snapshotConnector(s *snapshot.Snapshot, name string) (snapshot.Connector, bool) {
	c, ok := s.Connector(name)
	return c, ok && c.HasConfig
}

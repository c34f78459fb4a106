package main

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/restore"
)

// TestPagePlanIsTheCLIs: for the same moment and connector, the restore
// plan the page shows (/api/timeline?at=&connector=) counts exactly what
// restore --at --dry-run plans, connector by connector and for every
// connector at once, after a bad reset that rewrites, tombstones and adds
// source offsets and rewinds sink offsets. Both are restore's plan: the
// page's over the journal's newest state, the CLI's over the live cluster,
// which the journal has caught up with.
func TestPagePlanIsTheCLIs(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	addr := freeAddr(t)
	logs := c.startDaemon("--journal-interval", pageJournalInterval, "--schedule", "@every 1h", "--listen", addr)
	c.waitJournal(time.Now(), logs)
	before := moment()
	c.badReset()
	c.waitJournal(moment(), logs)
	at := before.UTC().Format(time.RFC3339Nano)

	for _, conn := range []string{connectdemo.ConnJDBC, connectdemo.ConnMongo, connectdemo.ConnMySQL, connectdemo.ConnEOS, connectdemo.ConnSinkS3, ""} {
		args := []string{"restore", "--at", at, "--dry-run", "--output", "json"}
		if conn != "" {
			args = append(args, "--connector", conn)
		}
		out, _ := c.mustRun(0, args...)
		var doc restore.Document
		if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Plan == nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		cli := doc.Plan.Counts
		t.Logf("connector %q: restore --dry-run plans %+v", conn, cli)
		if conn == "" && cli.SourceWrites+cli.Tombstones+cli.SinkCommits == 0 {
			t.Fatalf("the CLI plans nothing to undo the reset: %+v", cli)
		}

		// The page reads the store through a cache: it may show the state
		// of a moment ago for a second or two, never another plan.
		u := "http://" + addr + "/api/timeline?at=" + url.QueryEscape(at) + "&connector=" + url.QueryEscape(conn)
		var page restore.CountsDocument
		deadline := time.Now().Add(30 * time.Second)
		for {
			var tl struct {
				Plan struct {
					Counts *restore.CountsDocument `json:"counts"`
					Error  string                  `json:"error"`
				} `json:"plan"`
			}
			getJSON(t, u, &tl)
			if tl.Plan.Error != "" {
				t.Fatalf("%s: %s", u, tl.Plan.Error)
			}
			if tl.Plan.Counts != nil {
				page = *tl.Plan.Counts
				if page == cli {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("connector %q: the page plans %+v, restore --dry-run %+v", conn, page, cli)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
	"github.com/offsetkeeper/offsetkeeper/restore"
)

// standbyClusterID is the cluster id of demo --standby's standby.
const standbyClusterID = "demo-standby"

// standbyAlias and standbyTarget are MirrorMaker 2's aliases of the
// demo's primary and standby.
const standbyAlias, standbyTarget = "primary", "standby"

// standbyKillFile is the file whose creation makes demo --standby kill
// its primary cluster (a disaster to fail over from).
func standbyKillFile(port int) string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("offsetkeeper-demo-%d.kill-primary", port))
}

// runStandby is demo --standby: the demo's primary (its connectors and
// Connect REST API, churning) and a standby cluster (ports port+3..+5, its
// Connect REST API on rest-port+1) with Connect's worker topics and
// MirrorMaker 2's copies of the data topics, to rehearse a failover on
// (docs/standby.md). Creating the kill file it prints kills the primary.
func (c *demoCmd) runStandby(ctx context.Context) error {
	w, err := c.start(ctx)
	if err != nil {
		return err
	}
	defer w.close()
	k, bcl, err := c.demoCluster(standbyClusterID, c.port+3)
	if err != nil {
		return err
	}
	defer k.Close()
	defer bcl.Close()
	if err := connectdemo.CreateTopics(ctx, bcl, connectdemo.Topics{}); err != nil {
		return fmt.Errorf("create Connect's topics on the standby: %w", err)
	}
	if _, err := kadm.NewClient(bcl).CreateTopic(ctx, 5, -1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, connectdemo.EOSOffsetsTopic); err != nil {
		return fmt.Errorf("create %s on the standby: %w", connectdemo.EOSOffsetsTopic, err)
	}
	if _, err := connectdemo.MirrorTopics(ctx, w.cl, bcl, connectdemo.Mirror{SourceAlias: standbyAlias, TargetAlias: standbyTarget,
		Topics: []string{"orders", "clicks", "invoices", "legacy.customers"}, Shift: func(string, int32) int64 { return 100 },
		SyncEvery: 10, Checkpointed: []string{connectdemo.GroupSinkES}}); err != nil {
		return fmt.Errorf("mirror the primary to the standby: %w", err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(c.restPort+1))
	sc, err := connectsim.Start(bcl, connectsim.Options{Addr: addr, WorkerID: "connect-standby-1:8083"})
	if err != nil {
		return fmt.Errorf("serve the standby's Connect REST API on %s: %w; try --rest-port", addr, err)
	}
	defer sc.Close()
	kill := standbyKillFile(c.port)
	os.Remove(kill)
	store := ""
	if c.g.store != defaultStore {
		store = " --store " + restore.ShellQuote(c.g.store)
	}
	standbyGuide(c.stdout, demoProgram(os.Args[0]), standbyDemo{
		primary: strings.Join(w.cluster.ListenAddrs(), ","), primaryConnect: w.connect.URL,
		standby: strings.Join(k.ListenAddrs(), ","), standbyConnect: sc.URL, connectors: len(w.spec.Connectors),
		store: store, listen: demoListen(c.port), kill: kill})

	cctx, stopChurn := context.WithCancel(ctx)
	defer stopChurn()
	churned := make(chan error, 1)
	go func() {
		churn := w.spec
		churn.LiveSinkMember = true
		churned <- connectdemo.ChurnWith(cctx, w.cl, churn, c.churn, connectdemo.ChurnOptions{Leave: w.connect.Changed})
	}()
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			c.log.Info("demo stopped")
			return nil
		case err := <-churned:
			if err != nil && !errors.Is(err, context.Canceled) {
				return fmt.Errorf("keep demo connectors busy: %w", err)
			}
			churned = nil
		case <-t.C:
			if _, err := os.Stat(kill); err != nil || w.cluster == nil {
				continue
			}
			os.Remove(kill)
			stopChurn()
			w.connect.Close()
			w.connect = nil
			w.cluster.Close()
			w.cluster = nil
			fmt.Fprintf(c.stdout, "demo: the primary cluster and its Connect are gone (killed at %s); fail over now\n", time.Now().UTC().Format(time.TimeOnly))
		}
	}
}

// standbyDemo is what the standby guide names.
type standbyDemo struct {
	primary, primaryConnect, standby, standbyConnect string
	connectors                                       int
	store, listen, kill                              string
}

// standbyGuide prints the failover walk-through of demo --standby. Long
// commands are wrapped with shell line continuations, to run as printed.
func standbyGuide(w io.Writer, ok string, s standbyDemo) {
	sb := []string{"--standby-brokers", s.standby, "--standby-connect-url", s.standbyConnect,
		"--standby-translate", "mm2", "--mm2-source-alias", standbyAlias}
	store := strings.Fields(s.store)
	daemonCmd := append(append([]string{ok, "daemon", "--brokers", s.primary}, store...),
		append([]string{"--schedule", `"@every 1h"`, "--journal-interval", "1s", "--listen", s.listen}, sb...)...)
	// The primary's Connect named: failover refuses while it runs connectors
	// (a primary half alive), and says so when it does not answer.
	failover := append(append(append([]string{ok, "failover"}, store...), sb...), "--connect-url", s.primaryConnect)
	fmt.Fprintf(w, `offsetkeeper demo --standby
  primary (kfake, 3 brokers): %[1]s
    Connect REST API %[2]s; %[3]d connectors, the running ones committing new offsets
  standby (kfake, 3 brokers): %[4]s   cluster id %[6]s
    Connect REST API %[5]s: Connect's worker topics, no connectors yet; MirrorMaker 2
    (aliases %[7]s -> %[8]s) copied the data topics to %[7]s.<topic> and checkpointed group
    %[9]s

1. Keep the standby in step (another terminal, in this directory):
%[10]s
  Its connectors appear on the standby STOPPED:
    curl -sS --fail-with-body '%[5]s/connectors?expand=status'
  The lag:  curl -sS --fail-with-body http://%[11]s/api/standby   (the page: http://%[11]s/)
2. A disaster: kill the primary cluster and its Connect:
    touch %[12]s
3. Fail over (the daemon stays fenced; the dry run first):
%[13]s
%[14]s
    curl -sS --fail-with-body '%[5]s/connectors?expand=status'
Ctrl-C stops the demo.
`, s.primary, s.primaryConnect, s.connectors, s.standby, s.standbyConnect, standbyClusterID, standbyAlias, standbyTarget,
		connectdemo.GroupSinkES, wrapCommand(daemonCmd), s.listen, s.kill, wrapCommand(append(failover, "--dry-run")), wrapCommand(failover))
}

// wrapCommand prints words as a shell command indented by four spaces,
// continued with " \" on lines of at most 120 columns (a flag and its
// value stay together).
func wrapCommand(words []string) string {
	var b strings.Builder
	line := "    " + words[0]
	for i := 1; i < len(words); i++ {
		part := words[i]
		if strings.HasPrefix(part, "--") && i+1 < len(words) && !strings.HasPrefix(words[i+1], "--") {
			part += " " + words[i+1]
			i++
		}
		if len(line)+1+len(part)+2 > 120 {
			b.WriteString(line + " \\\n")
			line = "      " + part
			continue
		}
		line += " " + part
	}
	b.WriteString(line)
	return b.String()
}

package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/offsetkeeper/offsetkeeper/daemon"
	"github.com/offsetkeeper/offsetkeeper/restore/drill"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// daemonDrillFlags are the daemon's restore drill settings (see drill.go
// and daemon/drill.go).
type daemonDrillFlags struct {
	schedule   string
	signingKey string
	// verifySchedule is --verify-schedule (daemon_verify.go).
	verifySchedule string
}

func (f *daemonDrillFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.schedule, "drill-schedule", daemon.DefaultDrillSchedule, "when the leader drills the newest full snapshot (restore it into an embedded scratch Kafka, compare with Connect, measure RTO/RPO; see docs/drills.md): a cron spec or descriptor, or off; the first drill runs once the first snapshot is stored. Each drill is a process of its own (this program's drill command), beside the daemon")
	fs.StringVar(&f.verifySchedule, "verify-schedule", daemon.DefaultVerifySchedule, "when the leader re-reads every stored snapshot and journal epoch, as offsetkeeper verify does, in a process of its own: damage to a snapshot no drill reads, or a journal segment deleted under the daemon, is logged (component verify) and counted in offsetkeeper_store_verify_failed; a cron spec or descriptor, or off; the first check runs once the first snapshot is stored")
	fs.StringVar(&f.signingKey, "drill-signing-key", "", "sign the daemon's drill reports with this ed25519 private key (PEM PKCS#8, openssl genpkey -algorithm ed25519)")
}

// validate checks the schedule and the signing key, which each drill
// process reads again (--signing-key).
func (f *daemonDrillFlags) validate() error {
	if f.schedule != daemon.DrillsOff {
		if _, err := daemon.ParseSchedule(f.schedule); err != nil {
			return usagef("--drill-schedule: %v (or off)", err)
		}
	}
	if f.signingKey == "" {
		return nil
	}
	data, err := os.ReadFile(f.signingKey)
	if err != nil {
		return fmt.Errorf("read --drill-signing-key: %w", err)
	}
	if _, err := drill.ParsePrivateKey(data); err != nil {
		return usagef("--drill-signing-key %s: %v", f.signingKey, err)
	}
	return nil
}

// drillsMemStore says why a daemon with a mem:// store cannot drill.
const drillsMemStore = "a mem:// store lives in the daemon's process, and each drill runs in a process of its own: " +
	"give the daemon a store on disk or in a bucket, or --drill-schedule off"

// attachDrills sets d to drill the newest full snapshot of st on the
// schedule, in a child process (daemon_drill_child.go), comparing with
// Connect when --connect-url is given.
func (c *daemonCmd) attachDrills(d *daemon.Daemon, st *store.Store) error {
	if err := c.drill.validate(); err != nil || c.drill.schedule == daemon.DrillsOff {
		return err
	}
	if _, err := c.g.connect.client(); err != nil {
		return err
	}
	memStore := strings.HasPrefix(c.g.store, "mem://")
	if memStore {
		c.log.Warn(drillsMemStore)
	}
	child := &drillChild{env: drillChildEnv(os.Environ(), c.g.fs, c.g.logLevel), signingKey: c.drill.signingKey,
		logOut: c.stderr, log: c.log.With("component", "drill")}
	d.Config.DrillSchedule = c.drill.schedule
	d.Drill = func(ctx context.Context) (*drill.Report, error) {
		if memStore {
			return nil, fmt.Errorf("%w: %s", drill.ErrCannotRun, drillsMemStore)
		}
		id, err := drill.NewestFullID(ctx, st)
		if err != nil {
			return nil, err
		}
		return child.run(ctx, id)
	}
	return nil
}

package main

import (
	"context"
	"crypto/ed25519"
	"flag"
	"fmt"
	"os"

	"github.com/offsetkeeper/offsetkeeper/daemon"
	"github.com/offsetkeeper/offsetkeeper/restore/drill"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// daemonDrillFlags are the daemon's restore drill settings (see drill.go
// and daemon/drill.go).
type daemonDrillFlags struct {
	schedule   string
	signingKey string
}

func (f *daemonDrillFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.schedule, "drill-schedule", daemon.DefaultDrillSchedule, "when the leader drills the newest full snapshot (restore it into an embedded scratch Kafka, compare with Connect, measure RTO/RPO; see docs/drills.md): a cron spec or descriptor, or off; the first drill runs once the first snapshot is stored")
	fs.StringVar(&f.signingKey, "drill-signing-key", "", "sign the daemon's drill reports with this ed25519 private key (PEM PKCS#8, openssl genpkey -algorithm ed25519)")
}

// validate checks the schedule and reads the signing key.
func (f *daemonDrillFlags) validate() (ed25519.PrivateKey, error) {
	if f.schedule != daemon.DrillsOff {
		if _, err := daemon.ParseSchedule(f.schedule); err != nil {
			return nil, usagef("--drill-schedule: %v (or off)", err)
		}
	}
	if f.signingKey == "" {
		return nil, nil
	}
	data, err := os.ReadFile(f.signingKey)
	if err != nil {
		return nil, fmt.Errorf("read --drill-signing-key: %w", err)
	}
	key, err := drill.ParsePrivateKey(data)
	if err != nil {
		return nil, usagef("--drill-signing-key %s: %v", f.signingKey, err)
	}
	return key, nil
}

// attach sets d to drill the newest full snapshot of st on the schedule,
// comparing with Connect when --connect-url is given.
func (c *daemonCmd) attachDrills(d *daemon.Daemon, st *store.Store, opts capture.Options) error {
	key, err := c.drill.validate()
	if err != nil || c.drill.schedule == daemon.DrillsOff {
		return err
	}
	rc, err := c.g.connect.client()
	if err != nil {
		return err
	}
	opts.Progress, opts.Incremental = nil, false
	d.Config.DrillSchedule = c.drill.schedule
	d.Drill = func(ctx context.Context) (*drill.Report, error) {
		req := drill.Request{Options: opts, ToolVersion: "offsetkeeper " + programVersion()}
		if rc == nil {
			req.SkipComplete = "skipped by choice: the daemon has no --connect-url to compare with"
		}
		rep, err := drill.NewestFull(ctx, drill.Env{Store: st, Connect: rc, Log: c.log}, req)
		if err != nil {
			return nil, err
		}
		if _, err := drill.Save(ctx, st, rep, key); err != nil {
			return nil, err
		}
		return rep, nil
	}
	return nil
}

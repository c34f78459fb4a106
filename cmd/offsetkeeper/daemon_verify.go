package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/offsetkeeper/offsetkeeper/daemon"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/restore/drill"
)

// verifyFlags is the verify command's flag set, to tell which of the
// daemon's settings the store check's process takes.
var verifyFlags = sync.OnceValue(func() *flag.FlagSet { return flagsOf(verifyCommand) })

// verifyMemStore says why a daemon with a mem:// store does not check it.
const verifyMemStore = "a mem:// store lives in the daemon's process, and each store check runs in a process of its " +
	"own: the store is not checked (give the daemon a store on disk or in a bucket)"

// attachStoreChecks sets d to re-read every stored snapshot and journal
// epoch on --verify-schedule, in a child process running this program's
// verify command (daemon/storecheck.go): a snapshot decoded whole is a
// snapshot's memory, which the daemon should not keep after.
func (c *daemonCmd) attachStoreChecks(d *daemon.Daemon) error {
	if c.drill.verifySchedule == daemon.VerifyOff {
		return nil
	}
	if _, err := daemon.ParseSchedule(c.drill.verifySchedule); err != nil {
		return usagef("--verify-schedule: %v (or off)", err)
	}
	if strings.HasPrefix(c.g.store, "mem://") {
		c.log.Info(verifyMemStore)
		return nil
	}
	child := &drillChild{env: childEnv(os.Environ(), c.g.fs, verifyFlags(), c.g.logLevel),
		logOut: c.stderr, log: c.log.With("component", "verify")}
	why := pasteable(append([]string{"verify"}, c.g.settingFlags(verifyFlags())...))
	d.Config.VerifySchedule = c.drill.verifySchedule
	d.VerifyStore = func(ctx context.Context) (daemon.StoreCheck, error) {
		chk, err := child.verify(ctx)
		chk.Command = why
		return chk, err
	}
	return nil
}

// pasteable is args as a command for a person to paste, named as this
// program was run.
func pasteable(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = restore.ShellQuote(a)
	}
	return cmp.Or(programName, "offsetkeeper") + " " + strings.Join(q, " ")
}

// verify runs offsetkeeper verify --output json as the daemon's child and
// reads its result: exit 0 (all verified) and 1 (some did not) print it;
// anything else, or exit 1 without a failure in it (a restore that did not
// finish, which the daemon reports itself), is an error quoting the
// child's last lines.
func (dc *drillChild) verify(ctx context.Context) (daemon.StoreCheck, error) {
	cmd, err := dc.commandOf(ctx, []string{"verify", "--output", "json", "--run-by-daemon"})
	if err != nil {
		return daemon.StoreCheck{}, err
	}
	const what = "check every stored snapshot and journal epoch"
	r, err := dc.exec(ctx, cmd, what)
	if err != nil {
		return daemon.StoreCheck{}, err
	}
	var res verifyResult
	if r.code != exitOK && r.code != exitError {
		return daemon.StoreCheck{}, fmt.Errorf("%w: %s: the verify process %d: exit status %d%s", drill.ErrCannotRun, what, r.pid, r.code, r.tail)
	}
	if err := json.Unmarshal(r.out, &res); err != nil {
		return daemon.StoreCheck{}, fmt.Errorf("%s: read the result the verify process %d printed: %v%s", what, r.pid, err, r.tail)
	}
	chk := daemon.StoreCheck{Snapshots: res.Checked, Epochs: len(res.Journal)}
	for _, s := range res.Snapshots {
		if !s.OK {
			chk.Failed = append(chk.Failed, daemon.StoreFailure{Kind: daemon.KindSnapshot, ID: s.ID, Err: s.Error})
		}
	}
	for _, e := range res.Journal {
		if !e.OK {
			chk.Failed = append(chk.Failed, daemon.StoreFailure{Kind: daemon.KindJournalEpoch, ID: e.Epoch, Err: e.Error})
		}
	}
	if r.code == exitError && len(chk.Failed) == 0 {
		return chk, fmt.Errorf("%s: the verify process %d: exit status %d%s", what, r.pid, r.code, r.tail)
	}
	return chk, nil
}

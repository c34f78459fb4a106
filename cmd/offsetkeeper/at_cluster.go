package main

// This file is --from-cluster: which cluster's journal a moment (--at) is
// read from in a store the daemons of two clusters share (a standby's
// after a failover, a failback: docs/standby.md), and the refusal that
// names them when a command cannot tell.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// fromClusterUsage is the help of --from-cluster, for every command that
// reads a state at a moment.
const fromClusterUsage = "with --at, in a store the daemons of several clusters share (docs/standby.md): read the state " +
	"of the Kafka cluster with this `ID` (as list and show print it); default the live cluster's, or the only cluster whose journal covers the moment"

// registerFromCluster adds --from-cluster to fs.
func registerFromCluster(fs *flag.FlagSet, p *string) {
	fs.StringVar(p, "from-cluster", "", fromClusterUsage)
}

// checkFromCluster refuses --from-cluster without --at: a snapshot by
// ID is one cluster's already.
func checkFromCluster(from string, at bool) error {
	if from != "" && !at {
		return usagef("--from-cluster picks whose journal a moment is read from: give it with --at TIME")
	}
	return nil
}

// sharedStore reports whether the store holds snapshots of more than one
// cluster: a moment then needs a cluster (store.StateAtFor).
func sharedStore(ctx context.Context, st *store.Store) (bool, error) {
	ids, err := st.Snapshots().Clusters(ctx)
	return len(ids) > 1, err
}

// liveCluster is the ID of the cluster the settings' brokers reach, read
// only when the store is shared (a store of one cluster reads as always,
// without asking the brokers); "" then.
func (g *globals) liveCluster(ctx context.Context, st *store.Store) (string, error) {
	if shared, err := sharedStore(ctx, st); err != nil || !shared {
		return "", err
	}
	cfg, _, err := g.kafkaSettings()
	if err != nil {
		return "", err
	}
	cl, err := cfg.Connect(ctx)
	if err != nil {
		return "", fmt.Errorf("read the live cluster's ID, to read the moment from its journal: %w", err)
	}
	defer cl.Close()
	md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	if err != nil {
		return "", fmt.Errorf("read the live cluster's ID, to read the moment from its journal: %w; or name the cluster with --from-cluster ID", err)
	}
	return md.Cluster, nil
}

// clusterChoice is err, an *store.AmbiguousClusterError of the moment
// raw (--at raw), with the commands that choose each cluster: this
// command again with --from-cluster, its moment absolute. Other errors
// are returned as they are.
func (g *globals) clusterChoice(err error, raw string, positional []string) error {
	var amb *store.AmbiguousClusterError
	if !errors.As(err, &amb) {
		return err
	}
	var cmds []string
	for _, c := range amb.Clusters {
		words := g.againWords(positional, raw, amb.At, "--from-cluster", c.Cluster)
		if words == nil {
			return fmt.Errorf("%w: run it again with --from-cluster ID (and the secret settings it was given)", err)
		}
		cmds = append(cmds, strings.Join(words, " "))
	}
	return &restore.AdvisedError{Err: fmt.Errorf("%w: %s", err, strings.Join(cmds, "; or: ")), Commands: cmds}
}

// againWords is this command's line as shell words: the program, the
// command, positional, and every flag given on the command line, each
// --at moment absolute (raw as at; a duration back from now as of now),
// then extra; nil when a secret was given on the command line (a printed
// command never carries one).
func (g *globals) againWords(positional []string, raw string, at time.Time, extra ...string) []string {
	if g.fs == nil {
		return nil
	}
	words := []string{programName, g.command}
	for _, p := range positional {
		words = append(words, restore.ShellQuote(p))
	}
	secret := false
	now := time.Now()
	g.fs.VisitAll(func(f *flag.Flag) {
		switch {
		case !g.cmdLine[f.Name]:
		case secretFlags[f.Name]:
			secret = true
		case f.Name == "encrypt-key" && strings.HasPrefix(f.Value.String(), "base64key://"):
			secret = true
		default:
			if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
				words = append(words, "--"+f.Name+"="+f.Value.String())
				return
			}
			values := []string{f.Value.String()}
			if l, ok := f.Value.(*listFlag); ok {
				values = *l
			}
			for _, v := range values {
				if f.Name == "at" {
					v = absoluteMoment(v, raw, at, now)
				}
				words = append(words, "--"+f.Name, restore.ShellQuote(v))
			}
		}
	})
	if secret {
		return nil
	}
	return append(words, extra...)
}

// absoluteMoment is --at v as a command run later must give it: raw's
// resolved moment at, another duration back from now as of now, an RFC
// 3339 moment as it is.
func absoluteMoment(v, raw string, at, now time.Time) string {
	if v == raw {
		return restore.FormatMoment(at)
	}
	if _, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return v
	}
	if t, err := snapshot.ParseMoment(v, now); err == nil {
		return restore.FormatMoment(t)
	}
	return v
}

// stateAt is the state restore --at restores: of --from-cluster, else of
// the live cluster in a shared store (store.StateAtFor).
func (c *restoreCmd) stateAt(ctx context.Context, w io.Writer, st *store.Store) (*snapshot.Snapshot, error) {
	pick := store.ClusterPick{From: c.fromCluster}
	if pick.From == "" {
		live, err := c.g.liveCluster(ctx, st)
		if err != nil {
			return nil, err
		}
		pick.Live = live
	}
	snap, err := c.g.stateAt(ctx, w, st, c.at, pick, nil)
	if err != nil {
		return nil, err
	}
	if shared, err := sharedStore(ctx, st); err == nil && shared {
		// The commands the restore prints read the same cluster's journal.
		c.atCluster = snap.ClusterID
	}
	return snap, nil
}

// pick is whose journal diff reads its --at moments from: --from-cluster;
// else, in a shared store, the cluster of the snapshot it is compared with
// (diff ID --at T), or the live cluster's (diff --at T --live); else none
// (diff --at T1 --at T2), which refuses a moment two clusters' journals
// cover.
func (c *diffCmd) pick(ctx context.Context, st *store.Store, named []*snapshot.Snapshot) (store.ClusterPick, error) {
	pick := store.ClusterPick{From: c.fromCluster}
	switch {
	case pick.From != "":
	case len(named) == 1:
		pick.Live = named[0].ClusterID
	case len(c.at) == 1:
		live, err := c.g.liveCluster(ctx, st)
		if err != nil {
			return pick, err
		}
		pick.Live = live
	}
	return pick, nil
}

// sharedJournalNote is list's note under the journal table of a store
// the daemons of several clusters share: whose each epoch is, since
// --at reads one cluster's; "" in a store of one cluster.
func sharedJournalNote(ctx context.Context, st *store.Store, cov []snapshot.Coverage) string {
	infos, err := st.Snapshots().List(ctx)
	if err != nil {
		return ""
	}
	of := map[string]string{}
	for _, i := range infos {
		of[i.ID] = i.ClusterID
	}
	byCluster := map[string][]string{}
	var order []string
	for _, c := range cov {
		id := of[c.Epoch]
		if id == "" {
			continue
		}
		if byCluster[id] == nil {
			order = append(order, id)
		}
		byCluster[id] = append(byCluster[id], c.Epoch)
	}
	if len(order) < 2 {
		return ""
	}
	var parts []string
	for _, id := range order {
		parts = append(parts, fmt.Sprintf("cluster %s: %s", id, strings.Join(byCluster[id], ", ")))
	}
	return "the journal holds epochs of " + strconv.Itoa(len(order)) + " clusters (a moment is read from one: the live " +
		"cluster's, or --from-cluster ID): " + strings.Join(parts, "; ")
}

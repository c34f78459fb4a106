package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// A Connect worker reads its offsets topic read_committed only with
// exactly.once.source.support=enabled; otherwise (the default) it reads
// read_uncommitted and applies the records of aborted transactions too.
// diff --live reads the live offsets the way the worker does, when its
// setting is known (--worker-config, or the worker's REST API), and when
// not, compares both views and says where they differ.

// workerRead is how the workers read their offsets topics, as far as known.
type workerRead struct {
	known     bool
	committed bool   // exactly.once.source.support=enabled
	from      string // where it was learned, or why it is not known
}

// workerRead learns the workers' exactly.once.source.support: from
// --worker-config when given, else by asking the worker of rc (nil: no
// Connect REST API given).
func (g *globals) workerRead(ctx context.Context, rc *connectrest.Client) workerRead {
	if known, committed := g.workerReadsCommitted(); known {
		return workerRead{known: true, committed: committed, from: "--worker-config " + g.workerConfig}
	}
	if g.workerConfig != "" {
		return workerRead{from: "--worker-config " + g.workerConfig + " could not be read"}
	}
	if rc == nil {
		return workerRead{from: "give --worker-config or --connect-url to read as the workers do"}
	}
	eos, err := rc.WorkerExactlyOnceSource(ctx)
	switch {
	case err != nil:
		return workerRead{from: fmt.Sprintf("asking the worker failed: %v", err)}
	case !eos.Known:
		return workerRead{from: eos.Why}
	}
	return workerRead{known: true, committed: eos.Enabled, from: eos.Why}
}

// String names how the workers read.
func (r workerRead) String() string {
	switch {
	case !r.known:
		return "unknown whether the workers have exactly-once source support (" + r.from + ")"
	case r.committed:
		return "the workers read read_committed (exactly.once.source.support=enabled; " + r.from + ")"
	}
	return "the workers read read_uncommitted (exactly.once.source.support not enabled; " + r.from + ")"
}

// readAsWorkers makes the live side b of a diff what the workers read: known
// to read read_committed, b is (a capture reads read_committed); known to
// read read_uncommitted, the values of keys whose last record is of an
// aborted transaction are taken as such a worker reads them, and a note
// says how many; unknown, b stays read_committed and a note per topic says
// where the two views differ. Notes go to w.
func readAsWorkers(ctx context.Context, w io.Writer, cl *kgo.Client, wr workerRead, b *snapshot.Snapshot, scope []string) {
	if wr.known && wr.committed {
		return
	}
	if !wr.known {
		for _, n := range workerViewNotes(ctx, cl, wr, offsetsTopicsOf(b), scope) {
			fmt.Fprintln(w, wrapNote("note: "+n))
		}
		return
	}
	for _, t := range offsetsTopicsOf(b) {
		diffs, err := restore.CompareViews(ctx, cl, t, inScope(scope))
		if err != nil {
			fmt.Fprintln(w, wrapNote(fmt.Sprintf("warning: could not read topic %s as the workers do (read_uncommitted): %v; "+
				"the live side is as read_committed readers see it", t, err)))
			continue
		}
		if n := applyWorkerView(b, diffs, scope); n > 0 {
			fmt.Fprintln(w, wrapNote(fmt.Sprintf("note: %s of topic %s read as the workers read them: the last record of each is of an aborted "+
				"transaction, which read_committed readers do not see; %s; first: %s", plural(n, "key", "keys"), t, wr, diffs[0])))
		}
	}
}

// applyWorkerView sets, in b, the value of each difference's key to the
// read_uncommitted one (removing a key absent for such a reader, adding
// one present only for it), for keys of the connectors of scope (nil:
// every connector). It returns how many keys it changed.
func applyWorkerView(b *snapshot.Snapshot, diffs []restore.ViewDifference, scope []string) int {
	type at struct {
		topic string
		part  int32
		key   string
	}
	if len(diffs) == 0 {
		return 0
	}
	// A changed copy of b's offsets (a capture's, which may be shared).
	offs := b.SourceTable().Collect()
	index := map[at]int{}
	for i, o := range offs {
		index[at{o.Topic, o.Partition, string(o.Key)}] = i
	}
	changed, names := 0, map[string]string{}
	var drop []int
	for _, d := range diffs {
		name, raw, err := snapshot.ParseSourceKey(d.Key, names)
		if err != nil || (len(scope) > 0 && !slices.Contains(scope, name)) {
			continue
		}
		i, ok := index[at{d.Topic, d.Partition, string(d.Key)}]
		switch {
		case d.Uncommitted == nil && ok:
			drop = append(drop, i)
		case d.Uncommitted == nil:
			continue
		case ok:
			offs[i].Value = snapshot.Bytes(d.Uncommitted)
			offs[i].SourceOffset = jsonObject(d.Uncommitted)
		default:
			offs = append(offs, snapshot.SourceOffset{Topic: d.Topic, Partition: d.Partition, Key: snapshot.Bytes(d.Key),
				Value: snapshot.Bytes(d.Uncommitted), Connector: name, SourcePartition: raw, SourceOffset: jsonObject(d.Uncommitted)})
		}
		changed++
	}
	slices.Sort(drop)
	for j := len(drop) - 1; j >= 0; j-- {
		offs = slices.Delete(offs, drop[j], drop[j]+1)
	}
	slices.SortStableFunc(offs, func(x, y snapshot.SourceOffset) int {
		if c := strings.Compare(x.Topic, y.Topic); c != 0 {
			return c
		}
		if x.Partition != y.Partition {
			return int(x.Partition - y.Partition)
		}
		return bytes.Compare(x.Key, y.Key)
	})
	b.SetSourceOffsets(offs)
	return changed
}

// jsonObject is v as a decoded offset map when it is a JSON object.
func jsonObject(v []byte) []byte {
	if len(v) > 0 && v[0] == '{' && json.Valid(v) {
		return v
	}
	return nil
}

// workerViewNotes says, per topic, where the workers read otherwise than
// read_committed readers (snapshots, workers with exactly-once source
// support): nothing when they read read_committed; known to read
// read_uncommitted, the keys they read from an aborted transaction;
// unknown, where the two views differ.
func workerViewNotes(ctx context.Context, cl *kgo.Client, wr workerRead, topics, scope []string) []string {
	if wr.known && wr.committed {
		return nil
	}
	if !wr.known {
		notes := viewNotes(ctx, cl, topics, scope)
		for i := range notes {
			notes[i] += "; " + wr.String()
		}
		return notes
	}
	var notes []string
	for _, t := range topics {
		diffs, err := restore.CompareViews(ctx, cl, t, inScope(scope))
		if err != nil {
			notes = append(notes, fmt.Sprintf("could not read topic %s as the workers do (read_uncommitted): %v", t, err))
			continue
		}
		if len(diffs) > 0 {
			notes = append(notes, fmt.Sprintf("the workers read %s of topic %s from an aborted transaction, which snapshots and read_committed "+
				"readers do not see; %s; first: %s", plural(len(diffs), "key", "keys"), t, wr, diffs[0]))
		}
	}
	return notes
}

// inScope keeps the offsets topic keys of the connectors of scope (nil:
// every key): a command scoped to some connectors notes only theirs.
func inScope(scope []string) func(key []byte) bool {
	if len(scope) == 0 {
		return nil
	}
	return func(key []byte) bool {
		name, ok := capture.KeyConnector(key)
		return ok && slices.Contains(scope, string(name))
	}
}

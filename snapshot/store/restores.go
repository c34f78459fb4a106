package store

// This file is the restore intents: what a restore is about to do,
// stored before it changes anything in the cluster, so that a restore
// killed or interrupted part way leaves a record the next command finds.
// One small object per restore, overwritten as the restore goes on and
// deleted once it is done:
//
//	restores/<ID>.json   {"format":"offsetkeeper-restore","version":1,"id":"<ID>",...}
//
// Writing, overwriting or deleting one object is atomic on every backend,
// so an intent is either there, whole, or not. It is plain JSON even in an
// encrypted store: it holds no offsets, only names (connectors, topics,
// snapshot IDs), states and times. An intent is no lock: two restores
// each write their own, and nothing waits on one.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"gocloud.dev/blob"
)

const (
	intentPrefix  = "restores/"
	intentSuffix  = ".json"
	intentFormat  = "offsetkeeper-restore"
	maxIntentSize = 4 << 20
)

// Stages of a RestoreIntent.
const (
	// IntentStarted: the restore is about to make its first change to the
	// cluster (stop the connectors named in Stopped, create connectors);
	// nothing is written to the offsets yet.
	IntentStarted = "started"
	// IntentWriting: the undo snapshot is stored and the restore is about
	// to write the offsets topics named in Topics.
	IntentWriting = "writing"
	// IntentFailed: the restore failed after it changed the cluster and
	// left something for a later run (connectors stopped, a write to
	// check).
	IntentFailed = "failed"
)

// RestoreIntent is what one restore is about to do: found by a later
// command, it says what to check and what to put back.
type RestoreIntent struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// ID names the restore (and its object); Snapshot is the ID of the
	// snapshot restored, ClusterID the Kafka cluster written to.
	ID        string    `json:"id"`
	Snapshot  string    `json:"snapshot"`
	ClusterID string    `json:"cluster_id"`
	Started   time.Time `json:"started"`
	// Host and PID are the process that runs the restore: a later command
	// on the same host tells a restore still running from a dead one.
	Host string `json:"host,omitempty"`
	PID  int    `json:"pid,omitempty"`
	// Stage is IntentStarted, IntentWriting or IntentFailed.
	Stage string `json:"stage"`
	// Undo is the undo snapshot's ID, once stored.
	Undo string `json:"undo,omitempty"`
	// Topics are the offsets topics the restore writes, each in one
	// transaction of TransactionalID.
	Topics []IntentTopic `json:"topics,omitempty"`
	// Connectors are those whose keys it writes; Unowned says it writes
	// keys no connector owns too.
	Connectors []string `json:"connectors,omitempty"`
	Unowned    bool     `json:"unowned,omitempty"`
	// Stopped are the connectors it stops (recorded before it stops
	// them), with the state each was in.
	Stopped []IntentStopped `json:"stopped,omitempty"`
	// Again is the command that runs the same restore again.
	Again string `json:"again,omitempty"`
}

// IntentTopic is an offsets topic a restore writes.
type IntentTopic struct {
	Topic           string `json:"topic"`
	TransactionalID string `json:"transactional_id"`
}

// IntentStopped is a connector a restore stops: Target is its config
// topic target state before (STARTED or PAUSED), Before its state as the
// plan printed it. Created marks one the restore creates STOPPED
// (--create-connectors), Target its state in the snapshot.
type IntentStopped struct {
	Name    string `json:"name"`
	Target  string `json:"target"`
	Before  string `json:"before,omitempty"`
	Created bool   `json:"created,omitempty"`
}

func intentKey(id string) string { return intentPrefix + id + intentSuffix }

// Put writes in, replacing the intent of the same ID. It fails as
// the store fails: a restore that cannot record what it is about to do
// does not do it.
func (h Restores) Put(ctx context.Context, in RestoreIntent) error {
	s := h.s
	if in.ID == "" || strings.ContainsAny(in.ID, "/\\") {
		return fmt.Errorf("record restore intent: bad id %q", in.ID)
	}
	in.Format, in.Version = intentFormat, 1
	data, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("record restore %s: %w", in.ID, err)
	}
	// Through the store's boundary (storecall.go): a store that does not
	// answer fails the restore within --store-timeout, before it changes
	// anything, instead of holding it.
	err = s.put(ctx, intentKey(in.ID), &blob.WriterOptions{ContentType: pinType}, func(w io.Writer) error {
		_, err := w.Write(append(data, '\n'))
		return err
	}, nil)
	if err != nil {
		return fmt.Errorf("record restore %s%s: %w", in.ID, s.in(), err)
	}
	return nil
}

// Delete removes the intent of restore id; one already gone is
// no error.
func (h Restores) Delete(ctx context.Context, id string) error {
	s := h.s
	if err := s.deleteKey(ctx, intentKey(id)); err != nil && !notFound(err) {
		return fmt.Errorf("remove the record of restore %s%s: %w", id, s.in(), err)
	}
	return nil
}

// List returns the intents of the restores that did not finish (or
// are running), oldest first. An object under restores/ that is not an
// intent (a temporary file of the file:// driver, a foreign object) is
// skipped, one that vanished while listed too.
func (h Restores) List(ctx context.Context) ([]RestoreIntent, error) {
	s := h.s
	var keys []string
	err := s.eachObject(ctx, &blob.ListOptions{Prefix: intentPrefix}, func(obj *blob.ListObject) error {
		if !obj.IsDir && strings.HasSuffix(obj.Key, intentSuffix) && obj.Size <= maxIntentSize {
			keys = append(keys, obj.Key)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list restore records%s: %w", s.in(), err)
	}
	var out []RestoreIntent
	for _, key := range keys {
		data, err := s.readAll(ctx, key)
		if notFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read restore record %s%s: %w", key, s.in(), err)
		}
		var in RestoreIntent
		if err := json.Unmarshal(data, &in); err != nil || in.Format != intentFormat || in.Version != 1 || intentKey(in.ID) != key {
			continue
		}
		out = append(out, in)
	}
	slices.SortFunc(out, func(a, b RestoreIntent) int { return a.Started.Compare(b.Started) })
	return out, nil
}

package drill

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// Encode returns the document rep is stored as: its JSON, or with key
// set a DSSE envelope signed with key around it.
func Encode(ctx context.Context, rep *Report, key ed25519.PrivateKey) ([]byte, error) {
	doc, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode drill report: %w", err)
	}
	doc = append(doc, '\n')
	if key == nil {
		return doc, nil
	}
	return Sign(ctx, doc, key)
}

// Save stores rep in st as drills/<rep.ID>.json (Encode's document) and
// returns what it stored.
func Save(ctx context.Context, st *store.Store, rep *Report, key ed25519.PrivateKey) ([]byte, error) {
	data, err := Encode(ctx, rep, key)
	if err != nil {
		return nil, err
	}
	if err := st.Drills().Put(ctx, rep.ID, data); err != nil {
		return nil, err
	}
	return data, nil
}

// Last returns the newest report stored in st and how many are stored;
// nil when none is.
func Last(ctx context.Context, st *store.Store) (*Report, int, error) {
	ids, err := st.Drills().List(ctx)
	if err != nil || len(ids) == 0 {
		return nil, 0, err
	}
	data, err := st.Drills().Get(ctx, ids[len(ids)-1])
	if err != nil {
		return nil, len(ids), err
	}
	rep, err := Open(data)
	return rep, len(ids), err
}

// ReadSnapshot sets req's state to the snapshot ref names in st (an ID,
// a prefix or latest), read as a restore reads it. A snapshot that does
// not read whole (a checksum mismatch, a corrupt object) is set as
// req.ReadError: the drill then fails, naming it. Any other error is
// returned.
func ReadSnapshot(ctx context.Context, st *store.Store, ref string, req *Request) error {
	snap, info, err := st.Snapshots().GetWith(ctx, ref, store.RestoreSink(store.RestoreRead{}))
	switch {
	case errors.Is(err, snapshot.ErrChecksum), errors.Is(err, snapshot.ErrCorrupt):
		id, rerr := st.Snapshots().Resolve(ctx, ref)
		if rerr != nil {
			id = ref
		}
		req.State, req.ReadError, req.Named = nil, err, State{Kind: "snapshot", SnapshotID: id}
		return nil
	case err != nil:
		return fmt.Errorf("read snapshot %q: %w; 'offsetkeeper list' shows the stored snapshots", ref, err)
	}
	req.State, req.ReadError = snap, nil
	req.Named = State{Kind: "snapshot", SnapshotID: info.ID, SHA256: info.SHA256, At: info.CreatedAt}
	return nil
}

// NewestFull drills the newest full snapshot of env.Store (NewestFullID).
func NewestFull(ctx context.Context, env Env, req Request) (*Report, error) {
	id, err := NewestFullID(ctx, env.Store)
	if err != nil {
		return nil, err
	}
	if err := ReadSnapshot(ctx, env.Store, id, &req); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCannotRun, err)
	}
	return Run(ctx, env, req)
}

// NewestFullID returns the ID of the newest full snapshot of st, the one
// the daemon drills on its schedule. A store without one is ErrCannotRun.
func NewestFullID(ctx context.Context, st *store.Store) (string, error) {
	infos, err := st.Snapshots().List(ctx)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrCannotRun, err)
	}
	full := capture.LatestFull(infos)
	if full == nil {
		return "", fmt.Errorf("%w: the store holds no full snapshot yet", ErrCannotRun)
	}
	return full.ID, nil
}

package standby

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// FenceVersion is the version of the fence format written.
const FenceVersion = 1

// Fence is what offsetkeeper failover stores about a primary cluster it
// took the standby over from: the daemon of that primary (any replica,
// any restart) never writes to the standby again. It is the object
// store.Fences.Put stores under the primary's cluster id.
type Fence struct {
	Version int `json:"version"`
	// Primary is the cluster id of the primary fenced; Standby that of the
	// cluster that took over.
	Primary string `json:"primary_cluster_id"`
	Standby string `json:"standby_cluster_id"`
	// At is when the failover fenced the primary; StateAt the moment of
	// the state it applied.
	At      time.Time `json:"at"`
	StateAt time.Time `json:"state_at"`
	// By says which command did it ("failover", "failback").
	By string `json:"by"`
	// Translate, MM2SourceAlias and Margin are how it translated the sink
	// offsets (Config's): diff with the standby tells the translation's
	// differences from others by them. Empty in fences written before.
	Translate      string        `json:"translate,omitempty"`
	MM2SourceAlias string        `json:"mm2_source_alias,omitempty"`
	Margin         time.Duration `json:"translate_margin_ns,omitempty"`
	// MapTopics and TopicPrefix are the standby's names of the sink
	// topics it translated into (Config's; a failback after a MirrorMaker
	// 2 failover maps primary.orders back to orders).
	MapTopics   map[string]string `json:"map_topics,omitempty"`
	TopicPrefix string            `json:"topic_prefix,omitempty"`
}

// PutFence stores f in st.
func PutFence(ctx context.Context, st *store.Store, f Fence) error {
	f.Version = FenceVersion
	data, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("encode standby fence: %w", err)
	}
	return st.Fences().Put(ctx, f.Primary, data)
}

// FenceOf reads the fence of primary (a cluster id) from st: nil when
// there is none.
func FenceOf(ctx context.Context, st *store.Store, primary string) (*Fence, error) {
	data, err := st.Fences().Get(ctx, primary)
	if errors.Is(err, snapshot.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f Fence
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("read standby fence of cluster %s: %w: %w", primary, snapshot.ErrCorrupt, err)
	}
	if f.Version < 1 || f.Version > FenceVersion {
		return nil, fmt.Errorf("read standby fence of cluster %s: version %d: this build reads 1 to %d", primary, f.Version, FenceVersion)
	}
	return &f, nil
}

// FencedError is ErrFenced with the fence found.
type FencedError struct{ Fence Fence }

func (e *FencedError) Error() string {
	return fmt.Sprintf("%s: %s at %s moved the standby (cluster %s) off primary cluster %s; this daemon never writes to it again (after a failback, run the daemon on the new primary)",
		ErrFenced, e.Fence.By, e.Fence.At.UTC().Format(time.RFC3339), e.Fence.Standby, e.Fence.Primary)
}

// Unwrap makes a FencedError match ErrFenced.
func (e *FencedError) Unwrap() error { return ErrFenced }

// CheckFence returns a *FencedError when st holds a fence of primary, the
// caller's primary cluster id; a fence that cannot be read is an error
// too: a daemon that cannot tell must not write.
func CheckFence(ctx context.Context, st *store.Store, primary string) error {
	f, err := FenceOf(ctx, st, primary)
	if err != nil {
		return fmt.Errorf("check the standby fence: %w; nothing was written", err)
	}
	if f != nil {
		return &FencedError{Fence: *f}
	}
	return nil
}

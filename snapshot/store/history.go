package store

import (
	"context"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// HistoryTopics are the names of the topics the snapshot info in st
// read (nil when info is nil or cannot be read), for capture.Gone.
func HistoryTopics(ctx context.Context, st *Store, info *snapshot.Info) []string {
	if info == nil {
		return nil
	}
	snap, _, err := st.Snapshots().GetWith(ctx, info.ID, nil)
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(snap.Topics))
	for _, t := range snap.Topics {
		names = append(names, t.Name)
	}
	return names
}

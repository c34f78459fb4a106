package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// LogEnds returns a Source.LogEnd that reads the log end offsets of the
// topics over cl, each call bounded by timeout (0: by the caller's context
// alone). A partition whose offset cannot be listed is left out: its lag
// shows as unknown.
func LogEnds(cl *kgo.Client, timeout time.Duration) func(context.Context, []string) (map[string]map[int32]int64, error) {
	adm := kadm.NewClient(cl)
	return func(ctx context.Context, topics []string) (map[string]map[int32]int64, error) {
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		ends, err := adm.ListEndOffsets(ctx, topics...)
		if err != nil {
			return nil, fmt.Errorf("list end offsets: %w", err)
		}
		out := map[string]map[int32]int64{}
		ends.Each(func(o kadm.ListedOffset) {
			if o.Err != nil {
				return
			}
			if out[o.Topic] == nil {
				out[o.Topic] = map[int32]int64{}
			}
			out[o.Topic][o.Partition] = o.Offset
		})
		return out, nil
	}
}

// SinkTopicIDs returns a Source.SinkTopics that reads the topics over cl
// as a snapshot keeps them (capture.ReadSinkTopics), each call bounded by
// timeout (0: by the caller's context alone).
func SinkTopicIDs(cl *kgo.Client, timeout time.Duration) func(context.Context, []string) ([]snapshot.SinkTopic, []string) {
	adm := kadm.NewClient(cl)
	return func(ctx context.Context, names []string) ([]snapshot.SinkTopic, []string) {
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		return capture.ReadSinkTopics(ctx, adm, names)
	}
}

// SnapshotList answers /api/snapshots: the store's snapshots as a JSON
// array, oldest first; 503 without a store, 502 when listing fails.
func SnapshotList(st *store.Store) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if st == nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			json.NewEncoder(w).Encode(map[string]string{"error": "no store"})
			return
		}
		infos, err := st.Pins().Snapshots(r.Context())
		if err != nil {
			w.WriteHeader(http.StatusBadGateway)
			json.NewEncoder(w).Encode(map[string]string{"error": "list snapshots: " + err.Error()})
			return
		}
		if infos == nil {
			infos = []snapshot.Info{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.Encode(infos)
	}
}

package standby

// This file spares a sync the standby's Connect REST read of every
// connector (GET /connectors?expand=info&expand=status, which a worker
// answers from its config and status topics) when nothing it compares
// can have changed: the primary's configs are the last sync's, and the
// standby's config topic, which every config change and every resume,
// pause or stop there is written to, has not moved since.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// configsSeen is the last sync's config actions and what they were
// decided on; key is "" when the next sync must read the standby's
// Connect.
type configsSeen struct {
	key     string
	actions []ConfigAction
}

// configsKey sums what the config actions of a sync of snap depend on:
// the configs of snap's connectors in scope and the end offsets of the
// standby's config topic. ok is false when they cannot be read (the
// standby's Connect is read then).
func (s *Syncer) configsKey(ctx context.Context, snap *snapshot.Snapshot) (key string, ok bool) {
	topic := s.cfg.Options.ConfigTopic
	ends, err := kadm.NewClient(s.cfg.Client).ListEndOffsets(ctx, topic)
	if err != nil || ends.Error() != nil {
		return "", false
	}
	h := sha256.New()
	ends.Each(func(o kadm.ListedOffset) { fmt.Fprintf(h, "%s/%d@%d\n", o.Topic, o.Partition, o.Offset) })
	if len(ends[topic]) == 0 {
		return "", false
	}
	for _, c := range snap.Connectors {
		if len(s.cfg.Options.Connectors) > 0 && !slices.Contains(s.cfg.Options.Connectors, c.Name) {
			continue
		}
		fmt.Fprintf(h, "%q %v %s\n", c.Name, c.HasConfig, configHash(c.Config))
	}
	fmt.Fprintf(h, "record %s\n", s.loaded)
	return hex.EncodeToString(h.Sum(nil)), true
}

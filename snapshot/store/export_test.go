package store

import (
	"context"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
)

// CompactLevelsAt writes the merged levels of epoch e as if level 1's last
// boundary were minute and level 2's hour (tests cannot wait for the
// wall clock's).
func (s *Store) CompactLevelsAt(ctx context.Context, e journal.EpochInfo, minute, hour time.Time) ([]journal.SegmentInfo, error) {
	return s.compactAt(ctx, e, func(level int) time.Time {
		if level == journal.LevelHour {
			return hour
		}
		return minute
	})
}

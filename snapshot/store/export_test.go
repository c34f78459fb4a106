package store

import (
	"context"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"time"
)

// CompactLevelsAt writes the merged levels of epoch e as if level 1's last
// boundary were minute and level 2's hour (tests cannot wait for the
// wall clock's).
func (s *Store) CompactLevelsAt(ctx context.Context, e snapshot.EpochInfo, minute, hour time.Time) ([]snapshot.SegmentInfo, error) {
	return s.compactAt(ctx, e, func(level int) time.Time {
		if level == snapshot.LevelHour {
			return hour
		}
		return minute
	})
}

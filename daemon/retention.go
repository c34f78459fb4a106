package daemon

// This file is the daemon's retention: after each run it applies the
// policy to the store (snapshot.ApplyPolicy), with the pins and what the
// journal says of resets, and logs the rule that keeps each snapshot.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// retention is what retain remembers between runs.
type retention struct {
	// events caches the resets read from journal segments.
	events store.EventCache

	mu sync.Mutex
	// said is, by snapshot ID, the reasons last logged for keeping it:
	// a kept snapshot is logged when it is first kept and when the rule
	// keeping it changes, not at every run.
	said map[string]string
	// resetEpochs are the epochs whose base a young reset keeps: their raw
	// segments stay (--journal-keep-within does not thin them), so that
	// restore --at the moment before the reset is exact.
	resetEpochs map[string]bool
}

// resetHeld reports whether the last retention kept epoch id for a reset.
func (r *retention) resetHeld(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.resetEpochs[id]
}

// retain applies the policy to the store, never removing keepID (the
// snapshot just stored, even if clock skew made it look old) nor a
// snapshot pinned since the listing. A snapshot another replica already
// removed counts as removed.
func (d *Daemon) retain(ctx context.Context, keepID string) (kept, removed int, err error) {
	infos, err := d.Store.Pins().Snapshots(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("list snapshots: %w", err)
	}
	infos, damaged := store.Damaged(infos)
	for _, i := range damaged {
		// Left for an operator: it may be a file put there by hand.
		d.log().Warn("damaged object in the store, not judged by retention; 'offsetkeeper delete "+i.ID+"' removes it",
			"snapshot_id", i.ID, "error", i.Damaged)
	}
	now := time.Now()
	jr, err := d.Store.Snapshots().RetentionJournal(ctx, infos, d.Config.Policy, now, &d.ret.events)
	if err != nil {
		return 0, 0, fmt.Errorf("read the journal's resets: %w", err)
	}
	keep, remove, reasons := snapshot.ApplyPolicy(infos, jr, d.Config.Policy, now)
	kept = len(keep)
	d.logKept(keep, reasons)
	var errs []error
	for _, s := range remove {
		if s.ID == keepID {
			kept++
			continue
		}
		if err := ctx.Err(); err != nil {
			errs = append(errs, fmt.Errorf("delete snapshot %s: %w", s.ID, err))
			break
		}
		if pinned, err := d.Store.Pins().Pinned(ctx, s.ID); err != nil || pinned {
			if err != nil {
				errs = append(errs, err)
			} else {
				kept++
			}
			continue
		}
		if err := d.Store.Snapshots().Delete(ctx, s.ID); err != nil && !errors.Is(err, snapshot.ErrNotFound) {
			errs = append(errs, fmt.Errorf("delete snapshot %s: %w", s.ID, err))
			continue
		}
		removed++
		d.m.deletions.Inc()
		d.log().Info("snapshot removed by retention", "snapshot_id", s.ID, "kind", s.Kind, "reason", s.Reason, "created_at", s.CreatedAt, "why", strings.Join(reasons[s.ID], ", "))
	}
	return kept, removed, errors.Join(errs...)
}

// logKept logs each kept snapshot with the rules that keep it, at Info
// when that is new (a snapshot kept for the first time, or by another
// rule than at the last run), else at Debug; and notes the epochs a reset
// keeps.
func (d *Daemon) logKept(keep []snapshot.Info, reasons map[string][]string) {
	d.ret.mu.Lock()
	defer d.ret.mu.Unlock()
	said := make(map[string]string, len(keep))
	resetEpochs := map[string]bool{}
	for _, s := range keep {
		why := strings.Join(reasons[s.ID], ", ")
		said[s.ID] = why
		if slices.ContainsFunc(reasons[s.ID], func(r string) bool { return strings.HasPrefix(r, "before a reset of ") }) {
			resetEpochs[s.ID] = true
		}
		level := "debug"
		if d.ret.said[s.ID] != why {
			level = "info"
		}
		args := []any{"snapshot_id", s.ID, "kind", s.Kind, "reason", s.Reason, "created_at", s.CreatedAt, "why", why}
		if level == "info" {
			d.log().Info("snapshot kept by retention", args...)
		} else {
			d.log().Debug("snapshot kept by retention", args...)
		}
	}
	d.ret.said, d.ret.resetEpochs = said, resetEpochs
}

package restore

import (
	"context"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Verification is the outcome of Verify.
type Verification struct {
	// Connectors is how many connectors were compared.
	Connectors int
	// Differences list every offset that still differs (see
	// Plan.Differences); empty when the restore is complete.
	Differences []string
	// Plan is the fresh comparison Verify made: applying it again would
	// write exactly the differences. It is nil when Verify found that
	// everything matches without making one (see below).
	Plan *Plan
}

// Verify reads the live state of the plan's connectors again (offsets
// topics read_committed to their end, and the groups) and compares it with
// the snapshot exactly as NewPlan does, limited as the plan was (scope,
// source only, sink only). It returns an error wrapping ErrVerifyFailed,
// with the Verification, when anything differs.
//
// When cl is the client the plan was made with, the offsets topics are read
// through the plan's Capturer, which kept what NewPlan read: only the
// records written since (by Apply, or by anyone else) are fetched, and the
// result is the same as reading the topics whole.
//
// The plan is first checked against what it wrote, the offsets topics a
// few partitions at a time and the groups a batch at a time, after checking that
// the configs and partition counts that decide where keys and offsets go
// are unchanged: when all of it matches, the new plan would write nothing,
// and none is made (the live keys of the scope are then never held all at
// once). Anything else takes the full comparison.
func Verify(ctx context.Context, cl *kgo.Client, p *Plan) (*Verification, error) {
	if verifyQuick(ctx, cl, p) {
		return &Verification{Connectors: len(p.Connectors)}, nil
	}
	opts := p.opts
	opts.Connectors = p.Scope
	opts.AllowOtherCluster = opts.AllowOtherCluster || p.OtherCluster
	p.verified = true // its last capture: the Capturer keeps nothing after
	again, err := newPlan(ctx, cl, p.source, opts, p)
	if err != nil {
		return nil, fmt.Errorf("verify restore: %w", err)
	}
	v := &Verification{Connectors: len(again.Connectors), Differences: again.Differences(), Plan: again}
	if len(v.Differences) > 0 {
		shown := v.Differences
		if len(shown) > 20 {
			shown = append(shown[:20:20], fmt.Sprintf("... and %d more", len(v.Differences)-20))
		}
		return v, fmt.Errorf("%w: %s:\n  - %s", ErrVerifyFailed, plural(len(v.Differences), "offset differs", "offsets differ"), strings.Join(shown, "\n  - "))
	}
	return v, nil
}

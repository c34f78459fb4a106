// Package retry holds the one retry loop of the module: a bounded number of
// tries, a wait that grows by one step a try, and a context that ends the
// waiting. Callers name their own policy, because what is worth waiting
// for differs: a leader election takes seconds, a listing that raced a
// delete takes milliseconds.
package retry

import (
	"context"
	"fmt"
	"time"
)

// Policy is how often and how patiently to try: at most Tries calls in
// all, waiting Step after the first, 2*Step after the second, and so on.
type Policy struct {
	Tries int
	Step  time.Duration
}

// Do calls fn until it returns nil, returns an error that again does not
// take (again nil takes every error), or has been called p.Tries times;
// it returns fn's last error. When ctx ends, before a call or during a
// wait, Do returns ctx's error with the last one fn returned.
func (p Policy) Do(ctx context.Context, again func(error) bool, fn func() error) error {
	var err error
	for attempt := 1; ; attempt++ {
		err = fn()
		if err == nil || (again != nil && !again(err)) || attempt >= p.Tries {
			return err
		}
		if werr := p.Wait(ctx, attempt); werr != nil {
			return fmt.Errorf("%w (while retrying: %w)", werr, err)
		}
	}
}

// Wait waits the pause after attempt (1 for the first), or until ctx ends,
// and then returns ctx's error. Loops that retry part of their work (the
// partitions still pending) call it between rounds.
func (p Policy) Wait(ctx context.Context, attempt int) error {
	t := time.NewTimer(time.Duration(attempt) * p.Step)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

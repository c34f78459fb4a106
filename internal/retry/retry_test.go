package retry

import (
	"context"
	"errors"
	"testing"
	"time"
)

var errAgain, errFinal = errors.New("again"), errors.New("final")

func TestDoStopsAtTries(t *testing.T) {
	n := 0
	err := Policy{Tries: 3, Step: time.Microsecond}.Do(context.Background(), nil, func() error { n++; return errAgain })
	if n != 3 || !errors.Is(err, errAgain) {
		t.Fatalf("%d calls, %v: want 3 calls and the last error", n, err)
	}
}

func TestDoStopsOnAnErrorNotRetried(t *testing.T) {
	n := 0
	again := func(err error) bool { return errors.Is(err, errAgain) }
	err := Policy{Tries: 10, Step: time.Microsecond}.Do(context.Background(), again, func() error {
		n++
		if n == 2 {
			return errFinal
		}
		return errAgain
	})
	if n != 2 || !errors.Is(err, errFinal) {
		t.Fatalf("%d calls, %v: want 2 calls and the final error", n, err)
	}
}

func TestDoSucceeds(t *testing.T) {
	n := 0
	err := Policy{Tries: 5, Step: time.Microsecond}.Do(context.Background(), nil, func() error {
		if n++; n < 3 {
			return errAgain
		}
		return nil
	})
	if n != 3 || err != nil {
		t.Fatalf("%d calls, %v: want 3 calls and success", n, err)
	}
}

func TestDoEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	err := Policy{Tries: 100, Step: time.Hour}.Do(ctx, nil, func() error { n++; cancel(); return errAgain })
	if n != 1 || !errors.Is(err, context.Canceled) || !errors.Is(err, errAgain) {
		t.Fatalf("%d calls, %v: want 1 call, the context's error and the last one", n, err)
	}
}

package capture

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Phases of a capture and of a restore, as Progress names them.
const (
	PhaseConfig  = "read config topic"
	PhaseOffsets = "read offsets topics"
	PhaseGroups  = "read sink groups"
	PhaseBuild   = "build source offsets"
	PhaseStore   = "encode and store"
	// The phases of a restore (restore.Run sets them).
	PhasePlan     = "plan"
	PhaseStop     = "stop connectors"
	PhaseUndo     = "undo snapshot"
	PhaseApply    = "apply"
	PhaseVerify   = "verify"
	PhaseResume   = "resume connectors"
	phaseStarting = "starting"
)

// Progress is what a capture, a store or a restore has done so far, to be
// read while it runs (a progress line, a log line). Its counters are
// atomics added once per fetched partition batch or written topic, never
// per record. The zero value is ready to use, and every method is safe for
// concurrent use and does nothing on a nil *Progress.
type Progress struct {
	// stage is the outer phase (a restore's), phase the inner (a
	// capture's within it).
	stage   atomic.Pointer[string]
	phase   atomic.Pointer[string]
	written atomic.Int64
	groups  atomic.Int64

	mu     sync.Mutex
	topics map[string]*TopicProgress
}

// TopicProgress counts what was fetched from one topic.
type TopicProgress struct {
	records, bytes atomic.Int64
}

// Add counts one fetched batch of n records in size bytes; nil does nothing.
func (t *TopicProgress) Add(n, size int) {
	if t == nil {
		return
	}
	t.records.Add(int64(n))
	t.bytes.Add(int64(size))
}

// SetPhase says what the work is doing now (one of the Phase constants).
func (p *Progress) SetPhase(phase string) {
	if p != nil {
		p.phase.Store(&phase)
	}
}

// SetStage names the outer phase of a restore (PhasePlan, PhaseApply...)
// and clears the inner one: a capture within it (the plan reads the live
// state) sets its own phases with SetPhase, shown as "plan: read offsets
// topics".
func (p *Progress) SetStage(stage string) {
	if p != nil {
		p.stage.Store(&stage)
		p.phase.Store(nil)
	}
}

// Written counts n offsets records written (source writes and tombstones).
func (p *Progress) Written(n int) {
	if p != nil {
		p.written.Add(int64(n))
	}
}

// GroupCommitted counts one consumer group whose offsets were committed.
func (p *Progress) GroupCommitted() {
	if p != nil {
		p.groups.Add(1)
	}
}

// Reset zeroes the counters and the phase, for the next run.
func (p *Progress) Reset() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.topics = nil
	p.mu.Unlock()
	p.stage.Store(nil)
	p.phase.Store(nil)
	p.written.Store(0)
	p.groups.Store(0)
}

// topic returns the counter of one topic, made on first use; nil on a nil
// Progress.
func (p *Progress) topic(name string) *TopicProgress {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.topics == nil {
		p.topics = map[string]*TopicProgress{}
	}
	t := p.topics[name]
	if t == nil {
		t = new(TopicProgress)
		p.topics[name] = t
	}
	return t
}

// ProgressState is a Progress read at one moment.
type ProgressState struct {
	// Phase is the stage and phase set last ("plan: read offsets topics",
	// "read sink groups"; "starting" before any).
	Phase string
	// Read and Bytes are the records and bytes fetched, all topics;
	// Topics the same per topic, by name.
	Read, Bytes int64
	Topics      []TopicState
	// Written counts offsets records written, Groups consumer groups
	// committed (a restore).
	Written, Groups int64
	// Elapsed is the time since the watch began (set by Watch).
	Elapsed time.Duration
}

// TopicState is what was fetched from one topic.
type TopicState struct {
	Topic          string
	Records, Bytes int64
}

// State reads the counters. The zero ProgressState for a nil Progress.
func (p *Progress) State() ProgressState {
	st := ProgressState{Phase: phaseStarting}
	if p == nil {
		return st
	}
	stage, phase := p.stage.Load(), p.phase.Load()
	switch {
	case stage != nil && phase != nil:
		st.Phase = *stage + ": " + *phase
	case stage != nil:
		st.Phase = *stage
	case phase != nil:
		st.Phase = *phase
	}
	st.Written, st.Groups = p.written.Load(), p.groups.Load()
	p.mu.Lock()
	for name, t := range p.topics {
		ts := TopicState{Topic: name, Records: t.records.Load(), Bytes: t.bytes.Load()}
		st.Read += ts.Records
		st.Bytes += ts.Bytes
		st.Topics = append(st.Topics, ts)
	}
	p.mu.Unlock()
	sort.Slice(st.Topics, func(i, j int) bool { return st.Topics[i].Topic < st.Topics[j].Topic })
	return st
}

// Watch calls report with the state of p at every tick of ticks once
// after has passed since Watch was called (now tells the time; a tick is
// judged by the time it carries), from a goroutine of its own, until the
// returned stop is called. stop waits for that goroutine, then, if after
// had passed, calls report once more with done true and the final state.
// report is never called concurrently. Tests pass their own ticks and now.
func (p *Progress) Watch(after time.Duration, ticks <-chan time.Time, now func() time.Time, report func(st ProgressState, done bool)) (stop func()) {
	began := now()
	quit, exited := make(chan struct{}), make(chan struct{})
	// A tick is judged by the time it carries, not by the clock when it
	// is received (regression: a tick received late, after the clock had
	// moved past the threshold, reported early and once too often).
	state := func(at time.Time) (ProgressState, bool) {
		st := p.State()
		st.Elapsed = at.Sub(began)
		return st, st.Elapsed >= after
	}
	go func() {
		defer close(exited)
		for {
			select {
			case <-quit:
				return
			case at := <-ticks:
				if st, due := state(at); due {
					report(st, false)
				}
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(quit)
			<-exited
			if st, due := state(now()); due {
				report(st, true)
			}
		})
	}
}

package journal

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// Reasons an epoch starts.
const (
	EpochFirstRun       = "first run"
	EpochSnapshot       = "snapshot"
	EpochGap            = "gap"
	EpochTopicRecreated = "topic recreated"
	// EpochTopicDeleted: a topic the epoch tails does not exist any more
	// (deleted, or the brokers are now another cluster's); "topic
	// recreated" is only for one that exists again under a new topic ID.
	EpochTopicDeleted = "topic deleted"
	EpochPartitions   = "partition count changed"
	// EpochNewGroup: a topic layout (MSK Connect's, say) found a worker
	// group the epoch does not tail, a connector created since.
	EpochNewGroup   = "worker group added"
	EpochNoContinue = "new leader could not continue"
	EpochBroken     = "journal broken"
)

// Errors of journal objects. Each matches the snapshot package's error of
// the same kind (errors.Is), so a caller checks one set, but says what it
// is about: a journal epoch or segment, not a snapshot.
var (
	ErrNotFound           error = kindError{"journal object not found", snapshot.ErrNotFound}
	ErrCorrupt            error = kindError{"journal object is corrupt", snapshot.ErrCorrupt}
	ErrUnsupportedVersion error = kindError{"unsupported journal format version", snapshot.ErrUnsupportedVersion}
)

// kindError is a journal object's error of a snapshot error's kind.
type kindError struct {
	msg  string
	kind error
}

func (e kindError) Error() string { return e.msg }
func (e kindError) Unwrap() error { return e.kind }

// ErrFenced: a journal segment's sequence number was claimed by another
// writer (see FencedError).
var ErrFenced = errors.New("journal sequence claimed by another writer")

// FencedError is a raw segment refused because its sequence number is
// claimed by another write: Stored says the other write's segment is
// stored (another writer goes on with the epoch), else it never finished
// (a writer that stopped between its claim and its segment).
type FencedError struct {
	Epoch  string
	Seq    uint64
	Other  string // the key of the segment that claimed Seq
	Stored bool
}

func (e *FencedError) Error() string {
	if e.Stored {
		return fmt.Sprintf("write journal segment %d of epoch %s: %v: another writer stored %s; two daemons write this epoch (leader election off, or two leaders)", e.Seq, e.Epoch, ErrFenced, e.Other)
	}
	return fmt.Sprintf("write journal segment %d of epoch %s: %v: a write of %s claimed it and never finished; the epoch cannot go on", e.Seq, e.Epoch, ErrFenced, e.Other)
}

func (e *FencedError) Is(target error) bool { return target == ErrFenced }

// Epoch is a run of the journal that starts from one full snapshot, its
// base, and goes on without a gap. It is stored as journal/<ID>/epoch.json,
// written once.
type Epoch struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// ID is the base snapshot's ID.
	ID        string    `json:"id"`
	Reason    string    `json:"reason"`
	StartedAt time.Time `json:"started_at"`
	// Topics are the offsets topics and the config topic the journal
	// tails, with their topic IDs, partition counts and the offsets it
	// starts from (the base snapshot's end offsets).
	Topics []EpochTopic `json:"topics"`
}

// EpochTopic is one topic an epoch tails.
type EpochTopic struct {
	Name       string `json:"name"`
	Role       string `json:"role"`
	TopicID    string `json:"topic_id"`
	Partitions int    `json:"partitions"`
	// Worker is set for a worker offsets topic (--offsets-topic), unset
	// for one a connector's offsets.storage.topic names: a state at a
	// moment holds such a topic only while a connector names it, as a
	// capture would.
	Worker bool            `json:"worker,omitempty"`
	Start  []PartitionNext `json:"start"`
}

// PartitionNext is a partition and the next offset to read in it.
type PartitionNext struct {
	Partition int32 `json:"partition"`
	Next      int64 `json:"next"`
}

// SegmentInfo is what a segment's object name says.
type SegmentInfo struct {
	Epoch    string    `json:"epoch"`
	Level    int       `json:"level"`
	FirstSeq uint64    `json:"first_seq"`
	LastSeq  uint64    `json:"last_seq"`
	LastTime time.Time `json:"last_time"`
	Key      string    `json:"key"`
	Size     int64     `json:"size"`
}

// Segment is one immutable journal object: the entries flushed at once
// (level 0) or merged (level 1), chained to the segment before it.
type Segment struct {
	Epoch               string
	Level               int
	FirstSeq, LastSeq   uint64
	FirstTime, LastTime time.Time
	// PrevDigest is the LastDigest of the segment ending at FirstSeq-1
	// ("" for the first of an epoch). LastDigest is, for a raw segment,
	// the SHA-256 of its own entries; for a merged one, that of the last
	// raw segment it holds.
	PrevDigest, LastDigest string
	Entries                []Entry
	// Interval is the writer's flush interval (--journal-interval), stored
	// in the header for readers to tell a stopped journal; 0 if unknown.
	Interval time.Duration

	// Key and obj are the object PutSegment writes, kept for its retries.
	Key string
	Obj []byte
}

// SegmentKey is the object name of a segment.
func SegmentKey(epoch string, level int, first, last uint64, lastTime time.Time) string {
	return fmt.Sprintf("%s%s/%d/%016x-%016x-%013d%s", JournalPrefix, epoch, level, first, last, Ms(lastTime), segmentSuffix)
}

// ParseSegmentKey reads a segment's object name.
func ParseSegmentKey(key string) (SegmentInfo, bool) {
	rest, ok := strings.CutPrefix(key, JournalPrefix)
	if !ok {
		return SegmentInfo{}, false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 {
		return SegmentInfo{}, false
	}
	if _, err := snapshot.ParseID(parts[0]); err != nil {
		return SegmentInfo{}, false
	}
	level, err := strconv.Atoi(parts[1])
	if err != nil || level < 0 || level > 9 {
		return SegmentInfo{}, false
	}
	name, ok := strings.CutSuffix(parts[2], segmentSuffix)
	f := strings.Split(name, "-")
	if !ok || len(f) != 3 || len(f[0]) != 16 || len(f[1]) != 16 || len(f[2]) != 13 {
		return SegmentInfo{}, false
	}
	first, err1 := strconv.ParseUint(f[0], 16, 64)
	last, err2 := strconv.ParseUint(f[1], 16, 64)
	t, err3 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || first == 0 || last < first {
		return SegmentInfo{}, false
	}
	return SegmentInfo{Epoch: parts[0], Level: level, FirstSeq: first, LastSeq: last, LastTime: FromMs(t), Key: key}, true
}

// EpochInfo is one epoch as the listing shows it.
type EpochInfo struct {
	ID string
	// HasFile says whether epoch.json is stored.
	HasFile  bool
	Segments []SegmentInfo // by FirstSeq, then level (higher first)
	// Claims are the keys of the epoch's claim objects (see claimKey).
	Claims []string
}

// JournalListing is every epoch in the store, oldest first.
type JournalListing struct {
	Epochs []EpochInfo
}

// Epoch returns the epoch with that ID, or false.
func (l *JournalListing) Epoch(id string) (*EpochInfo, bool) {
	for i := range l.Epochs {
		if l.Epochs[i].ID == id {
			return &l.Epochs[i], true
		}
	}
	return nil, false
}

func EpochEntry(m map[string]*EpochInfo, id string) *EpochInfo {
	e := m[id]
	if e == nil {
		e = &EpochInfo{ID: id}
		m[id] = e
	}
	return e
}

// SortSegments orders segments by FirstSeq, then LastSeq, then level
// (higher first).
func SortSegments(segs []SegmentInfo) {
	slices.SortFunc(segs, func(a, b SegmentInfo) int {
		if a.FirstSeq != b.FirstSeq {
			return cmp.Compare(a.FirstSeq, b.FirstSeq)
		}
		if a.LastSeq != b.LastSeq {
			return cmp.Compare(a.LastSeq, b.LastSeq)
		}
		return b.Level - a.Level
	})
}

// Chain returns the finest segments of e that lead from seq 1 to its last:
// at each point the raw segment when it is kept, else the shortest merged
// one after which the sequence goes on (raw segments already deleted). It
// stops at the first hole and reports it: a segment that should follow but
// is missing (the sequence does not continue).
func (e *EpochInfo) Chain() (chain []SegmentInfo, hole error) {
	starts, maxSeq := e.byFirst()
	if seq, ok := e.twice(); ok {
		// Two writers wrote this sequence number (before claims fenced
		// them): the chain ends before it.
		maxSeq = seq - 1
		defer func() {
			chain = slices.DeleteFunc(chain, func(si SegmentInfo) bool { return si.LastSeq >= seq })
			if hole == nil {
				hole = fmt.Errorf("%w: epoch %s: two raw segments for seq %d (two daemons wrote the epoch): restorable up to seq %d", ErrJournalBroken, e.ID, seq, seq-1)
			}
		}()
	}
	// reach[n]: the sequence goes on from n to the end.
	reach := map[uint64]bool{maxSeq + 1: true}
	for i := len(e.Segments) - 1; i >= 0; i-- {
		if si := e.Segments[i]; reach[si.LastSeq+1] {
			reach[si.FirstSeq] = true
		}
	}
	for next := uint64(1); next <= maxSeq; {
		cands := starts[next]
		if len(cands) == 0 {
			return chain, e.holeAt(next)
		}
		pick := cands[len(cands)-1] // the farthest, where nothing goes on
		for _, c := range cands {
			if reach[c.LastSeq+1] {
				pick = c
				break
			}
		}
		chain = append(chain, pick)
		next = pick.LastSeq + 1
	}
	return chain, nil
}

// twice returns the first sequence number two raw segments of e hold.
func (e *EpochInfo) twice() (uint64, bool) {
	seen := map[uint64]bool{}
	var first uint64
	for _, si := range e.Segments {
		if si.Level != LevelRaw {
			continue
		}
		if seen[si.FirstSeq] && (first == 0 || si.FirstSeq < first) {
			first = si.FirstSeq
		}
		seen[si.FirstSeq] = true
	}
	return first, first != 0
}

// byFirst returns e's segments by first seq (each in listing order), and
// the last seq of all.
func (e *EpochInfo) byFirst() (map[uint64][]SegmentInfo, uint64) {
	m := make(map[uint64][]SegmentInfo, len(e.Segments))
	var last uint64
	for _, si := range e.Segments {
		m[si.FirstSeq] = append(m[si.FirstSeq], si)
		last = max(last, si.LastSeq)
	}
	return m, last
}

func (e *EpochInfo) holeAt(next uint64) error {
	for _, si := range e.Segments {
		if si.FirstSeq > next {
			return fmt.Errorf("%w: epoch %s: segment %d is missing (the next stored is %s)", ErrJournalBroken, e.ID, next, si.Key)
		}
	}
	return fmt.Errorf("%w: epoch %s: segment %d is missing", ErrJournalBroken, e.ID, next)
}

// PlanAt returns the segments a state at moment at reads, as Litestream's
// CalcRestorePlan picks them: from seq 1, at each point the segment
// starting there that reaches farthest among those whose time is at or
// before at (a merged one is applied whole, so only those; on a tie the
// higher level), and where none is, the raw segment (the tail, cut at
// at). It stops at the last seq, or where nothing usable starts: past, when
// set, is a merged segment starting there whose time is after at (its raw
// segments deleted), hole a seq no segment starts at.
func (e *EpochInfo) PlanAt(at time.Time) (plan []SegmentInfo, past *SegmentInfo, hole error) {
	starts, maxSeq := e.byFirst()
	for next := uint64(1); next <= maxSeq; {
		var best, raw, later *SegmentInfo
		for i := range starts[next] {
			c := &starts[next][i]
			if c.Level == LevelRaw {
				raw = c
			}
			if c.LastTime.After(at) {
				if later == nil || c.LastSeq < later.LastSeq {
					later = c
				}
				continue
			}
			if best == nil || c.LastSeq > best.LastSeq || (c.LastSeq == best.LastSeq && c.Level > best.Level) {
				best = c
			}
		}
		if best == nil {
			best = raw
		}
		if best == nil {
			if later != nil {
				return plan, later, nil
			}
			return plan, nil, e.holeAt(next)
		}
		plan = append(plan, *best)
		next = best.LastSeq + 1
	}
	return plan, nil, nil
}

// Last is the last segment of the chain, or false.
func (e *EpochInfo) Last() (SegmentInfo, bool) {
	c, _ := e.Chain()
	if len(c) == 0 {
		return SegmentInfo{}, false
	}
	return c[len(c)-1], true
}

// CheckLink checks that seg follows prev (nil for the first of an epoch).
func CheckLink(prev, seg *Segment, key string) error {
	if prev == nil {
		if seg.FirstSeq != 1 || seg.PrevDigest != "" {
			return fmt.Errorf("read journal segment %s: %w: the epoch's first segment is missing", key, ErrJournalBroken)
		}
		return nil
	}
	if seg.FirstSeq != prev.LastSeq+1 || seg.PrevDigest != prev.LastDigest {
		return fmt.Errorf("read journal segment %s: %w: it does not follow segment %d (digest chain broken: a segment is missing, altered or reordered)", key, ErrJournalBroken, prev.LastSeq)
	}
	return nil
}

// EpochCheck is what Journal.Verify found of one epoch.
type EpochCheck struct {
	Epoch    string
	Segments int
	// Encrypted counts the segments checked without a Keeper: header,
	// checksum and chain only.
	Encrypted int
	Err       error
}

const (
	JournalPrefix = "journal/"
	segmentSuffix = ".seg"
)

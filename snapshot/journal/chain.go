package journal

import "time"

// ChainWriter keeps where one epoch's chain of journal segments stands,
// and makes the segment that follows it: numbered one past the last,
// linked to it by the last one's digest (PrevDigest), starting when the
// last one ended. The daemon's journal and the journal benchmark write
// their segments through it, so the chain has one rule.
type ChainWriter struct {
	Epoch string
	// Seq is the last segment's sequence number, 0 before the first.
	Seq uint64
	// Digest is the last segment's LastDigest, "" before the first.
	Digest string
	// Last is when the last segment ended: the epoch's start before the
	// first.
	Last time.Time
}

// Next returns the segment that follows the chain, of entries, observed
// up to end. It lasts at least a millisecond: segment times are stored in
// milliseconds, and each must end after it starts.
func (c *ChainWriter) Next(entries []Entry, end time.Time) *Segment {
	if !end.After(c.Last) {
		end = c.Last.Add(time.Millisecond)
	}
	return &Segment{
		Epoch: c.Epoch, FirstSeq: c.Seq + 1, LastSeq: c.Seq + 1, FirstTime: c.Last, LastTime: end,
		PrevDigest: c.Digest, Entries: entries,
	}
}

// Wrote moves the chain past seg, once Store.PutSegment stored it (and so
// set its LastDigest).
func (c *ChainWriter) Wrote(seg *Segment) {
	c.Seq, c.Digest, c.Last = seg.LastSeq, seg.LastDigest, seg.LastTime
}

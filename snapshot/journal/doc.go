// Package journal is the journal's format and logic, without I/O: the
// entries a segment holds and their binary encoding, the segments and
// epochs a store lists, the replay that computes the state of any moment
// from a base snapshot and the segments after it, the merge of segments
// into coarser levels, and the resets the journal catches as events.
//
// The types to know are [Entry], one change as the tail saw it; [Segment]
// and [SegmentInfo], one flush and what a listing knows of it; [EpochInfo],
// an epoch's segments, with its chain and the plan of a restore to a
// moment ([EpochInfo.PlanAt]); [ChainWriter], the one chain writer the
// daemon and the benchmarks use; and [Rewound], the rule that judges a
// source offset moved backwards. snapshot/store keeps segments in a bucket
// and replays them (Store.StateAt); snapshot/capture's Tail reads the
// entries from Kafka. See docs/journal.md.
package journal

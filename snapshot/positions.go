package snapshot

// PositionFields are the source offset fields known to be positions that
// only move forward while a connector runs, most telling first: the
// journal judges a source rewind by the first of them that both values
// hold, and the page plots and compares the same ones in the same order,
// so the two never disagree about one offset.
//
// An event time comes before a log position because a position alone can
// go back without a rewind: Debezium MySQL's pos restarts at every new
// binlog file (file+pos is the position; ts_sec moves on), and Postgres's
// lsn and ts_usec move together. Debezium (ts_sec, ts_usec, ts_ms, lsn,
// commit_lsn, change_lsn), JDBC (incrementing, timestamp,
// timestamp_nanos), MirrorMaker 2 (offset), FileStream (position), and
// Debezium MySQL's pos last.
var PositionFields = []string{"ts_sec", "ts_usec", "ts_ms", "lsn", "commit_lsn", "change_lsn", "incrementing", "timestamp", "timestamp_nanos", "offset", "position", "pos"}

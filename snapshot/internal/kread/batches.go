package kread

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// This file applies the records of a fetched partition to its view
// straight from the record batches, without kgo.ProcessFetchPartition:
// that makes a kgo.Record of every record (a dozen pointer fields, a
// context per batch, a []*Record per partition), and those records and
// the collector's write barriers on them cost a large capture CPU for
// nothing it keeps. A view keeps only a
// record's key, value and offset, which the batch holds as they are.
//
// It takes only what it reads exactly as kgo would: record batches (magic
// 2) with a correct CRC, whose records decode to the count the batch
// states, in a partition answered without error and without aborted
// transactions (with read_committed isolation, every other batch below the
// last stable offset is committed; control batches are skipped). Anything
// else goes to kgo.ProcessFetchPartition: a whole partition when its first
// batch is not of that kind, or, when batches were applied before it, from
// that batch on at the next fetch.

// directFetch says fetchOnce applies batches itself where it can; tests
// turn it off to compare with kgo.ProcessFetchPartition.
var directFetch = true

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// Byte offsets in a record batch (magic 2) of the fields read.
const (
	batchLength     = 8
	batchMagic      = 16
	batchCRC        = 17
	batchAttributes = 21
	batchLastDelta  = 23
	batchCount      = 57
	batchRecords    = 61
)

// Batch attributes.
const (
	attrCodec   = 0x07
	attrControl = 0x20
)

// batchRec is one decoded record of a batch: its offset and where its key
// and value are in the batch's records (start -1 for null).
type batchRec struct {
	offset     int64
	key, value [2]int32
}

// applyDirect applies the records of rp, fetched for c from c.pv.next on,
// and returns the next offset to fetch and the records kept. ok is false
// when it applied nothing and rp must go through kgo.ProcessFetchPartition.
// recs is scratch, returned for the next call.
func applyDirect(c *cursor, rp *kmsg.FetchResponseTopicPartition, dec kgo.Decompressor, recs []batchRec) (next int64, kept int, ok bool, _ []batchRec) {
	if !directFetch || c.view.OnRecord != nil || rp.ErrorCode != 0 || len(rp.AbortedTransactions) > 0 {
		return 0, 0, false, recs
	}
	next = c.pv.Next
	applied := false
	in := rp.RecordBatches
	for len(in) > batchMagic+1 {
		first := int64(binary.BigEndian.Uint64(in))
		size := int64(int32(binary.BigEndian.Uint32(in[batchLength:]))) + batchLength + 4
		if size < batchLength+4 || int64(len(in)) < size {
			break // truncated: the rest comes with the next fetch, as with kgo
		}
		b := in[:size]
		in = in[size:]
		raw, good := batchBody(b, dec)
		var last int64
		if good {
			last = first + int64(int32(binary.BigEndian.Uint32(b[batchLastDelta:])))
			recs, good = decodeBatch(raw, first, int32(binary.BigEndian.Uint32(b[batchCount:])), recs[:0])
		}
		if !good {
			if !applied {
				return 0, 0, false, recs
			}
			return next, kept, true, recs // this batch on goes through kgo next time
		}
		applied = true
		if last < next {
			continue
		}
		control := int16(binary.BigEndian.Uint16(b[batchAttributes:]))&attrControl != 0
		for i := range recs {
			r := &recs[i]
			if r.offset < next {
				continue
			}
			next = r.offset + 1
			if control {
				continue
			}
			kept++
			if r.offset < c.end {
				c.view.ApplyKV(c.pv, spanOf(raw, r.key), spanOf(raw, r.value), r.offset)
			}
		}
		next = max(next, last+1)
	}
	return next, kept, true, recs
}

// batchBody checks batch b (its length field already checked) and returns
// its records, decompressed.
func batchBody(b []byte, dec kgo.Decompressor) ([]byte, bool) {
	if len(b) < batchRecords || b[batchMagic] != 2 {
		return nil, false
	}
	if crc32.Checksum(b[batchAttributes:], crc32c) != binary.BigEndian.Uint32(b[batchCRC:]) {
		return nil, false
	}
	raw := b[batchRecords:]
	if codec := binary.BigEndian.Uint16(b[batchAttributes:]) & attrCodec; codec != 0 {
		out, err := dec.Decompress(raw, kgo.CompressionCodecType(codec))
		if err != nil {
			return nil, false
		}
		raw = out
	}
	return raw, true
}

// decodeBatch appends the count records of raw, a batch's records whose
// first offset is first, to recs. It fails unless raw holds exactly count
// well-formed records.
func decodeBatch(raw []byte, first int64, count int32, recs []batchRec) ([]batchRec, bool) {
	if count < 0 || int64(count) > int64(len(raw)) || len(raw) > 1<<31-1 {
		return recs, false
	}
	p := 0
	for range count {
		n, w := binary.Varint(raw[p:])
		if w <= 0 || n < 1 || n > int64(len(raw)-p-w) {
			return recs, false
		}
		p += w
		end := p + int(n)
		q := p + 1 // attributes
		var ok bool
		if _, q, ok = varintAt(raw[:end], q); !ok { // timestamp delta
			return recs, false
		}
		var delta int64
		if delta, q, ok = varintAt(raw[:end], q); !ok {
			return recs, false
		}
		r := batchRec{offset: first + delta}
		if r.key, q, ok = bytesAt(raw[:end], q); !ok {
			return recs, false
		}
		if r.value, _, ok = bytesAt(raw[:end], q); !ok {
			return recs, false
		}
		recs = append(recs, r) // headers are not read
		p = end
	}
	return recs, p == len(raw)
}

// varintAt reads the zigzag varint of b at i.
func varintAt(b []byte, i int) (int64, int, bool) {
	if i >= len(b) {
		return 0, i, false
	}
	v, w := binary.Varint(b[i:])
	if w <= 0 {
		return 0, i, false
	}
	return v, i + w, true
}

// bytesAt reads the length-prefixed bytes of b at i (length -1 for null)
// and returns where they are.
func bytesAt(b []byte, i int) ([2]int32, int, bool) {
	n, i, ok := varintAt(b, i)
	if !ok || n < -1 || n > int64(len(b)-i) {
		return [2]int32{}, i, false
	}
	if n < 0 {
		return [2]int32{-1, 0}, i, true
	}
	return [2]int32{int32(i), int32(i + int(n))}, i + int(n), true
}

// spanOf returns the bytes of raw at s, nil for null, non-nil when empty
// (as kgo's records have them).
func spanOf(raw []byte, s [2]int32) []byte {
	if s[0] < 0 {
		return nil
	}
	return raw[s[0]:s[1]:s[1]]
}

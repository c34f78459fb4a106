// Package frames is how snapshot documents and journal segments are
// compressed: independent zstd frames, concatenated into one zstd stream
// that every zstd decoder reads whole. The store writes them, and a capture
// that compresses a partition as soon as it was read makes the same frames
// ahead of the store.
//
// The functions to know are [Encoder], which lends an encoder from a pool,
// and [Release], which gives it back.
package frames

import (
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// level and window are how documents are compressed. On snapshot
// documents (JSON with repeated field names and key prefixes) SpeedFastest
// with a 1 MiB window compresses about as well as SpeedDefault does, in
// less time and memory. Readers need no setting: any level and window
// decode.
const (
	level  = zstd.SpeedFastest
	window = 1 << 20
)

// encoders are the encoders frames are compressed with; each holds a few
// MiB of tables, so they are reused.
var encoders sync.Pool

// Encoder returns an encoder from the pool, or a new one. It is used
// through EncodeAll only, which runs on the caller's goroutine; Release
// gives it back.
func Encoder() (*zstd.Encoder, error) {
	if zw, ok := encoders.Get().(*zstd.Encoder); ok {
		return zw, nil
	}
	zw, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(level), zstd.WithWindowSize(window), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, fmt.Errorf("create zstd encoder: %w", err)
	}
	return zw, nil
}

// Release puts zw back in the pool.
func Release(zw *zstd.Encoder) { encoders.Put(zw) }

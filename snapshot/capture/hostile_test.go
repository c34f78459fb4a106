package capture

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/keyview"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/kread"
)

// TestViewMemoryHostileShapes feeds a partition view, as a read applies
// fetched records (compacting after every batch), the shapes that could
// make its memory outgrow the data, and checks what the view and the
// streamed capture's index of it hold against the snapshot's memory goal,
// 2 × the live keys and values + 64 MiB, and against a tighter bound where
// the shape allows one. The sizes are counted, not measured with the
// collector, so the test is exact.
func TestViewMemoryHostileShapes(t *testing.T) {
	const mib = 1 << 20
	big := `["big",{"k":"` + strings.Repeat("x", mib) + `"}]`
	cases := []struct {
		name string
		feed func(apply func(key, value []byte))
		// slack is what the view may hold past twice its live bytes once
		// read (during the read it may hold 64 MiB past twice the most it
		// held live).
		slack int64
	}{
		{"one key of 1 MiB written 10 times", func(apply func(key, value []byte)) {
			for i := range 10 {
				apply([]byte(big), []byte(fmt.Sprintf(`{"position":%d}`, i)))
			}
		}, 2 * mib},
		{"one value of 1 MiB rewritten 20 times", func(apply func(key, value []byte)) {
			for i := range 20 {
				apply([]byte(`["c",{"k":1}]`), []byte(`{"v":"`+strings.Repeat("y", mib-i)+`"}`))
			}
		}, 2 * mib},
		{"a million tiny keys in one partition, each written twice", func(apply func(key, value []byte)) {
			for round := range 2 {
				for i := range 1_000_000 {
					apply(fmt.Appendf(nil, `["t",{"k":%d}]`, i), fmt.Appendf(nil, `{"o":%d}`, i*round))
				}
			}
		}, 64 * mib},
		{"a topic of tombstones only", func(apply func(key, value []byte)) {
			for i := range 1_000_000 {
				apply(fmt.Appendf(nil, `["t",{"k":%d}]`, i), nil)
			}
		}, 0},
		{"a million keys written, then all tombstoned", func(apply func(key, value []byte)) {
			for i := range 1_000_000 {
				apply(fmt.Appendf(nil, `["t",{"k":%d}]`, i), []byte(`{"position":123456789}`))
			}
			for i := range 1_000_000 {
				apply(fmt.Appendf(nil, `["t",{"k":%d}]`, i), nil)
			}
		}, 2 * mib},
	}
	// The views are hundreds of megabytes of garbage afterwards: collect
	// them here rather than during the tests that follow.
	defer runtime.GC()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pv := keyview.NewPartView(0)
			v := &keyview.TopicView{Name: "connect-offsets"}
			var offset int64
			var peak, most int64 // past 2 × the most live bytes; the most
			c.feed(func(key, value []byte) {
				pv.Next = offset + 1
				kread.Apply(v, pv, &kgo.Record{Key: key, Value: value, Offset: offset})
				offset++
				if offset%4096 == 0 { // a fetched batch
					pv.MaybeCompact()
					most = max(most, pv.Live)
					peak = max(peak, pv.Footprint()-2*most)
				}
			})
			pv.MaybeCompact()
			ix, _ := indexPart("connect-offsets", 0, 1, pv, keyScope{false, func(string) bool { return true }}, nil)
			held := pv.Footprint() + int64(cap(ix.part.entries))*int64(unsafe.Sizeof(keyRef(0)))
			t.Logf("live %d bytes in %d keys; view %d bytes, with the index %d; worst view past 2 × the most live during the read %d", pv.Live, pv.Len(), pv.Footprint(), held, peak)
			if cap := 2*pv.Live + 64*mib; held > cap {
				t.Errorf("view and index hold %d bytes, more than 2 × live + 64 MiB = %d", held, cap)
			}
			if over := pv.Footprint() - 2*pv.Live; over > c.slack {
				t.Errorf("view holds %d bytes past 2 × live (%d bytes), more than %d", over, pv.Live, c.slack)
			}
			if peak > 64*mib {
				t.Errorf("during the read the view held %d bytes past 2 × its most live bytes, more than 64 MiB", peak)
			}
		})
	}
}

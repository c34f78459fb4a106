package snapshot

import (
	"fmt"
	"hash/maphash"
	"testing"
)

// The tail's last values: set, get, overwrite and remove by key, the
// values intact across compactions, and the arena bounded under steady
// rewrites (about twice the live values, or compactAbove).
func TestLastValues(t *testing.T) {
	lv := newLastValues(maphash.MakeSeed())
	key := func(i int) []byte { return fmt.Appendf(nil, `["conn-%d",{"file":"/data/%d"}]`, i%7, i) }
	const keys = 5000
	for round := 0; round < 40; round++ {
		for i := 0; i < keys; i++ {
			lv.set(key(i), fmt.Appendf(nil, `{"position":%d}`, round*keys+i))
		}
	}
	for i := 0; i < keys; i += 3 {
		lv.remove(key(i))
	}
	lv.set(key(1), []byte{})
	for i := 0; i < keys; i++ {
		v, ok := lv.get(key(i))
		switch {
		case i%3 == 0:
			if ok {
				t.Fatalf("key %d removed, still has %q", i, v)
			}
		case i == 1:
			if !ok || v == nil || len(v) != 0 {
				t.Fatalf("key 1 set empty: %q %v", v, ok)
			}
		default:
			if want := fmt.Sprintf(`{"position":%d}`, 39*keys+i); !ok || string(v) != want {
				t.Fatalf("key %d: %q %v, want %s", i, v, ok, want)
			}
		}
	}
	if want := keys - (keys+2)/3; lv.len() != want {
		t.Fatalf("%d keys held, want %d", lv.len(), want)
	}
	if lv.arena.size > 2*lv.live+compactAbove+64 {
		t.Fatalf("arena of %d bytes for %d live bytes after 40 rewrites of every key", lv.arena.size, lv.live)
	}
}

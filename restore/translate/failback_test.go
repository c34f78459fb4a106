package translate_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/restore/translate"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// TestTranslateFailbackReverseMirror: the state of a cluster that took
// over by a MirrorMaker 2 failover (its sinks on a.orders, the copy of
// the old primary's orders) translated back into the old primary, which
// has no a.orders (MM2 mirrors no topic back to the cluster it came
// from) nor b.a.orders (what a reverse flow's alias b names it). The
// miss named no way through ("name it with --map-topic a.orders=<topic>"),
// and the old primary's group positions on orders, not in the state,
// were deleted by the restore. Now the miss's fix is --map-topic
// a.orders=orders, the positions on orders are kept, and with the fix
// each partition translates by timestamp to the record its copy holds.
func TestTranslateFailbackReverseMirror(t *testing.T) {
	m := newMigration(t)
	ctx := t.Context()
	over, _, err := translate.Translate(ctx, m.b, m.snap, translate.TranslateOptions{Method: translate.TranslateMM2, SourceAlias: "a"})
	if err != nil {
		t.Fatal(err)
	}
	restoreAll(t, m.b, over, restore.Options{AllowOtherCluster: true})
	state, err := capture.Capture(ctx, m.b, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	state.ID = "20250101T000000.000000Z-000002"
	before, err := kadm.NewClient(m.a).FetchOffsets(ctx, connectdemo.GroupSinkES)
	if err != nil {
		t.Fatal(err)
	}

	back, tr, err := translate.Translate(ctx, m.a, state, translate.TranslateOptions{Method: translate.TranslateMM2, SourceAlias: "b"})
	if err != nil {
		t.Fatal(err)
	}
	misses := 0
	for _, o := range tr.Untranslated() {
		if o.Group == connectdemo.GroupSinkES {
			misses++
			if o.Topic != "a.orders" || o.Fix != "--map-topic a.orders=orders" {
				t.Errorf("%s/%d missed with fix %q: %s", o.Topic, o.Partition, o.Fix, o.Why)
			}
		}
	}
	if misses == 0 {
		t.Fatalf("nothing of %s missed back on the old primary: %+v", connectdemo.GroupSinkES, tr.Offsets)
	}
	kept := groupOffsets(back)[connectdemo.GroupSinkES]["orders"]
	before.Each(func(o kadm.OffsetResponse) {
		if o.Topic == "orders" && kept[o.Partition] != o.At {
			t.Errorf("the old primary's position on orders/%d: %d in the translated state, want it kept at %d", o.Partition, kept[o.Partition], o.At)
		}
	})

	_, tr, err = translate.Translate(ctx, m.a, state, translate.TranslateOptions{Method: translate.TranslateMM2, SourceAlias: "b",
		MapTopics: map[string]string{"a.orders": "orders"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range tr.Offsets {
		if o.Group != connectdemo.GroupSinkES {
			continue
		}
		// The last consumed record of a.orders is at Old-1; its copy's
		// original is Old-1-shift in orders, which is read again.
		want := o.Old - 1 - m.mirror.Shift["orders"][o.Partition]
		if o.Untranslated || o.NewTopic != "orders" || o.New != want || o.Method != translate.MethodTimestamp {
			t.Errorf("%s/%d -> %s by %s: %d -> %d, want orders at %d (%s)", o.Topic, o.Partition, o.NewTopic, o.Method, o.Old, o.New, want, o.Why)
		}
	}
}

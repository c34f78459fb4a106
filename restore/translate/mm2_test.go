package translate_test

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/offsetkeeper/offsetkeeper/restore/translate"
)

func TestMM2Codecs(t *testing.T) {
	// Checkpoint{group "g", topic "a.t", partition 3, upstream 10, downstream 12, metadata ""}
	// as Checkpoint.recordKey/recordValue write it: Kafka STRINGs (int16
	// length), INT32, a version INT16 header, INT64s.
	key, _ := hex.DecodeString("0001" + "67" + "0003" + "612e74" + "00000003")
	value, _ := hex.DecodeString("0000" + "000000000000000a" + "000000000000000c" + "0000")
	c, err := translate.ParseCheckpoint(key, value)
	if err != nil {
		t.Fatal(err)
	}
	want := translate.Checkpoint{Group: "g", Topic: "a.t", Partition: 3, Upstream: 10, Downstream: 12}
	if c != want {
		t.Fatalf("got %+v, want %+v", c, want)
	}
	if !bytes.Equal(c.AppendKey(nil), key) || !bytes.Equal(c.AppendValue(nil), value) {
		t.Fatal("encoded again, the bytes differ")
	}
	if _, err := translate.ParseCheckpoint(key, append([]byte{0, 1}, value[2:]...)); err == nil || !strings.Contains(err.Error(), "version 1") {
		t.Fatalf("version 1: %v", err)
	}
	if _, err := translate.ParseCheckpoint(key[:5], value); err == nil {
		t.Fatal("a short key decoded")
	}
	// OffsetSync{topic "t", partition 0, upstream 5, downstream 7}: no version.
	skey, _ := hex.DecodeString("0001" + "74" + "00000000")
	svalue, _ := hex.DecodeString("0000000000000005" + "0000000000000007")
	s, err := translate.ParseOffsetSync(skey, svalue)
	if err != nil || s != (translate.OffsetSync{Topic: "t", Upstream: 5, Downstream: 7}) {
		t.Fatalf("%+v, %v", s, err)
	}
	if !bytes.Equal(s.AppendKey(nil), skey) || !bytes.Equal(s.AppendValue(nil), svalue) {
		t.Fatal("offset sync encoded again, the bytes differ")
	}
	if translate.CheckpointsTopic("a") != "a.checkpoints.internal" || translate.OffsetSyncsTopic("b") != "mm2-offset-syncs.b.internal" {
		t.Fatal("topic names")
	}
}

func TestOffsetSyncStore(t *testing.T) {
	var st translate.OffsetSyncStore
	for _, s := range [][2]int64{{0, 100}, {10, 110}, {20, 125}} {
		st.Add(translate.OffsetSync{Topic: "t", Upstream: s[0], Downstream: s[1]})
	}
	for _, tc := range []struct {
		u, want int64
		ok      bool
	}{
		{0, 100, true}, {5, 101, true}, {10, 110, true}, {19, 111, true}, {20, 125, true}, {99, 126, true},
	} {
		if got, _, ok := st.Translate("t", 0, tc.u); got != tc.want || ok != tc.ok {
			t.Errorf("translate %d: %d %v, want %d %v", tc.u, got, ok, tc.want, tc.ok)
		}
	}
	// MM2 restarted from scratch: the syncs before the rewind are void,
	// so an offset below the new first sync cannot be translated.
	st.Add(translate.OffsetSync{Topic: "t", Upstream: 15, Downstream: 300})
	if got, s, ok := st.Translate("t", 0, 12); ok || got != -1 || s.Upstream != 15 {
		t.Errorf("after the rewind, 12: %d %+v %v", got, s, ok)
	}
	if _, _, ok := st.Translate("other", 0, 1); ok || st.Has("other", 0) {
		t.Error("a partition without syncs translated")
	}
}

// TestTranslateRefusals: what cannot be translated says why and is left
// out of the translated snapshot.
func TestTranslateRefusals(t *testing.T) {
	m := newMigration(t)
	ctx := t.Context()
	adm := kadm.NewClient(m.b)
	// A copy that stamps LogAppendTime.
	if _, err := adm.CreateTopic(ctx, 1, -1, map[string]*string{"message.timestamp.type": kadm.StringPtr("LogAppendTime")}, "lat.customers"); err != nil {
		t.Fatal(err)
	}
	out, tr, err := translate.Translate(ctx, m.b, m.snap, translate.TranslateOptions{
		Method: translate.TranslateTimestamp, TopicPrefix: "a.", MapTopics: map[string]string{"legacy.customers": "lat.customers", "clicks": "gone"},
	})
	if err != nil {
		t.Fatal(err)
	}
	why := map[string]string{}
	for _, o := range tr.Untranslated() {
		why[o.Topic] = o.Why
	}
	if !strings.Contains(why["legacy.customers"], "LogAppendTime on the target") || !strings.Contains(why["clicks"], `topic "gone" does not exist on the target`) || why["orders"] != "" {
		t.Fatalf("untranslated: %q", why)
	}
	for _, g := range out.SinkGroups {
		for _, o := range g.Offsets {
			if o.Topic != "a.orders" {
				t.Errorf("group %s kept %s/%d", g.Group, o.Topic, o.Partition)
			}
		}
	}

	// A snapshot older than the group's checkpoints would skip records.
	old := *m.snap
	old.SinkGroups = nil
	for _, g := range m.snap.SinkGroups {
		g.Offsets = append(g.Offsets[:0:0], g.Offsets...)
		for i := range g.Offsets {
			g.Offsets[i].Offset -= 2
			g.Offsets[i].LastConsumed = nil
		}
		old.SinkGroups = append(old.SinkGroups, g)
	}
	_, tr, err = translate.Translate(ctx, m.b, &old, translate.TranslateOptions{Method: translate.TranslateMM2, SourceAlias: "a", Margin: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, o := range tr.Untranslated() {
		if o.Group == "connect-es-sink-orders" && strings.Contains(o.Why, "checkpoints are all past the snapshot's offset") {
			n++
		}
		if o.Group == "archive-loader" && !strings.Contains(o.Why, "no last consumed record") {
			t.Errorf("archive-loader %s/%d: %s", o.Topic, o.Partition, o.Why)
		}
	}
	if n != 6 {
		t.Errorf("%d of the es sink's partitions refused for newer checkpoints, want 6:\n%+v", n, tr.Untranslated())
	}
}

// TestTranslateRefusesSourceLogAppendTime: a sink partition whose topic
// stamps LogAppendTime on the source cluster cannot be translated by
// timestamp (the copies carry other times); the others still are. kfake
// stamps LogAppendTime only when the producer sets the batch attribute and
// then leaves a CRC no client accepts, so the snapshot is marked by hand.
func TestTranslateRefusesSourceLogAppendTime(t *testing.T) {
	m := newMigration(t)
	snap := *m.snap
	snap.SinkGroups = nil
	marked := map[string]bool{}
	for _, g := range m.snap.SinkGroups {
		g.Offsets = append(g.Offsets[:0:0], g.Offsets...)
		for i := range g.Offsets {
			if g.Offsets[i].Topic != "orders" || g.Offsets[i].LastConsumed == nil {
				continue
			}
			lc := *g.Offsets[i].LastConsumed
			lc.LogAppendTime = true
			g.Offsets[i].LastConsumed = &lc
			marked[g.Group] = true
		}
		snap.SinkGroups = append(snap.SinkGroups, g)
	}
	if len(marked) == 0 {
		t.Fatal("no sink offset of topic orders with a last consumed record in the snapshot")
	}
	_, tr, err := translate.Translate(t.Context(), m.b, &snap, translate.TranslateOptions{Method: translate.TranslateTimestamp, TopicPrefix: "a."})
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, o := range tr.Untranslated() {
		if o.Topic != "orders" {
			continue
		}
		refused++
		if !strings.Contains(o.Why, "LogAppendTime on the source cluster") {
			t.Errorf("%s %s/%d: %s", o.Group, o.Topic, o.Partition, o.Why)
		}
	}
	if refused == 0 {
		t.Fatalf("no orders partition refused: %+v", tr.Untranslated())
	}
}

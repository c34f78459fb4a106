package connectdemo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The doc's verified vectors (docs/connect-offsets.md §3).
func TestMurmur2Vectors(t *testing.T) {
	for _, tc := range []struct {
		key  string
		n    int32
		want int32
	}{
		{`["source-file-01",{"filename":"/data/testdata.txt"}]`, 25, 20},
		{`["inventory-connector",{"server":"dbserver1"}]`, 25, 11},
		{`["inventory-connector",{"server":"server1"}]`, 25, 8},
	} {
		if got := Murmur2Partition([]byte(tc.key), tc.n); got != tc.want {
			t.Errorf("Murmur2Partition(%s, %d) = %d, want %d", tc.key, tc.n, got, tc.want)
		}
		// franz-go's partitioner must agree, since Seed relies on it.
		r := &kgo.Record{Key: []byte(tc.key)}
		if got := kgo.StickyKeyPartitioner(nil).ForTopic("t").Partition(r, int(tc.n)); int32(got) != tc.want {
			t.Errorf("StickyKeyPartitioner(%s, %d) = %d, want %d", tc.key, tc.n, got, tc.want)
		}
	}
	for i := range 2000 { // every length mod 4, odd bytes
		key := bytes.Repeat([]byte{byte(i), 0xff, byte(i * 7)}, i%11)
		r := &kgo.Record{Key: key}
		if got, want := kgo.StickyKeyPartitioner(nil).ForTopic("t").Partition(r, 25), Murmur2Partition(key, 25); int32(got) != want {
			t.Fatalf("key %x: franz-go %d, ours %d", key, got, want)
		}
	}
}

// Both doc vectors are seeded by DefaultSpec, so capture tests can rely on them.
func TestDefaultSpecHasDocVectors(t *testing.T) {
	want := map[string]bool{
		`["source-file-01",{"filename":"/data/testdata.txt"}]`: false,
		`["inventory-connector",{"server":"dbserver1"}]`:       false,
	}
	for _, b := range DefaultSpec().Writes {
		for _, r := range b.Records {
			if _, ok := want[string(r.Key)]; ok && r.Topic == DefaultOffsetsTopic && !r.Forced {
				want[string(r.Key)] = true
			}
		}
	}
	for k, found := range want {
		if !found {
			t.Errorf("DefaultSpec does not write %s", k)
		}
	}
}

// javaHashMapOrder is java.util.HashMap's iteration order for keys put in
// this order into a map whose table starts at initCap (16 for new
// HashMap<>()), per docs/connect-offsets.md §2.
func javaHashMapOrder(keys []string, initCap int) []string {
	c := initCap
	for float64(len(keys)) > 0.75*float64(c) {
		c *= 2
	}
	bucket := func(s string) int {
		var h int32
		for _, u := range utf16.Encode([]rune(s)) {
			h = 31*h + int32(u)
		}
		spread := uint32(h) ^ (uint32(h) >> 16)
		return int(spread & uint32(c-1))
	}
	out := slices.Clone(keys)
	slices.SortStableFunc(out, func(a, b string) int { return bucket(a) - bucket(b) })
	return out
}

// objectFields returns the field names of the partition map of an offsets
// key, in wire order.
func objectFields(t *testing.T, key []byte) []string {
	t.Helper()
	var pair []json.RawMessage
	if err := json.Unmarshal(key, &pair); err != nil || len(pair) != 2 {
		t.Fatalf("key %s is not a pair: %v", key, err)
	}
	dec := json.NewDecoder(bytes.NewReader(pair[1]))
	dec.Token() // {
	var out []string
	for dec.More() {
		tok, _ := dec.Token()
		out = append(out, tok.(string))
		var skip json.RawMessage
		dec.Decode(&skip)
	}
	return out
}

// Seed trusts Record.Connector: a record that names one has a
// [name,{map}] key for that name.
func TestDefaultSpecConnectorKeys(t *testing.T) {
	spec := DefaultSpec()
	spec.ExtraFileConnectors, spec.FilesPerConnector = 3, 3
	batches := slices.Clone(spec.Writes)
	for b := range bulkBatches(spec.withDefaults()) {
		batches = append(batches, b)
	}
	for _, b := range batches {
		for _, r := range b.Records {
			if r.Connector == "" {
				continue
			}
			var pair []json.RawMessage
			var name string
			var part map[string]any
			if json.Unmarshal(r.Key, &pair) != nil || len(pair) != 2 || json.Unmarshal(pair[0], &name) != nil ||
				json.Unmarshal(pair[1], &part) != nil || part == nil || name != r.Connector {
				t.Errorf("record for %q has key %s", r.Connector, r.Key)
			}
		}
	}
}

// The field orders in DefaultSpec are the ones the connectors' Java maps
// produce.
func TestDefaultSpecFieldOrder(t *testing.T) {
	put := map[string]struct {
		inserted []string
		cap      int
	}{
		ConnSQLServer:  {[]string{"server", "database"}, 16},
		ConnMongo:      {[]string{"server_id", "rs"}, 16},
		ConnJDBC:       {[]string{"table", "protocol"}, 16},
		ConnMirror:     {[]string{"topic", "partition", "cluster"}, 16},
		ConnCheckpoint: {[]string{"group", "topic", "partition"}, 16},
		ConnHeartbeat:  {[]string{"sourceClusterAlias", "targetClusterAlias"}, 16},
	}
	copyOrder := strings.Join(javaHashMapOrder([]string{"topic", "partition", "cluster"}, 8), ",")
	if copyOrder != "topic,cluster,partition" {
		t.Fatalf("copy-constructed MM2 order = %s, doc says topic,cluster,partition", copyOrder)
	}
	seen := 0
	for _, b := range DefaultSpec().Writes {
		for _, r := range b.Records {
			want, ok := put[r.Connector]
			if !ok || (r.Topic != DefaultOffsetsTopic && r.Topic != EOSOffsetsTopic) {
				continue
			}
			seen++
			got := strings.Join(objectFields(t, r.Key), ",")
			if got == copyOrder && r.Connector == ConnMirror {
				continue // the deliberate copy-constructed key
			}
			if w := strings.Join(javaHashMapOrder(want.inserted, want.cap), ","); got != w {
				t.Errorf("%s key %s: fields %s, Java HashMap gives %s", r.Connector, r.Key, got, w)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no HashMap-based keys checked")
	}
}

// jacksonString is a string as Jackson's UTF8JsonGenerator writes it.
func jacksonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04X`, r)
		case r > 0xFFFF:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04X\u%04X`, r1, r2)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// jacksonReencode decodes JSON and writes it back the way Jackson would,
// keeping field order and number literals.
func jacksonReencode(data []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var b strings.Builder
	var value func() error
	value = func() error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch v := tok.(type) {
		case json.Delim:
			closer := map[json.Delim]string{'{': "}", '[': "]"}[v]
			b.WriteString(v.String())
			for first := true; dec.More(); first = false {
				if !first {
					b.WriteByte(',')
				}
				if v == '{' {
					k, err := dec.Token()
					if err != nil {
						return err
					}
					b.WriteString(jacksonString(k.(string)) + ":")
				}
				if err := value(); err != nil {
					return err
				}
			}
			dec.Token()
			b.WriteString(closer)
		case string:
			b.WriteString(jacksonString(v))
		case json.Number:
			b.WriteString(v.String())
		case bool:
			fmt.Fprint(&b, v)
		case nil:
			b.WriteString("null")
		}
		return nil
	}
	err := value()
	return b.String(), err
}

// Every JSON key and value DefaultSpec writes is byte-identical to what
// Jackson would write for it: compact, raw UTF-8 and <>&, upper-case
// surrogate escapes.
func TestDefaultSpecIsJacksonBytes(t *testing.T) {
	var sawSurrogate, sawU2028, sawControl bool
	for _, b := range DefaultSpec().Writes {
		for _, r := range b.Records {
			for _, data := range [][]byte{r.Key, r.Value} {
				if r.Topic != DefaultOffsetsTopic && r.Topic != EOSOffsetsTopic && r.Topic != DefaultConfigsTopic {
					continue
				}
				if data == nil || !json.Valid(data) {
					continue // tombstones, binary garbage, string config keys
				}
				got, err := jacksonReencode(data)
				if err != nil {
					t.Fatalf("re-encode %s: %v", data, err)
				}
				if got != string(data) {
					t.Errorf("not Jackson bytes:\n have %s\n want %s", data, got)
				}
				sawSurrogate = sawSurrogate || bytes.Contains(data, []byte(`\uD83D\uDE00`))
				sawU2028 = sawU2028 || bytes.Contains(data, []byte("\u2028"))
				sawControl = sawControl || bytes.Contains(data, []byte(`\u001F`))
			}
		}
	}
	if !sawSurrogate || !sawU2028 || !sawControl {
		t.Errorf("DefaultSpec lacks a hostile key: surrogate %v, U+2028 %v, \\u001F %v", sawSurrogate, sawU2028, sawControl)
	}
}

func newTestCluster(t *testing.T) *kgo.Client {
	t.Helper()
	c, err := NewCluster()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl := newTestClient(t, c.ListenAddrs())
	t.Cleanup(cl.Close)
	return cl
}

func newTestClient(tb testing.TB, seeds []string) *kgo.Client {
	tb.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		tb.Fatal(err)
	}
	return cl
}

// readCommitted reads topics from the start with read_committed and
// returns the last write per partition and key; tombstones delete. It
// returns once nothing new arrived for idle.
func readCommitted(t *testing.T, ctx context.Context, cl *kgo.Client, topics ...string) map[string]map[int32]map[string][]byte {
	t.Helper()
	c, err := newClient(cl,
		kgo.ConsumeTopics(topics...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil || ends.Error() != nil {
		t.Fatalf("list end offsets: %v %v", err, ends.Error())
	}
	out := map[string]map[int32]map[string][]byte{}
	for {
		pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		fs := c.PollFetches(pctx)
		cancel()
		n := 0
		fs.EachRecord(func(r *kgo.Record) {
			n++
			byP := out[r.Topic]
			if byP == nil {
				byP = map[int32]map[string][]byte{}
				out[r.Topic] = byP
			}
			m := byP[r.Partition]
			if m == nil {
				m = map[string][]byte{}
				byP[r.Partition] = m
			}
			if r.Value == nil {
				delete(m, string(r.Key))
				if len(m) == 0 {
					delete(byP, r.Partition)
				}
				return
			}
			m[string(r.Key)] = r.Value
		})
		for _, e := range fs.Errors() {
			if e.Err != context.DeadlineExceeded {
				t.Fatalf("fetch %s/%d: %v", e.Topic, e.Partition, e.Err)
			}
		}
		if n == 0 {
			return out
		}
	}
}

// configFacts reads connectors from the live config topic the way the
// worker does (docs §7), plus the connectors only the offsets name.
func configFacts(t *testing.T, live map[int32]map[string][]byte, offsetsKeys []string) map[string]Connector {
	t.Helper()
	cfg := live[0]
	out := map[string]Connector{}
	for key, val := range cfg {
		name, ok := strings.CutPrefix(key, "connector-")
		if !ok {
			continue
		}
		var v struct{ Properties map[string]string }
		if err := json.Unmarshal(val, &v); err != nil {
			t.Fatalf("config %s: %v", key, err)
		}
		c := Connector{Name: name, Type: TypeSource, Class: v.Properties["connector.class"], HasConfig: true, TargetState: StateStarted, Tasks: -1,
			OffsetsTopic: v.Properties["offsets.storage.topic"], ExactlyOnce: v.Properties["exactly.once.support"]}
		// MM2's MirrorSourceConnector has a topics setting too: a reader
		// must not take every connector with topics for a sink.
		if (v.Properties["topics"] != "" || v.Properties["topics.regex"] != "") && !strings.Contains(c.Class, ".mirror.Mirror") {
			c.Type = TypeSink
			c.Group = "connect-" + name
			if g := v.Properties["consumer.override.group.id"]; g != "" {
				c.Group = g
			}
		}
		if ts, ok := cfg["target-state-"+name]; ok {
			var s map[string]any
			json.Unmarshal(ts, &s)
			if v2, ok := s["state.v2"].(string); ok {
				c.TargetState = v2
			} else {
				c.TargetState = s["state"].(string)
			}
		}
		out[name] = c
	}
	for _, key := range offsetsKeys {
		var pair []json.RawMessage
		var name string
		if json.Unmarshal([]byte(key), &pair) != nil || len(pair) != 2 || json.Unmarshal(pair[0], &name) != nil {
			continue
		}
		if _, ok := out[name]; !ok {
			out[name] = Connector{Name: name, Type: TypeUnknown, Tasks: -1}
		}
	}
	for name, c := range out {
		if commit, ok := cfg["commit-"+name]; ok {
			var v struct{ Tasks int }
			json.Unmarshal(commit, &v)
			c.Tasks = v.Tasks
			out[name] = c
		}
	}
	return out
}

// The seeder's self-check: what a read_committed consumer finds in the
// topics is exactly Expected, and Expected's facts match the config topic.
func TestSeedDefaultSpec(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := newTestCluster(t)
	spec := DefaultSpec()
	spec.ExtraFileConnectors, spec.FilesPerConnector, spec.Seed = 30, 20, 7
	spec.LiveSinkMember = true
	exp, err := Seed(ctx, cl, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer exp.Stop()

	tracked := append(slices.Clone(exp.OffsetsTopics), DefaultConfigsTopic, DefaultStatusTopic)
	if want := []string{DefaultOffsetsTopic, EOSOffsetsTopic}; !slices.Equal(exp.OffsetsTopics, want) {
		t.Errorf("OffsetsTopics = %v, want %v", exp.OffsetsTopics, want)
	}
	got := readCommitted(t, ctx, cl, tracked...)
	for _, topic := range tracked {
		want := exp.LiveKeys(topic)
		if len(want) == 0 {
			t.Errorf("Expected has nothing live in %s", topic)
		}
		for p := range mergeKeys(want, got[topic]) {
			w, g := want[p], got[topic][p]
			for k := range mergeKeys(w, g) {
				if !bytes.Equal(w[k], g[k]) {
					t.Errorf("%s/%d key %q: expected %q, topic has %q", topic, p, k, w[k], g[k])
				}
			}
		}
	}

	// Partitions: doc vectors and the kcat -p 11 duplicate.
	off := exp.LiveKeys(DefaultOffsetsTopic)
	if _, ok := off[20][`["source-file-01",{"filename":"/data/testdata.txt"}]`]; !ok {
		t.Error("source-file-01 key not live in partition 20")
	}
	if _, ok := off[11][`["inventory-connector",{"server":"dbserver1"}]`]; !ok {
		t.Error("inventory-connector key not live in partition 11")
	}
	stale := `["inventory-connector",{"server":"server1"}]`
	if len(exp.Duplicates) != 1 || exp.Duplicates[0].Key != stale || !slices.Equal(exp.Duplicates[0].Partitions, []int32{8, 11}) {
		t.Errorf("Duplicates = %+v, want %s in [8 11]", exp.Duplicates, stale)
	}
	unparsed := 0
	for _, topic := range exp.OffsetsTopics {
		for _, m := range got[topic] {
			for k := range m {
				var pair []json.RawMessage
				var name string
				var part map[string]any
				if json.Unmarshal([]byte(k), &pair) != nil || len(pair) != 2 || json.Unmarshal(pair[0], &name) != nil ||
					json.Unmarshal(pair[1], &part) != nil || part == nil {
					unparsed++
				}
			}
		}
	}
	if exp.UnparsedKeys != 3 || unparsed != 3 {
		t.Errorf("UnparsedKeys = %d, topics hold %d, want 3", exp.UnparsedKeys, unparsed)
	}
	// Aborted writes are not live anywhere.
	for _, topic := range tracked {
		for _, m := range got[topic] {
			for k, v := range m {
				if strings.Contains(k, "shop.ghost") || strings.Contains(k, "pgpayments-replica") || strings.Contains(k, "ghost-connector") ||
					bytes.Contains(v, []byte("999999")) || bytes.Contains(v, []byte(`"txId":799`)) {
					t.Errorf("aborted write visible in %s: %s = %s", topic, k, v)
				}
			}
		}
	}
	if n := exp.LiveCount(DefaultOffsetsTopic); n < 30*20*9/10 {
		t.Errorf("only %d live keys in %s with 600 bulk keys", n, DefaultOffsetsTopic)
	}

	// Connector facts agree with the config topic.
	var keys []string
	for _, topic := range exp.OffsetsTopics {
		for _, m := range got[topic] {
			keys = slices.AppendSeq(keys, maps.Keys(m))
		}
	}
	facts := configFacts(t, got[DefaultConfigsTopic], keys)
	for name := range mergeKeys(facts, exp.Connectors) {
		w := exp.Connectors[name]
		w.Counter = ""
		if facts[name] != w {
			t.Errorf("connector %q:\n config topic says %+v\n Expected says     %+v", name, facts[name], w)
		}
	}

	// Groups.
	adm := kadm.NewClient(cl)
	for _, g := range spec.Groups {
		fo, err := adm.FetchOffsets(ctx, g.Name)
		if err != nil || fo.Error() != nil {
			t.Fatalf("fetch offsets of %s: %v %v", g.Name, err, fo.Error())
		}
		for _, o := range g.Offsets {
			r, ok := fo.Lookup(o.Topic, o.Partition)
			if !ok || r.At != o.Offset || r.LeaderEpoch != -1 || r.Metadata != "" {
				t.Errorf("group %s %s/%d = %+v, want %d", g.Name, o.Topic, o.Partition, r, o.Offset)
			}
		}
		_, captured := exp.Groups[g.Name]
		if captured == slices.Contains(exp.NotCaptured, g.Name) {
			t.Errorf("group %s is both or neither captured and not captured", g.Name)
		}
	}
	if exp.LiveMemberGroup != GroupSinkES {
		t.Errorf("LiveMemberGroup = %q", exp.LiveMemberGroup)
	}
	if state, members := groupState(t, ctx, adm, GroupSinkES); state != "Stable" || members != 1 {
		t.Errorf("live group is %s with %d members, want Stable with 1", state, members)
	}
	exp.Stop()
	if state, members := groupState(t, ctx, adm, GroupSinkES); state != "Empty" || members != 0 {
		t.Errorf("after Stop the group is %s with %d members, want Empty", state, members)
	}
}

func groupState(t *testing.T, ctx context.Context, adm *kadm.Client, group string) (string, int) {
	t.Helper()
	dg, err := adm.DescribeGroups(ctx, group)
	if err != nil || dg.Error() != nil {
		t.Fatalf("describe group %s: %v %v", group, err, dg.Error())
	}
	return dg[group].State, len(dg[group].Members)
}

func mergeKeys[K comparable, V1, V2 any](a map[K]V1, b map[K]V2) map[K]struct{} {
	out := map[K]struct{}{}
	for k := range a {
		out[k] = struct{}{}
	}
	for k := range b {
		out[k] = struct{}{}
	}
	return out
}

// Churn advances running sources and active groups only, and stops
// cleanly with its context.
func TestChurn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := newTestCluster(t)
	spec := DefaultSpec()
	spec.LiveSinkMember = true
	exp, err := Seed(ctx, cl, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer exp.Stop()

	// Churn's loop returns nil when its context ends, mid-tick or not.
	cctx, ccancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer ccancel()
	if err := Churn(cctx, cl, spec, 10*time.Millisecond); err != nil {
		t.Fatalf("Churn = %v, want nil on ctx end", err)
	}
	// Two whole ticks, deterministically.
	ch, err := newChurner(cl, spec.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	defer ch.close()
	for range 2 {
		if err := ch.tick(ctx); err != nil {
			t.Fatal(err)
		}
	}

	got := readCommitted(t, ctx, cl, exp.OffsetsTopics...)
	changed := map[string]bool{}
	for _, topic := range exp.OffsetsTopics {
		for p, m := range got[topic] {
			for k, v := range m {
				if w := exp.LiveKeys(topic)[p][k]; !bytes.Equal(w, v) {
					var pair []json.RawMessage
					var name string
					json.Unmarshal([]byte(k), &pair)
					json.Unmarshal(pair[0], &name)
					changed[name] = true
				}
			}
		}
	}
	for _, name := range []string{ConnFile, ConnMySQL, ConnMirror, ConnJDBC, ConnEOS} {
		if !changed[name] {
			t.Errorf("running connector %s not churned", name)
		}
	}
	for _, name := range []string{ConnSQLServer, ConnMongo, ConnUnicode, ConnJDBCLegacy, ConnDeleted, ConnCheckpoint} {
		if changed[name] {
			t.Errorf("connector %s churned but is not running or has no counter", name)
		}
	}

	adm := kadm.NewClient(cl)
	for _, tc := range []struct {
		group string
		moved bool
	}{{GroupForeign, true}, {GroupSinkES, false}, {GroupSinkS3, false}} {
		fo, err := adm.FetchOffsets(ctx, tc.group)
		if err != nil || fo.Error() != nil {
			t.Fatalf("fetch offsets of %s: %v %v", tc.group, err, fo.Error())
		}
		var g Group
		for _, sg := range spec.Groups {
			if sg.Name == tc.group {
				g = sg
			}
		}
		o := g.Offsets[0]
		r, _ := fo.Lookup(o.Topic, o.Partition)
		if moved := r.At != o.Offset; moved != tc.moved {
			t.Errorf("group %s %s/%d at %d (seeded %d), moved %v want %v", tc.group, o.Topic, o.Partition, r.At, o.Offset, moved, tc.moved)
		}
	}
}

func TestBump(t *testing.T) {
	re := regexpFor("pos")
	got := string(bump(re, []byte(`{"ts_sec":1700000000,"file":"mysql-bin.000003","pos":154,"row":1}`), 10))
	if want := `{"ts_sec":1700000000,"file":"mysql-bin.000003","pos":164,"row":1}`; got != want {
		t.Errorf("bump = %s, want %s", got, want)
	}
}

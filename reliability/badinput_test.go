package reliability

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// noPanic fails the test when a run's output shows a Go panic or a crash.
func noPanic(t *testing.T, what string, r result) {
	t.Helper()
	for _, s := range []string{"panic:", "goroutine ", "fatal error:", "SIGSEGV"} {
		if strings.Contains(r.stderr, s) || strings.Contains(r.stdout, s) {
			t.Errorf("%s crashed: %s", what, r)
			return
		}
	}
}

// TestMalformedOffsetsRecords: keys that are not Connect keys (not JSON,
// binary, a JSON string, a number, truncated, too deep, empty, three
// elements, a name that is not a string), null keys,
// values that are not JSON or not UTF-8, and a value near the broker's
// 1 MiB limit are captured byte for byte (unparsed keys kept raw, with a
// warning), shown, verified and left alone by a restore, which still
// restores the rest, the huge value included.
func TestMalformedOffsetsRecords(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	off := connectdemo.DefaultOffsetsTopic
	huge := append([]byte(`{"position":1,"blob":"`), bytes.Repeat([]byte("x"), 900<<10)...)
	huge = append(huge, `"}`...)
	hugeKey := key(connectdemo.ConnFile, `{"filename":"/data/huge.txt"}`)
	weird := map[string][]byte{
		"not JSON":          []byte("not json at all"),
		"binary":            {0x00, 0xff, 0xfe, 0x80, 0x01, '[', '"'},
		"JSON string":       []byte(`"just-a-string"`),
		"JSON number":       []byte(`42`),
		"truncated":         []byte(`["` + connectdemo.ConnFile + `",{"filename":`),
		"too deep":          bytes.Repeat([]byte("["), 5000),
		"empty":             {},
		"three elements":    []byte(`["a",{"b":1},3]`),
		"name not a string": []byte(`[1,{"b":1}]`),
	}
	recs := []*kgo.Record{
		{Topic: off, Key: hugeKey, Value: huge},
		{Topic: off, Key: key(connectdemo.ConnFile, `{"filename":"/data/not-json.txt"}`), Value: []byte("not json")},
		{Topic: off, Key: key(connectdemo.ConnFile, `{"filename":"/data/binary.txt"}`), Value: []byte{0xc3, 0x28, 0x00}},
		{Topic: off, Key: nil, Value: []byte(`{"null":"key"}`)},
	}
	for _, k := range weird {
		recs = append(recs, &kgo.Record{Topic: off, Key: k, Value: []byte(`{"v":1}`)})
	}
	// And garbage in the config topic, as the worker would skip it.
	cfg := connectdemo.DefaultConfigsTopic
	recs = append(recs,
		&kgo.Record{Topic: cfg, Key: []byte("connector-garbage"), Value: []byte("not json")},
		&kgo.Record{Topic: cfg, Key: []byte("target-state-garbage"), Value: []byte(`{"state":42}`)},
		&kgo.Record{Topic: cfg, Key: []byte("commit-garbage"), Value: []byte(`{"tasks":"two"}`)},
		&kgo.Record{Topic: cfg, Key: []byte{0xff, 0x00}, Value: []byte{0xff}},
		&kgo.Record{Topic: cfg, Key: nil, Value: []byte("x")},
	)
	c.produce(recs...)

	r := c.mustBin(0, "snapshot")
	noPanic(t, "snapshot", r)
	id := lastLine(r.stdout)
	// Keys kept raw are harmless (Connect keeps them too): the summary
	// counts them instead of a warning (issue 29).
	if !strings.Contains(r.stdout, "(unparsed ") || strings.Contains(r.stderr, "kept raw") {
		t.Errorf("snapshot: want the raw keys counted on stdout (unparsed N), not warned:\n%s\n%s", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "null key") {
		t.Errorf("snapshot does not warn %q:\n%s", "null key", r.stderr)
	}

	// Every weird record is in the snapshot, byte for byte.
	r = c.mustBin(0, "show", id, "--output", "json")
	snap, err := snapshot.Decode([]byte(r.stdout))
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]snapshot.SourceOffset{}
	for _, o := range snap.SourceTable().Collect() {
		if o.Topic == off {
			byKey[string(o.Key)] = o
		}
	}
	for name, k := range weird {
		o, ok := byKey[string(k)]
		switch {
		case !ok:
			t.Errorf("%s key %q is not in the snapshot", name, k)
		case o.ParseError == "" || o.Connector != "":
			t.Errorf("%s key %q was not kept raw with a parse error: %+v", name, k, o)
		}
	}
	if o := byKey[string(hugeKey)]; !bytes.Equal(o.Value, huge) {
		t.Errorf("the %d-byte value came back as %d bytes", len(huge), len(o.Value))
	}
	if o := byKey[string(key(connectdemo.ConnFile, `{"filename":"/data/binary.txt"}`))]; !bytes.Equal(o.Value, []byte{0xc3, 0x28, 0x00}) {
		t.Errorf("a value that is not UTF-8 came back as %q", o.Value)
	}
	for _, args := range [][]string{
		{"show", id},
		{"show", id, "--connector", connectdemo.ConnFile, "--output", "connect-rest"},
		{"verify", id},
		{"diff", id, "--live"},
		{"restore", id, "--dry-run"},
	} {
		noPanic(t, strings.Join(args, " "), c.mustBin(0, args...))
	}

	// A restore puts the huge value back and leaves the raw keys alone.
	c.produce(&kgo.Record{Topic: off, Key: hugeKey, Value: []byte(`{"position":0}`)})
	for _, k := range weird {
		c.produce(&kgo.Record{Topic: off, Key: k, Value: []byte(`{"v":2}`)})
	}
	r = c.mustBin(0, "restore", id)
	noPanic(t, "restore", r)
	if !strings.Contains(r.stdout, "verified:") {
		t.Errorf("restore did not verify:\n%s", r.stdout)
	}
	live := c.capture()
	for _, o := range live.SourceTable().Collect() {
		if o.Topic != off {
			continue
		}
		if bytes.Equal(o.Key, hugeKey) && !bytes.Equal(o.Value, huge) {
			t.Errorf("restore wrote %d bytes for the huge value, want %d", len(o.Value), len(huge))
		}
		for name, k := range weird {
			if bytes.Equal(o.Key, k) && string(o.Value) != `{"v":2}` {
				t.Errorf("restore touched the %s key: %q", name, o.Value)
			}
		}
	}
}

// objectPath is where the file store keeps snapshot id.
func objectPath(st, id string) string {
	return filepath.Join(st, "snapshots", id+".snap")
}

// rewrite replaces a stored object's bytes, keeping its metadata sidecar.
func rewrite(t *testing.T, st, id string, data []byte) {
	t.Helper()
	if err := os.WriteFile(objectPath(st, id), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// wrap builds a well-formed object around doc, with header fields
// overridden by over.
func wrap(t *testing.T, doc []byte, over map[string]any) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	body := enc.EncodeAll(doc, nil)
	sum := sha256.Sum256(body)
	h := map[string]any{"format": "offsetkeeper-snapshot", "version": 1, "compression": "zstd", "sha256": hex.EncodeToString(sum[:]), "body_size": len(body)}
	for k, v := range over {
		h[k] = v
	}
	head, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	return append(append(head, '\n'), body...)
}

// TestBadSnapshotObjects: a stored object that is truncated, damaged, of
// an unknown format version, or not a snapshot at all is reported by
// verify (exit 1, FAIL naming the problem), refused by show and restore
// (exit 1, nothing written), and never crashes anything.
func TestBadSnapshotObjects(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	good := c.snapshotID()
	data, err := os.ReadFile(objectPath(c.store, good))
	if err != nil {
		t.Fatal(err)
	}
	nl := bytes.IndexByte(data, '\n')
	s, _, err := c.openStore().Snapshots().GetWith(context.Background(), good, nil)
	if err != nil {
		t.Fatal(err)
	}
	var doc bytes.Buffer
	if err := s.Encode(&doc); err != nil {
		t.Fatal(err)
	}
	withVersion := func(v int) []byte {
		var m map[string]any
		if err := json.Unmarshal(doc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		m["version"] = v
		out, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	c.damage(1) // so that a restore would have work to do

	st := c.openStore()
	for i, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty object", []byte{}, "no header line"},
		{"header only", data[:nl+1], "truncated"},
		{"truncated half way", data[:nl+1+(len(data)-nl-1)/2], "truncated"},
		{"one byte short", data[:len(data)-1], "truncated"},
		{"trailing data", append(bytes.Clone(data), "garbage"...), "trailing data"},
		{"flipped body byte", flip(data, len(data)-3), "checksum"},
		{"flipped header byte", flip(data, nl/2), ""},
		{"object format version 2", bytes.Replace(data, []byte(`"version":1`), []byte(`"version":2`), 1), "unsupported snapshot format version 2"},
		{"document version 7", wrap(t, withVersion(7), nil), "unsupported snapshot format version 7"},
		{"document truncated", wrap(t, doc.Bytes()[:doc.Len()/2], nil), "snapshot is corrupt"},
		{"body not zstd", wrap(t, nil, map[string]any{"compression": "gzip"}), `compressed with "gzip"`},
		{"not an offsetkeeper object", []byte("PK\x03\x04 a zip file\n"), "snapshot is corrupt"},
		{"another snapshot's document", wrap(t, bytes.Replace(doc.Bytes(), []byte(good), []byte("20200101T000000.000000Z-abcdef"), 1), nil), "not the object's ID"},
		{"unknown encryption", wrap(t, doc.Bytes(), map[string]any{"encryption": "rot13"}), "rot13"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rewrite(t, c.store, good, tc.data)
			defer rewrite(t, c.store, good, data)
			ends := c.ends(offsetsTopics...)
			stored := listIDs(t, st)

			r := c.bin("verify", good)
			noPanic(t, "verify", r)
			if r.code != 1 || !strings.Contains(r.stdout, "FAIL "+good) || !strings.Contains(r.stdout, tc.want) {
				t.Errorf("verify: want exit 1 and FAIL %s ... %q, got %s", good, tc.want, r)
			}
			if i%4 == 0 { // the other readers, for some
				r = c.bin("verify")
				if r.code != 1 || !strings.Contains(r.stderr, "do not restore them") {
					t.Errorf("verify of the whole store: %s", r)
				}
				r = c.bin("show", good)
				noPanic(t, "show", r)
				if r.code != 1 || !strings.Contains(r.stderr, good) {
					t.Errorf("show: want exit 1 naming %s, got %s", good, r)
				}
			}
			r = c.bin("restore", good)
			noPanic(t, "restore", r)
			if r.code != 1 || !strings.Contains(r.stderr, "do not restore it; nothing was written") || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("restore: want exit 1, %q and 'nothing was written', got %s", tc.want, r)
			}
			if got := c.ends(offsetsTopics...); got != ends {
				t.Errorf("a refused restore wrote to the offsets topics")
			}
			if got := listIDs(t, st); len(got) != len(stored) {
				t.Errorf("a refused restore stored a snapshot: %v", got)
			}
		})
	}
	// Restored: the object verifies again.
	c.mustBin(0, "verify", good)
}

// listIDs lists a store's snapshot IDs in process.
func listIDs(t *testing.T, st *store.Store) []string {
	t.Helper()
	infos, err := st.Snapshots().List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, i := range infos {
		ids = append(ids, i.ID)
	}
	return ids
}

// checkIDs lists the store's snapshots through the binary.
func checkIDs(t *testing.T, c *cluster) []snapshot.Info {
	t.Helper()
	r := c.mustBin(0, "list", "--output", "json")
	var infos []snapshot.Info
	if err := json.Unmarshal([]byte(r.stdout), &infos); err != nil {
		t.Fatalf("list --output json: %v\n%s", err, r.stdout)
	}
	return infos
}

func flip(data []byte, i int) []byte {
	out := bytes.Clone(data)
	out[i] ^= 0x20
	return out
}

// TestBadFlags: wrong flags, arguments and settings fail with exit 2 (or 1
// for a setting that is well formed but wrong) and a message naming the
// mistake; none crashes or writes anything.
func TestBadFlags(t *testing.T) {
	c := newCluster(t, nil)
	props := filepath.Join(t.TempDir(), "worker.properties")
	if err := os.WriteFile(props, []byte("bootstrap.servers=\\u12G4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		env  []string
		code int
		want string
	}{
		{args: []string{"snapshot", "--bogus"}, code: 2, want: "bogus"},
		{args: []string{"snapshot", "extra"}, code: 2, want: `unexpected argument "extra"`},
		{args: []string{"snapshot", "--kafka-timeout", "soon"}, code: 2, want: "kafka-timeout"},
		{args: []string{"snapshot"}, env: []string{"OFFSETKEEPER_KAFKA_TIMEOUT=soon"}, code: 2, want: "OFFSETKEEPER_KAFKA_TIMEOUT"},
		{args: []string{"snapshot", "--log-level", "loud"}, code: 2, want: "--log-level"},
		{args: []string{"restore"}, code: 2, want: "missing snapshot ID"},
		{args: []string{"restore", "latest", "--dry-run", "extra"}, code: 2, want: `unexpected argument "extra"`},
		{args: []string{"restore", "latest", "--source-only", "--sink-only"}, code: 2, want: "exclude each other"},
		{args: []string{"list", "--output", "yaml"}, code: 2, want: "yaml"},
		{args: []string{"prune"}, code: 2, want: "--keep"},
		{args: []string{"daemon", "--schedule", "every hour"}, code: 2, want: "schedule"},
		{args: []string{"nosuchcommand"}, code: 2, want: "unknown command"},
		{args: []string{"show", "20300101T000000.000000Z-abcdef"}, code: 1, want: "not found"},
		{args: []string{"restore", "latest"}, code: 1, want: "no snapshots"},
		{args: []string{"snapshot", "--brokers", "not a host"}, code: 1, want: "--brokers"},
		{args: []string{"snapshot", "--worker-config", "/nonexistent/worker.properties"}, code: 1, want: "/nonexistent/worker.properties"},
		{args: []string{"snapshot", "--worker-config", props}, code: 1, want: "malformed"},
	} {
		name := strings.Join(tc.args, " ")
		if len(tc.env) > 0 {
			name = strings.Join(tc.env, " ") + " " + name
		}
		t.Run(name, func(t *testing.T) {
			st := t.TempDir()
			env := append(c.env(), "OFFSETKEEPER_STORE="+st)
			r := runBin(t, append(env, tc.env...), tc.args...)
			noPanic(t, name, r)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("want exit %d and %q on stderr, got %s", tc.code, tc.want, r)
			}
			if entries, _ := os.ReadDir(filepath.Join(st, "snapshots")); len(entries) > 0 {
				t.Errorf("a failed command wrote %d files to the store", len(entries))
			}
		})
	}
}

// TestMissingAndMisconfiguredTopics: an offsets or config topic that does
// not exist, an empty cluster, and an offsets topic with
// cleanup.policy=delete each get a message naming the topic and what to do;
// nothing is stored or written.
func TestMissingAndMisconfiguredTopics(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	id := c.snapshotID()
	empty := newCluster(t, nil)

	for _, tc := range []struct {
		name string
		c    *cluster
		args []string
		code int
		want []string
	}{
		{"snapshot of a missing offsets topic", c, []string{"snapshot", "--offsets-topic", "no-such-offsets"}, 1,
			[]string{`read offsets topic "no-such-offsets": topic does not exist`, "--offsets-topic"}},
		{"snapshot of a missing config topic", c, []string{"snapshot", "--config-topic", "no-such-configs"}, 1,
			[]string{`read config topic "no-such-configs": topic does not exist`, "--config-topic"}},
		{"snapshot of an empty cluster", empty, []string{"snapshot"}, 1,
			[]string{"topic does not exist"}},
		{"restore into a missing offsets topic", c, []string{"restore", id, "--offsets-topic", "no-such-offsets"}, 1,
			[]string{"no-such-offsets (the worker offsets topic)", "--topic no-such-offsets", "kafka-topics.sh", "nothing was written"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.store = c.store
			before := checkIDs(t, c)
			r := tc.c.bin(tc.args...)
			noPanic(t, tc.name, r)
			if r.code != tc.code {
				t.Fatalf("want exit %d, got %s", tc.code, r)
			}
			for _, w := range tc.want {
				if !strings.Contains(flat(r.stderr), w) { // wrapped to 120 columns
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
			if after := checkIDs(t, c); len(after) != len(before) {
				t.Errorf("a failed command stored a snapshot")
			}
		})
	}

	// cleanup.policy=delete on the offsets topic: a worker would refuse to
	// start on it, and so does a restore (exit 3, the fix named).
	t.Run("restore into an offsets topic with cleanup.policy=delete", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		resp, err := c.adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "cleanup.policy", Value: kadm.StringPtr("delete")}}, connectdemo.DefaultOffsetsTopic)
		if err == nil {
			_, err = resp.On(connectdemo.DefaultOffsetsTopic, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		c.damage(1)
		ends := c.ends(offsetsTopics...)
		before := checkIDs(t, c)
		for _, args := range [][]string{{"restore", id, "--dry-run"}, {"restore", id}} {
			r := c.bin(args...)
			noPanic(t, strings.Join(args, " "), r)
			if r.code != 3 {
				t.Fatalf("%v: want exit 3, got %s", args, r)
			}
			// A dry run lists the refusals on stdout, after the plan.
			where, out, nothing := "stderr", r.stderr, "nothing was written"
			if slices.Contains(args, "--dry-run") {
				where, out, nothing = "stdout", r.stdout, "dry run: nothing written; the restore would be refused (1 problem)"
			}
			for _, w := range []string{`offsets topic "connect-offsets" has cleanup.policy=delete`, "kafka-configs.sh", "cleanup.policy=compact", nothing} {
				if !strings.Contains(out, w) {
					t.Errorf("%v: %s lacks %q:\n%s", args, where, w, out)
				}
			}
		}
		if got := c.ends(offsetsTopics...); got != ends {
			t.Error("a refused restore wrote to the offsets topics")
		}
		if after := checkIDs(t, c); len(after) != len(before) {
			t.Error("a refused restore stored an undo snapshot")
		}
		// A snapshot of it still works: the records are read as they are.
		r := c.mustBin(0, "snapshot")
		noPanic(t, "snapshot", r)
		t.Logf("snapshot of an offsets topic with cleanup.policy=delete:\n%s", r.stderr)
	})
}

package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"gocloud.dev/blob"

	"github.com/offsetkeeper/offsetkeeper/internal/s3test"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// storeBackend opens an empty Store for a conformance test. dir is the
// directory of a local store, empty for the others.
type storeBackend struct {
	name string
	open func(t *testing.T) (st *Store, dir string)
}

// storeBackends are the real buckets every store behaviour is checked on.
var storeBackends = []storeBackend{
	{"file", func(t *testing.T) (*Store, string) {
		dir := t.TempDir()
		return openTestStore(t, dir), dir
	}},
	{"mem", func(t *testing.T) (*Store, string) {
		return openTestStore(t, "mem://"), ""
	}},
	{"s3", func(t *testing.T) (*Store, string) {
		return openTestStore(t, s3test.Start(t)), ""
	}},
}

// openTestStore opens the store at url and closes it when the test ends.
func openTestStore(t *testing.T, url string) *Store {
	t.Helper()
	st, err := OpenStore(context.Background(), url)
	if err != nil {
		t.Fatalf("OpenStore(%q): %v", url, err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	return st
}

// TestStoreConformance runs the same checks against every backend.
func TestStoreConformance(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, st *Store, dir string)
	}{
		{"RoundTrip", testRoundTrip},
		{"ListAndResolve", testListAndResolve},
		{"Delete", testDelete},
		{"Damaged", testDamaged},
		{"Exists", testExists},
		{"CancelledPut", testCancelledPut},
		{"PutDefaultsAndValidation", testPutDefaultsAndValidation},
		{"CopiedWithoutMetadata", testCopiedWithoutMetadata},
	}
	for _, b := range storeBackends {
		t.Run(b.name, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					st, dir := b.open(t)
					tt.run(t, st, dir)
				})
			}
		})
	}
}

// trickyKeys are source offset keys and values that a lossy codec would
// change: HTML characters, U+2028, a Jackson-style escaped surrogate pair
// kept as raw ASCII, invalid UTF-8, an empty value.
var trickyKeys = []struct{ key, value []byte }{
	{[]byte(`["src->dst",{"file":"a->b"}]`), []byte(`{"position":1}`)},
	{[]byte(`["html",{"q":"<>&"}]`), []byte(`{"offset":"<>&'"}`)},
	{[]byte("[\"sep\",{\"line\":\"a\u2028b\u2029c\"}]"), []byte("{\"pos\":\"\u2028\"}")},
	{[]byte(`["emoji",{"k":"\uD83D\uDE00"}]`), []byte(`{"v":"\uD83D\uDE00 raw escape"}`)},
	{[]byte{0xff, 0xfe, 0x00, 'b', 'i', 'n', 0x80}, []byte{0xc3, 0x28, 0x00}},
	{[]byte(`["empty",{"p":0}]`), []byte{}},
}

// testSnapshot returns a snapshot without ID holding trickyKeys, two
// connectors and a sink group.
func testSnapshot() *snapshot.Snapshot {
	s := &snapshot.Snapshot{
		ProgramVersion: "test",
		ClusterID:      "cluster-<1>",
		Reason:         snapshot.ReasonManual,
		Topics: []snapshot.Topic{
			{Name: "connect-offsets", Role: snapshot.RoleOffsets, Partitions: []snapshot.TopicPartition{{Partition: 0, StartOffset: 0, EndOffset: 42}}},
			{Name: "connect-configs", Role: snapshot.RoleConfig, Partitions: []snapshot.TopicPartition{{Partition: 0, StartOffset: 3, EndOffset: 9}}},
		},
		Connectors: []snapshot.Connector{
			{Name: "src", Type: snapshot.TypeSource, Class: "io.example.Source", HasConfig: true, TargetState: snapshot.StateStarted, Tasks: 2},
			{Name: "sink", Type: snapshot.TypeSink, HasConfig: true, TargetState: snapshot.StatePaused, Tasks: 1, Group: "connect-sink"},
		},
		SinkGroups: []snapshot.SinkGroup{{
			Group: "connect-sink", Connector: "sink", State: "Empty",
			Offsets: []snapshot.SinkOffset{{Topic: "orders", Partition: 3, Offset: 1234, LeaderEpoch: 7, Metadata: "m"}},
		}},
		Warnings: []string{"1 key did not parse"},
	}
	for i, k := range trickyKeys {
		s.AppendSourceOffsets(snapshot.SourceOffset{
			Topic: "connect-offsets", Partition: int32(i % 2), Offset: int64(100 + i),
			Key: snapshot.Bytes(k.key), Value: snapshot.Bytes(k.value), Connector: "src",
		})
	}
	s.Normalize()
	return s
}

// mustPut puts snap and fails the test on error.
func mustPut(t *testing.T, st *Store, snap *snapshot.Snapshot) snapshot.Info {
	t.Helper()
	info, err := st.Snapshots().Put(context.Background(), snap)
	if err != nil {
		t.Fatalf("Put: %v", err)
	}
	return info
}

// mustList lists the store and fails the test on error.
func mustList(t *testing.T, st *Store) []snapshot.Info {
	t.Helper()
	infos, err := st.Snapshots().List(context.Background())
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	return infos
}

// idsOf returns the IDs of infos.
func idsOf(infos []snapshot.Info) []string {
	ids := make([]string, len(infos))
	for i, info := range infos {
		ids[i] = info.ID
	}
	return ids
}

func testRoundTrip(t *testing.T, st *Store, _ string) {
	ctx := context.Background()
	want := testSnapshot()
	put := mustPut(t, st, want)

	got, info, err := st.Snapshots().GetWith(ctx, put.ID, nil)
	if err != nil {
		t.Fatalf("Get(%s): %v", put.ID, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Get returned a different snapshot:\n got %+v\nwant %+v", got, want)
	}
	if got.SourceKeys() != len(trickyKeys) {
		t.Fatalf("got %d source offsets, want %d", got.SourceKeys(), len(trickyKeys))
	}
	for i, o := range got.SourceTable().Collect() {
		w := *want.SourceTable().At(int32(i))
		if !bytes.Equal(o.Key, w.Key) || !bytes.Equal(o.Value, w.Value) || (o.Value == nil) != (w.Value == nil) {
			t.Errorf("source offset %d: got key %q value %q, want key %q value %q", i, o.Key, o.Value, w.Key, w.Value)
		}
	}
	if !reflect.DeepEqual(info, put) {
		t.Errorf("Get info = %+v, Put info = %+v", info, put)
	}
	if list := mustList(t, st); len(list) != 1 || !reflect.DeepEqual(list[0], put) {
		t.Errorf("List = %+v, want [%+v]", list, put)
	}
	if v, err := st.Snapshots().Verify(ctx, put.ID); err != nil || !reflect.DeepEqual(v, put) {
		t.Errorf("Verify = %+v, %v; want %+v", v, err, put)
	}
}

func testListAndResolve(t *testing.T, st *Store, _ string) {
	ctx := context.Background()
	if list := mustList(t, st); len(list) != 0 {
		t.Fatalf("List of an empty store = %v", list)
	}
	if _, err := st.Snapshots().Resolve(ctx, "latest"); !errors.Is(err, snapshot.ErrNotFound) || !strings.Contains(err.Error(), "no snapshots") {
		t.Errorf("Resolve(latest) on an empty store: %v, want ErrNotFound saying no snapshots", err)
	}

	second := time.Date(2026, 11, 30, 13, 49, 20, 0, time.UTC)
	var puts []snapshot.Info
	for i, at := range []time.Time{
		second.Add(123456 * time.Microsecond),
		second.Add(123457 * time.Microsecond),
		second.Add(123457 * time.Microsecond), // same microsecond: the random suffix tells them apart
		// Zero: Put assigns now, strictly later each time.
		{},
		{},
	} {
		snap := testSnapshot()
		snap.CreatedAt = at
		snap.SinkGroups = snap.SinkGroups[:i%2]
		puts = append(puts, mustPut(t, st, snap))
	}
	if puts[0].ID >= puts[1].ID || puts[3].ID >= puts[4].ID {
		t.Errorf("IDs out of creation order: %v", idsOf(puts))
	}
	if puts[1].ID == puts[2].ID {
		t.Errorf("two snapshots of the same microsecond got the same ID %s", puts[1].ID)
	}

	// Objects that are not snapshots are ignored. (The ID has hex letters,
	// so that its upper-case form is not an ID.)
	id := "20261130T134920.000000Z-abcdef"
	for _, key := range []string{
		keyPrefix + "README.txt",
		keyPrefix + "not-an-id.snap",
		keyPrefix + id + ".snap.17f3a2b4c5d6e7f8.tmp",
		keyPrefix + "sub/" + id + ".snap",
		"other/" + id + ".snap",
		keyPrefix + strings.ToUpper(id) + ".snap",
	} {
		if err := st.bucket.WriteAll(ctx, key, []byte("junk"), nil); err != nil {
			t.Fatalf("write %s: %v", key, err)
		}
	}

	list := mustList(t, st)
	want := slices.Clone(puts)
	slices.SortFunc(want, func(a, b snapshot.Info) int { return strings.Compare(a.ID, b.ID) })
	if !reflect.DeepEqual(list, want) {
		t.Errorf("List =\n%+v\nwant (oldest first)\n%+v", list, want)
	}
	groups := 0
	for i, info := range list {
		groups += info.SinkGroups
		if info.Connectors != 2 || info.SourceKeys != len(trickyKeys) || info.Size <= 0 || len(info.SHA256) != 64 ||
			info.Reason != snapshot.ReasonManual || info.ClusterID != "cluster-<1>" {
			t.Errorf("List[%d] = %+v", i, info)
		}
	}
	if groups != 2 {
		t.Errorf("List counts %d sink groups in all, want 2", groups)
	}

	latest := list[len(list)-1].ID
	unique := puts[0].ID[:len(snapshot.IdLayout)] // the only snapshot of its microsecond
	// The shortest prefix telling apart the two snapshots of one microsecond.
	n := len(snapshot.IdLayout) + 1
	for strings.HasPrefix(puts[2].ID, puts[1].ID[:n]) {
		n++
	}
	tests := []struct {
		ref     string
		want    string
		wantErr error  // the sentinel of the error, if any
		errText string // in the error message; set for every error case
	}{
		{ref: "latest", want: latest},
		{ref: "LATEST", want: latest},
		{ref: puts[2].ID, want: puts[2].ID},
		{ref: unique, want: puts[0].ID},
		{ref: puts[1].ID[:n], want: puts[1].ID},
		{ref: puts[1].ID[:len(snapshot.IdLayout)], errText: "matches 2 snapshots"},
		{ref: "2026", errText: "matches"},
		{ref: "1999", wantErr: snapshot.ErrNotFound, errText: "1999"},
		{ref: snapshot.NewID(second), wantErr: snapshot.ErrNotFound, errText: "not found"},
		{ref: "", errText: "empty reference"},
	}
	for _, tt := range tests {
		got, err := st.Snapshots().Resolve(ctx, tt.ref)
		switch {
		case tt.errText == "":
			if err != nil || got != tt.want {
				t.Errorf("Resolve(%q) = %q, %v; want %q", tt.ref, got, err, tt.want)
			}
		case err == nil:
			t.Errorf("Resolve(%q) = %q, want an error", tt.ref, got)
		case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
			t.Errorf("Resolve(%q): %v, want %v", tt.ref, err, tt.wantErr)
		case !strings.Contains(err.Error(), tt.errText):
			t.Errorf("Resolve(%q): %v, want it to say %q", tt.ref, err, tt.errText)
		}
	}
	// An ambiguous prefix names the candidates and is not "not found".
	_, err := st.Snapshots().Resolve(ctx, "2026")
	if errors.Is(err, snapshot.ErrNotFound) || !strings.Contains(err.Error(), puts[0].ID) {
		t.Errorf("Resolve(2026): %v, want an ambiguity error naming %s", err, puts[0].ID)
	}

	for _, ref := range []string{"latest", unique} {
		snap, info, err := st.Snapshots().GetWith(ctx, ref, nil)
		if err != nil {
			t.Fatalf("Get(%q): %v", ref, err)
		}
		if snap.ID != info.ID || (ref == "latest" && info.ID != latest) {
			t.Errorf("Get(%q) = snapshot %s, info %s", ref, snap.ID, info.ID)
		}
	}
}

func testDelete(t *testing.T, st *Store, dir string) {
	ctx := context.Background()
	a := mustPut(t, st, testSnapshot())
	b := mustPut(t, st, testSnapshot())
	for _, ref := range []string{"latest", a.ID[:10], ""} {
		if err := st.Snapshots().Delete(ctx, ref); err == nil || errors.Is(err, snapshot.ErrNotFound) {
			t.Errorf("Delete(%q): %v, want a refusal: only full IDs are deleted", ref, err)
		}
	}
	if err := st.Snapshots().Delete(ctx, a.ID); err != nil {
		t.Fatalf("Delete(%s): %v", a.ID, err)
	}
	if err := st.Snapshots().Delete(ctx, a.ID); !errors.Is(err, snapshot.ErrNotFound) || !strings.Contains(err.Error(), a.ID) {
		t.Errorf("second Delete(%s): %v, want ErrNotFound naming the ID", a.ID, err)
	}
	if _, _, err := st.Snapshots().GetWith(ctx, a.ID, nil); !errors.Is(err, snapshot.ErrNotFound) || !strings.Contains(err.Error(), a.ID) {
		t.Errorf("Get(deleted %s): %v, want ErrNotFound naming the ID", a.ID, err)
	}
	if got := idsOf(mustList(t, st)); !reflect.DeepEqual(got, []string{b.ID}) {
		t.Errorf("List after Delete = %v, want [%s]", got, b.ID)
	}
	if dir != "" {
		// fileblob keeps metadata in a sidecar, and a local store's
		// claim (see localclaim.go) is another; Delete removes them all.
		if files := filesUnder(t, dir); !reflect.DeepEqual(files, []string{
			"snapshots/" + b.ID + ".snap", "snapshots/" + b.ID + ".snap.attrs", "snapshots/" + b.ID + ".snap.excl",
		}) {
			t.Errorf("files after Delete: %v", files)
		}
	}
}

// filesUnder lists the regular files under dir, slash-separated and
// relative to dir.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		files = append(files, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatalf("walk %s: %v", dir, err)
	}
	return files
}

// rawObject builds a stored object from a header and a document by hand.
// The header gets the body's sha256 and body_size unless it sets them; the
// body is the zstd-compressed doc, or doc itself when compress is false.
func rawObject(t *testing.T, header map[string]any, doc []byte, compress bool) []byte {
	t.Helper()
	body := doc
	if compress {
		enc, err := zstd.NewWriter(nil)
		if err != nil {
			t.Fatal(err)
		}
		body = enc.EncodeAll(doc, nil)
	}
	h := map[string]any{"format": objectFormat, "version": snapshot.Version, "compression": compressionZstd}
	sum := sha256.Sum256(body)
	h["sha256"], h["body_size"] = hex.EncodeToString(sum[:]), len(body)
	for k, v := range header {
		if v == nil {
			delete(h, k)
		} else {
			h[k] = v
		}
	}
	line, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	return append(append(line, '\n'), body...)
}

// docWithVersion returns the JSON document of snap with its version
// replaced by v.
func docWithVersion(t *testing.T, snap *snapshot.Snapshot, v int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := snap.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	return bytes.Replace(buf.Bytes(), []byte(`{"version":1,`), []byte(`{"version":`+strconv.Itoa(v)+`,`), 1)
}

func testDamaged(t *testing.T, st *Store, _ string) {
	ctx := context.Background()
	good := testSnapshot()
	goodInfo := mustPut(t, st, good)
	stored, err := st.bucket.ReadAll(ctx, objectKey(goodInfo.ID))
	if err != nil {
		t.Fatal(err)
	}
	nl := bytes.IndexByte(stored, '\n')
	sumAt := bytes.Index(stored, []byte(`"sha256":"`)) + len(`"sha256":"`)
	// built returns an object for a fresh ID, built from a header and the
	// document of good with that ID and the given version.
	built := func(header map[string]any, version int, compress bool) func(id string) []byte {
		return func(id string) []byte {
			return rawObject(t, header, docWithVersion(t, withID(good, id), version), compress)
		}
	}

	tests := []struct {
		name string
		// damage returns a changed copy of the good object, stored in
		// its place; or build returns an object for a fresh ID.
		damage  func(b []byte) []byte
		build   func(id string) []byte
		wantErr error    // the sentinel of the error, if any
		texts   []string // in the error message; none: Get must succeed
	}{
		{
			name:    "flipped body byte",
			damage:  func(b []byte) []byte { b[nl+1+(len(b)-nl-1)/2] ^= 0x01; return b },
			wantErr: snapshot.ErrChecksum,
			texts:   []string{"modified or damaged", "take a new snapshot or restore another ID"},
		},
		{
			name: "changed header checksum",
			damage: func(b []byte) []byte {
				if b[sumAt] == '0' {
					b[sumAt] = '1'
				} else {
					b[sumAt] = '0'
				}
				return b
			},
			wantErr: snapshot.ErrChecksum,
			texts:   []string{"modified or damaged"},
		},
		{
			name:    "truncated body",
			damage:  func(b []byte) []byte { return b[:len(b)-10] },
			wantErr: snapshot.ErrCorrupt,
			texts:   []string{"truncated"},
		},
		{
			name:    "trailing data",
			damage:  func(b []byte) []byte { return append(b, 'x') },
			wantErr: snapshot.ErrCorrupt,
			texts:   []string{"trailing data"},
		},
		{
			name:    "truncated header",
			damage:  func(b []byte) []byte { return b[:nl/2] },
			wantErr: snapshot.ErrCorrupt,
			texts:   []string{"no header line"},
		},
		{
			name:    "empty object",
			damage:  func(b []byte) []byte { return nil },
			wantErr: snapshot.ErrCorrupt,
			texts:   []string{"no header line"},
		},
		{
			name:    "header not JSON",
			damage:  func(b []byte) []byte { return append([]byte("PK\x03\x04 a zip file\n"), b[nl+1:]...) },
			wantErr: snapshot.ErrCorrupt,
			texts:   []string{"decode header"},
		},
		{
			name:    "unknown format",
			build:   built(map[string]any{"format": "litestream"}, 1, true),
			wantErr: snapshot.ErrCorrupt,
			texts:   []string{`"litestream"`},
		},
		{
			name:    "header version 99",
			build:   built(map[string]any{"version": 99}, 1, true),
			wantErr: snapshot.ErrUnsupportedVersion,
			texts:   []string{"version 99"},
		},
		{
			name:    "header version 0",
			build:   built(map[string]any{"version": 0}, 1, true),
			wantErr: snapshot.ErrUnsupportedVersion,
			texts:   []string{"version 0"},
		},
		{
			name:    "header without version",
			build:   built(map[string]any{"version": nil}, 1, true),
			wantErr: snapshot.ErrCorrupt,
			texts:   []string{"no version"},
		},
		{
			name:    "header without body_size",
			build:   built(map[string]any{"body_size": nil}, 1, true),
			wantErr: snapshot.ErrCorrupt,
			texts:   []string{"no body_size"},
		},
		{
			name:    "document version 99",
			build:   built(nil, 99, true),
			wantErr: snapshot.ErrUnsupportedVersion,
			texts:   []string{"version 99"},
		},
		{
			name:  "unknown compression",
			build: built(map[string]any{"compression": "gzip"}, 1, true),
			texts: []string{`"gzip"`, "compressed"},
		},
		{
			name:  "unknown encryption",
			build: built(map[string]any{"encryption": "age"}, 1, true),
			texts: []string{`"age"`, "encrypted"},
		},
		{
			name:    "body not zstd",
			build:   built(nil, 1, false),
			wantErr: snapshot.ErrCorrupt,
			texts:   []string{"decompress"},
		},
		{
			name: "document of another ID",
			build: func(id string) []byte {
				return rawObject(t, nil, docWithVersion(t, withID(good, snapshot.NewID(time.Now())), 1), true)
			},
			wantErr: snapshot.ErrCorrupt,
			texts:   []string{"document ID"},
		},
		{
			// Readers ignore header fields they do not know, so that a
			// later build may add informative ones.
			name:  "unknown header field, encryption none",
			build: built(map[string]any{"writer": "offsetkeeper 9.9", "encryption": "none"}, 1, true),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := goodInfo.ID
			if tt.build != nil {
				id = snapshot.NewID(time.Now())
				if err := st.bucket.WriteAll(ctx, objectKey(id), tt.build(id), nil); err != nil {
					t.Fatal(err)
				}
			} else {
				if err := st.bucket.WriteAll(ctx, objectKey(id), tt.damage(bytes.Clone(stored)), nil); err != nil {
					t.Fatal(err)
				}
				defer func() {
					if err := st.bucket.WriteAll(ctx, objectKey(id), stored, nil); err != nil {
						t.Fatal(err)
					}
				}()
			}
			_, _, err := st.Snapshots().GetWith(ctx, id, nil)
			if _, verr := st.Snapshots().Verify(ctx, id); fmt.Sprint(verr) != fmt.Sprint(err) {
				t.Errorf("Get: %v; Verify: %v", err, verr)
			}
			if len(tt.texts) == 0 {
				if err != nil {
					t.Errorf("Get: %v, want success", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Get succeeded, want an error")
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("Get: %v, want %v", err, tt.wantErr)
			}
			for _, text := range append(tt.texts, id) {
				if !strings.Contains(err.Error(), text) {
					t.Errorf("Get: %v, want it to say %q", err, text)
				}
			}
		})
	}
	if _, _, err := st.Snapshots().GetWith(ctx, goodInfo.ID, nil); err != nil {
		t.Errorf("Get of the restored object: %v", err)
	}
}

// withID returns a copy of snap with ID id.
func withID(snap *snapshot.Snapshot, id string) *snapshot.Snapshot {
	c := *snap
	c.ID = id
	return &c
}

func testExists(t *testing.T, st *Store, _ string) {
	ctx := context.Background()
	first := testSnapshot()
	info := mustPut(t, st, first)

	again := testSnapshot()
	again.ID, again.CreatedAt = first.ID, first.CreatedAt
	again.Reason = snapshot.ReasonUndo
	again.Connectors = nil
	for _, snap := range []*snapshot.Snapshot{first, again} {
		if _, err := st.Snapshots().Put(ctx, snap); !errors.Is(err, snapshot.ErrExists) || !strings.Contains(err.Error(), first.ID) {
			t.Errorf("Put of stored ID %s: %v, want ErrExists naming it", first.ID, err)
		}
	}
	got, gotInfo, err := st.Snapshots().GetWith(ctx, first.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, first) || !reflect.DeepEqual(gotInfo, info) {
		t.Errorf("the stored snapshot changed after a refused Put: %+v", gotInfo)
	}
	if list := mustList(t, st); len(list) != 1 || !reflect.DeepEqual(list[0], info) {
		t.Errorf("List = %+v, want [%+v]", list, info)
	}
}

func testCancelledPut(t *testing.T, st *Store, dir string) {
	tests := []struct {
		name string
		// cancel cancels the Put's context, before it starts (the Put
		// then never cancels) or from the hook before Close.
		before, beforeClose bool
	}{
		{name: "cancelled before Put", before: true},
		{name: "cancelled before Close", beforeClose: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.before {
				cancel()
			}
			if tt.beforeClose {
				st.testHookBeforeClose = cancel
				defer func() { st.testHookBeforeClose = nil }()
			}
			snap := testSnapshot()
			_, err := st.Snapshots().Put(ctx, snap)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Put with a cancelled context: %v, want context.Canceled", err)
			}
			if snap.ID == "" {
				t.Errorf("Put did not assign an ID")
			}
			if list := mustList(t, st); len(list) != 0 {
				t.Errorf("List after a cancelled Put = %+v, want nothing", list)
			}
			if _, _, err := st.Snapshots().GetWith(context.Background(), snap.ID, nil); !errors.Is(err, snapshot.ErrNotFound) {
				t.Errorf("Get after a cancelled Put: %v, want ErrNotFound", err)
			}
			if dir != "" {
				if files := filesUnder(t, dir); len(files) != 0 {
					t.Errorf("a cancelled Put left files: %v", files)
				}
			}
			// The ID was not taken: the same snapshot can be put again.
			if _, err := st.Snapshots().Put(context.Background(), snap); err != nil {
				t.Errorf("Put after a cancelled Put: %v", err)
			}
			if err := st.Snapshots().Delete(context.Background(), snap.ID); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func testPutDefaultsAndValidation(t *testing.T, st *Store, _ string) {
	ctx := context.Background()
	snap := testSnapshot()
	snap.Version = 0
	before := time.Now().UTC().Truncate(time.Microsecond)
	info := mustPut(t, st, snap)
	if snap.Version != snapshot.Version || snap.ID == "" || snap.CreatedAt.Before(before) || snap.CreatedAt.Location() != time.UTC {
		t.Errorf("Put set version %d, ID %q, created %v", snap.Version, snap.ID, snap.CreatedAt)
	}
	if at, err := snapshot.ParseID(snap.ID); err != nil || !at.Equal(snap.CreatedAt) {
		t.Errorf("ID %s does not name CreatedAt %v (%v)", snap.ID, snap.CreatedAt, err)
	}
	if info.ID != snap.ID || !info.CreatedAt.Equal(snap.CreatedAt) {
		t.Errorf("Put info = %+v", info)
	}

	tests := []struct {
		name    string
		snap    *snapshot.Snapshot
		wantErr error
		text    string
	}{
		{name: "nil", snap: nil, text: "nil"},
		{name: "version 99", snap: &snapshot.Snapshot{Version: 99}, wantErr: snapshot.ErrUnsupportedVersion, text: "99"},
		{name: "bad ID", snap: &snapshot.Snapshot{ID: "my-snapshot"}, text: `"my-snapshot" is not a snapshot ID`},
		{name: "uppercase ID", snap: &snapshot.Snapshot{ID: "20261130T134920.123456Z-ABCDEF"}, text: "not a snapshot ID"},
	}
	for _, tt := range tests {
		_, err := st.Snapshots().Put(ctx, tt.snap)
		if err == nil || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) || !strings.Contains(err.Error(), tt.text) {
			t.Errorf("%s: Put: %v, want %v saying %q", tt.name, err, tt.wantErr, tt.text)
		}
	}
	if list := mustList(t, st); len(list) != 1 {
		t.Errorf("refused Puts stored something: %+v", list)
	}
}

// testCopiedWithoutMetadata: an object copied by a tool that drops object
// metadata is still listed, with its summary read from the document.
func testCopiedWithoutMetadata(t *testing.T, st *Store, _ string) {
	ctx := context.Background()
	info := mustPut(t, st, testSnapshot())
	raw, err := st.bucket.ReadAll(ctx, objectKey(info.ID))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Snapshots().Delete(ctx, info.ID); err != nil {
		t.Fatal(err)
	}
	if err := st.bucket.WriteAll(ctx, objectKey(info.ID), raw, &blob.WriterOptions{ContentType: "application/octet-stream"}); err != nil {
		t.Fatal(err)
	}
	if list := mustList(t, st); len(list) != 1 || !reflect.DeepEqual(list[0], info) {
		t.Errorf("List = %+v, want [%+v]", list, info)
	}
}

func TestNewIDAndParseID(t *testing.T) {
	at := time.Date(2026, 11, 30, 14, 49, 20, 123456789, time.FixedZone("CET", 3600))
	id := snapshot.NewID(at)
	if !strings.HasPrefix(id, "20261130T134920.123456Z-") || len(id) != len("20261130T134920.123456Z-000000") {
		t.Errorf("NewID(%v) = %q", at, id)
	}
	if other := snapshot.NewID(at); other == id {
		t.Errorf("two NewID calls for the same microsecond both returned %s", id)
	}
	got, err := snapshot.ParseID(id)
	if err != nil || !got.Equal(at.Truncate(time.Microsecond)) {
		t.Errorf("ParseID(%s) = %v, %v; want %v", id, got, err, at.Truncate(time.Microsecond))
	}
	if a, b := snapshot.NewID(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)), snapshot.NewID(time.Date(2026, 1, 2, 3, 4, 5, 1000, time.UTC)); a >= b {
		t.Errorf("IDs do not sort by time: %s >= %s", a, b)
	}

	for _, bad := range []string{
		"",
		"latest",
		"20261130T134920.123456Z",
		"20261130T134920.123456Z-3fa94",
		"20261130T134920.123456Z-3fa94cc",
		"20261130T134920.123456Z-3FA94C",
		"20261130T134920.123456Z-3fa94g",
		"20261130T134920.123456Z_3fa94c",
		"20261330T134920.123456Z-3fa94c",
		"20261130T134920,123456Z-3fa94c",
		"20261130T134920.123456+-3fa94c",
		"2026-11-30T13:49:20Z-3fa94c",
	} {
		if _, err := snapshot.ParseID(bad); err == nil {
			t.Errorf("ParseID(%q) accepted it", bad)
		}
	}
}

func TestOpenStoreLocal(t *testing.T) {
	ctx := context.Background()
	abs := filepath.Join(t.TempDir(), "abs", "store")
	tests := []struct {
		url string
		dir string // where the snapshots must land, relative to the working directory unless absolute
	}{
		{"file://./offsetkeeper-snapshots", "offsetkeeper-snapshots"},
		{"file://./a/b", "a/b"},
		{"file://rel", "rel"},
		{"file://rel/sub", "rel/sub"},
		{"plain/path", "plain/path"},
		{"file://" + filepath.ToSlash(abs), abs},
		{abs + "2", abs + "2"},
		{"file://./meta?metadata=skip", "meta"},
	}
	t.Chdir(t.TempDir())
	for _, tt := range tests {
		st, err := OpenStore(ctx, tt.url)
		if err != nil {
			t.Errorf("OpenStore(%q): %v", tt.url, err)
			continue
		}
		info, err := st.Snapshots().Put(ctx, testSnapshot())
		if err != nil {
			t.Errorf("OpenStore(%q).Put: %v", tt.url, err)
		}
		fi, err := os.Stat(filepath.Join(filepath.FromSlash(tt.dir), "snapshots", info.ID+".snap"))
		if err != nil || fi.Size() != info.Size {
			t.Errorf("OpenStore(%q): snapshot not in %s: %v", tt.url, tt.dir, err)
		}
		if list, err := st.Snapshots().List(ctx); err != nil || len(list) != 1 || !reflect.DeepEqual(list[0], info) {
			t.Errorf("OpenStore(%q).List = %+v, %v", tt.url, list, err)
		}
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	}
	if fi, err := os.Stat("offsetkeeper-snapshots"); err != nil || fi.Mode().Perm() != 0o755&^umask(t) {
		t.Errorf("default store directory: %v, %v", fi.Mode(), err)
	}
}

// umask returns the process umask as seen by a directory created now.
func umask(t *testing.T) os.FileMode {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "probe")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	return 0o777 &^ fi.Mode().Perm()
}

func TestOpenStoreErrors(t *testing.T) {
	ctx := context.Background()
	t.Chdir(t.TempDir())
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		url    string
		texts  []string
		secret string // must not appear in the error
		noDir  string // must not have been created
	}{
		{url: "", texts: []string{"no store URL", "OFFSETKEEPER_STORE"}},
		{url: "nosuch://bucket", texts: []string{`"nosuch://bucket"`, "--store"}},
		{url: file, texts: []string{file, "OFFSETKEEPER_STORE"}},
		{url: "file://" + filepath.ToSlash(file) + "/sub", texts: []string{"OFFSETKEEPER_STORE"}},
		{url: "file://./x?bogus=1", texts: []string{"bogus"}, noDir: "x"},
		{url: "s3://bucket?region=us-east-1&secret=hunter2hunter2", texts: []string{"secret=REDACTED", "OFFSETKEEPER_STORE"}, secret: "hunter2hunter2"},
		{url: "s3://AKIAEXAMPLE:pa55w0rd-xyz@bucket?x=1", texts: []string{"s3://bucket"}, secret: "pa55w0rd-xyz"},
		{url: "azblob://c?sig=c2lnbmF0dXJl%2Bx&sv=1", texts: []string{"sig=REDACTED"}, secret: "c2lnbmF0dXJl"},
	}
	for _, tt := range tests {
		st, err := OpenStore(ctx, tt.url)
		if err == nil {
			st.Close()
			t.Errorf("OpenStore(%q) succeeded", tt.url)
			continue
		}
		for _, text := range tt.texts {
			if !strings.Contains(err.Error(), text) {
				t.Errorf("OpenStore(%q): %v, want it to say %q", tt.url, err, text)
			}
		}
		if tt.secret != "" && strings.Contains(err.Error(), tt.secret) {
			t.Errorf("OpenStore(%q): error shows the secret: %v", tt.url, err)
		}
		if _, err := os.Stat(tt.noDir); tt.noDir != "" && err == nil {
			t.Errorf("OpenStore(%q) failed but created %s", tt.url, tt.noDir)
		}
	}
}

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"s3://bucket?region=eu-west-1", "s3://bucket?region=eu-west-1"},
		{"s3://user:pass@bucket", "s3://bucket"},
		{"azblob://c?sas_token=abc&x=1", "azblob://c?sas_token=REDACTED&x=1"},
		{"gs://b?access_id=me&private_key_path=/k", "gs://b?access_id=me&private_key_path=REDACTED"},
		{"file:///tmp/x?base_url=/b&secret_key_path=k", "file:///tmp/x?base_url=%2Fb&secret_key_path=REDACTED"},
		{"./some/dir", "./some/dir"},
		{"s3://%zz", "s3://(unparsable URL)"},
	}
	for _, tt := range tests {
		if got := redactURL(tt.in); got != tt.want {
			t.Errorf("redactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

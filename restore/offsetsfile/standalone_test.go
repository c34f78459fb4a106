package offsetsfile_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/restore/offsetsfile"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// The golden files under testdata/standalone were written by OpenJDK 17
// running testdata/standalone/java/WriteOffsets.java (FileOffsetBackingStore's
// serialization) on the .spec next to each:
//
//	cd restore/testdata/standalone/java
//	for s in two empty one many nullkey restore; do java WriteOffsets.java ../$s.offsets < ../$s.spec; done
//	for k in string-map list treemap integer-value; do java WriteOffsets.java --other $k ../other-$k.ser; done
var standaloneGolden = []string{"two", "empty", "one", "many", "nullkey", "restore"}

// specLines reads a .spec file (or ReadOffsets.java output): "KEY VALUE"
// lines of base64 or "-", sorted.
func specLines(t testing.TB, data []byte) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}

func entryLines(es []offsetsfile.StandaloneEntry) []string {
	enc := func(b []byte) string {
		if b == nil {
			return "-"
		}
		return base64.StdEncoding.EncodeToString(b)
	}
	var out []string
	for _, e := range es {
		out = append(out, enc(e.Key)+" "+enc(e.Value))
	}
	slices.Sort(out)
	return out
}

func TestStandaloneGolden(t *testing.T) {
	for _, name := range standaloneGolden {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata/standalone", name+".offsets"))
			if err != nil {
				t.Fatal(err)
			}
			spec, err := os.ReadFile(filepath.Join("testdata/standalone", name+".spec"))
			if err != nil {
				t.Fatal(err)
			}
			if !offsetsfile.IsStandaloneFile(data) {
				t.Fatal("magic not recognised")
			}
			es, err := offsetsfile.ReadStandaloneFile(data)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := entryLines(es), specLines(t, spec); !slices.Equal(got, want) {
				t.Fatalf("entries\n got %q\nwant %q", got, want)
			}
			// Written again in the JVM's entry order, the bytes are the JVM's.
			if got := offsetsfile.AppendStandaloneFile(nil, es); !bytes.Equal(got, data) {
				t.Fatalf("written again:\n got % x\nwant % x", got, data)
			}
		})
	}
}

// TestStandaloneDocBytes checks the writer against the layout written out
// in connect-offsets.md §8.
func TestStandaloneDocBytes(t *testing.T) {
	hexs := func(s string) []byte {
		var out []byte
		for _, f := range strings.Fields(s) {
			if strings.HasPrefix(f, `"`) {
				out = append(out, strings.Trim(f, `"`)...)
				continue
			}
			var b byte
			for _, c := range f {
				b = b<<4 | byte(strings.IndexRune("0123456789ABCDEF", c))
			}
			out = append(out, b)
		}
		return out
	}
	k1, k2 := []byte(`["c",{"f":"a"}]`), []byte(`["c",{"f":"b"}]`)
	var want []byte
	want = append(want, hexs(`AC ED 00 05 73 72 00 11 "java.util.HashMap" 05 07 DA C1 C3 16 60 D1
		03 00 02 46 00 0A "loadFactor" 49 00 09 "threshold" 78 70 3F 40 00 00 00 00 00 0C
		77 08 00 00 00 10 00 00 00 02 75 72 00 02 "[B" AC F3 17 F8 06 08 54 E0 02 00 00 78 70 00 00 00 0F`)...)
	want = append(want, k1...)
	want = append(want, hexs(`75 71 00 7E 00 02 00 00 00 07`)...)
	want = append(want, `{"o":1}`...)
	want = append(want, hexs(`75 71 00 7E 00 02 00 00 00 0F`)...)
	want = append(want, k2...)
	want = append(want, 0x70, 0x78)
	got := offsetsfile.AppendStandaloneFile(nil, []offsetsfile.StandaloneEntry{{Key: k1, Value: []byte(`{"o":1}`)}, {Key: k2}})
	if !bytes.Equal(got, want) {
		t.Fatalf("\n got % x\nwant % x", got, want)
	}
	empty := offsetsfile.AppendStandaloneFile(nil, nil)
	if !bytes.HasSuffix(empty, hexs(`3F 40 00 00 00 00 00 00 77 08 00 00 00 10 00 00 00 00 78`)) {
		t.Fatalf("empty map: % x", empty)
	}
}

func TestStandaloneRefuses(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"other-string-map.ser", "TC_STRING (a java.lang.String) where a byte[] or null belongs"},
		{"other-list.ser", `class "java.util.ArrayList" is not allowed`},
		{"other-treemap.ser", `class "java.util.TreeMap" is not allowed`},
		{"other-integer-value.ser", `an object of class "java.lang.Integer" is not allowed`},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata/standalone", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			_, err = offsetsfile.ReadStandaloneFile(data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}

	many, err := os.ReadFile("testdata/standalone/many.offsets")
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(many) {
		if _, err := offsetsfile.ReadStandaloneFile(many[:n]); err == nil {
			t.Fatalf("a file cut to %d of %d bytes was accepted", n, len(many))
		}
	}
	if _, err := offsetsfile.ReadStandaloneFile(append(slices.Clip(many), 0x70)); err == nil || !strings.Contains(err.Error(), "1 bytes after the map") {
		t.Fatalf("trailing data: %v", err)
	}

	// Hostile lengths: a huge byte[] length and a huge map size are
	// refused without allocating them.
	two, err := os.ReadFile("testdata/standalone/two.offsets")
	if err != nil {
		t.Fatal(err)
	}
	big := slices.Clone(two)
	at := bytes.Index(big, []byte(`["c",{"f":"a"}]`)) - 4
	binary.BigEndian.PutUint32(big[at:], 0x7fffffff)
	if _, err := offsetsfile.ReadStandaloneFile(big); err == nil || !strings.Contains(err.Error(), "byte[] of length 2147483647") {
		t.Fatalf("huge array: %v", err)
	}
	big = slices.Clone(two)
	at = bytes.Index(big, []byte{0x77, 0x08}) + 6
	binary.BigEndian.PutUint32(big[at:], 0x7ffffff0)
	if _, err := offsetsfile.ReadStandaloneFile(big); err == nil || !strings.Contains(err.Error(), "does not fit") {
		t.Fatalf("huge size: %v", err)
	}
	// A reference to a handle never assigned.
	bad := slices.Clone(two)
	at = bytes.Index(bad, []byte{0x75, 0x71, 0x00, 0x7e, 0x00, 0x02})
	bad[at+5] = 0x09
	if _, err := offsetsfile.ReadStandaloneFile(bad); err == nil || !strings.Contains(err.Error(), "not assigned") {
		t.Fatalf("bad handle: %v", err)
	}
}

// TestStandaloneJVM has a JVM read what AppendStandaloneFile writes, and
// the reader read what a JVM writes. Skipped without java.
func TestStandaloneJVM(t *testing.T) {
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("no java on PATH: the golden files cover the format")
	}
	es := []offsetsfile.StandaloneEntry{
		{Key: []byte(`["a->b.MirrorSourceConnector",{"cluster":"a","partition":0,"topic":"orders"}]`), Value: []byte(`{"offset":42}`)},
		{Key: []byte(`["c",{"f":"tomb"}]`)},
		{Key: []byte{0, 0xff}, Value: []byte{}},
		{Value: []byte(`{"o":1}`)},
	}
	for i := range 30 {
		es = append(es, offsetsfile.StandaloneEntry{Key: []byte(`["c",{"f":"` + strings.Repeat("x", i) + `"}]`), Value: []byte(`{"o":1}`)})
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "connect.offsets")
	if err := os.WriteFile(path, offsetsfile.AppendStandaloneFile(nil, es), 0o600); err != nil {
		t.Fatal(err)
	}
	out := runJava(t, "ReadOffsets.java", nil, path)
	if got, want := specLines(t, out), entryLines(es); !slices.Equal(got, want) {
		t.Fatalf("the JVM read\n%q\nwant\n%q", got, want)
	}
	spec := strings.Join(entryLines(es), "\n") + "\n"
	jvmFile := filepath.Join(dir, "jvm.offsets")
	runJava(t, "WriteOffsets.java", strings.NewReader(spec), jvmFile)
	data, err := os.ReadFile(jvmFile)
	if err != nil {
		t.Fatal(err)
	}
	got, err := offsetsfile.ReadStandaloneFile(data)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(entryLines(got), entryLines(es)) {
		t.Fatalf("read from the JVM's file: %q", entryLines(got))
	}
}

func runJava(t *testing.T, program string, stdin *strings.Reader, args ...string) []byte {
	t.Helper()
	src, err := filepath.Abs(filepath.Join("testdata/standalone/java", program))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("java", append([]string{src}, args...)...)
	if stdin != nil {
		cmd.Stdin = stdin
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("java %s: %v\n%s", program, err, stderr.String())
	}
	return out
}

// FuzzReadStandaloneFile: the reader never panics, never allocates past
// the input, and what it accepts writes back to a file it reads the same.
func FuzzReadStandaloneFile(f *testing.F) {
	for _, name := range standaloneGolden {
		data, err := os.ReadFile(filepath.Join("testdata/standalone", name+".offsets"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, name := range []string{"other-string-map.ser", "other-list.ser", "other-integer-value.ser"} {
		data, err := os.ReadFile(filepath.Join("testdata/standalone", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		es, err := offsetsfile.ReadStandaloneFile(data)
		if err != nil {
			return
		}
		again, err := offsetsfile.ReadStandaloneFile(offsetsfile.AppendStandaloneFile(nil, es))
		if err != nil {
			t.Fatalf("re-read: %v", err)
		}
		if !slices.Equal(entryLines(again), entryLines(es)) {
			t.Fatalf("re-read %q, want %q", entryLines(again), entryLines(es))
		}
	})
}

// TestStandaloneRestore restores a file a JVM wrote into a distributed
// cluster: every key with its exact bytes on its murmur2 partition, the
// tombstone entry removing its key, other keys left alone.
func TestStandaloneRestore(t *testing.T) {
	_, cl := testkit.Cluster(t)
	ctx := t.Context()
	if err := connectdemo.CreateTopics(ctx, cl, connectdemo.Topics{}); err != nil {
		t.Fatal(err)
	}
	gone := []byte(`["source-file-01",{"filename":"/data/gone.txt"}]`)
	other := []byte(`["source-file-01",{"filename":"/data/other.txt"}]`)
	if err := cl.ProduceSync(ctx,
		&kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Key: gone, Value: []byte(`{"position":1}`)},
		&kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Key: other, Value: []byte(`{"position":7}`)},
	).FirstErr(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("testdata/standalone/restore.offsets")
	if err != nil {
		t.Fatal(err)
	}
	f, err := offsetsfile.ParseOffsetsFile("restore.offsets", data, "")
	if err != nil {
		t.Fatal(err)
	}
	if f.Format != offsetsfile.FormatStandalone || len(f.Standalone) != 5 {
		t.Fatalf("format %s, %d entries", f.Format, len(f.Standalone))
	}
	snap, _, err := f.Snapshot(ctx, cl, restore.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := restore.NewPlan(ctx, cl, snap, restore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.Check(ctx, cl); err != nil {
		t.Fatal(err)
	}
	if _, err := restore.Apply(ctx, cl, plan); err != nil {
		t.Fatal(err)
	}
	if _, err := restore.Verify(ctx, cl, plan); err != nil {
		t.Fatal(err)
	}
	live, err := restore.CaptureLive(context.Background(), cl, nil, restore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, o := range live.SourceTable().Collect() {
		if o.Partition != snapshot.PartitionFor(o.Key, 25) {
			t.Errorf("key %s on partition %d", o.Key, o.Partition)
		}
		got[string(o.Key)] = string(o.Value)
	}
	want := map[string]string{string(other): `{"position":7}`}
	for _, e := range f.Standalone {
		if e.Value != nil {
			want[string(e.Key)] = string(e.Value)
		}
	}
	if len(got) != len(want) {
		t.Errorf("live keys %q, want %q", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("key %s: %q, want %q", k, got[k], v)
		}
	}

	// A file with what no offsets topic holds is refused, every problem named.
	bad := offsetsfile.AppendStandaloneFile(nil, []offsetsfile.StandaloneEntry{{Value: []byte("{}")}, {Key: []byte("x"), Value: []byte("{}")}})
	if _, err := offsetsfile.ParseOffsetsFile("bad", bad, ""); err == nil || !strings.Contains(err.Error(), "entry 0: a null key") || !strings.Contains(err.Error(), "entry 1: key") {
		t.Fatalf("bad file: %v", err)
	}
}

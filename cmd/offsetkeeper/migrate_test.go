package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectjson"
	"github.com/offsetkeeper/offsetkeeper/restore/offsetsfile"
	"github.com/offsetkeeper/offsetkeeper/restore/translate"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// migrationClusters are cluster a, seeded with the demo connectors and
// data topics of distinct CreateTimes, and cluster b, with Connect's worker
// topics and MirrorMaker 2's copies a.<topic> at shifted offsets, its
// checkpoints of the es sink's group and (on a) its offset syncs. Both use
// one store; id is a snapshot of a taken through the CLI.
func migrationClusters(t *testing.T) (a, b *cluster, m *connectdemo.Mirrored, id string) {
	t.Helper()
	ctx := t.Context()
	spec, fill := connectdemo.MigrationSpec(time.UnixMilli(1_700_000_000_000))
	a = newCluster(t, &spec, kfake.ClusterID("cluster-a"))
	if err := fill(ctx, a.cl); err != nil {
		t.Fatal(err)
	}
	b = newCluster(t, nil, kfake.ClusterID("cluster-b"))
	b.store = a.store
	if err := connectdemo.CreateTopics(ctx, b.cl, connectdemo.Topics{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.adm.CreateTopic(ctx, 5, -1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, connectdemo.EOSOffsetsTopic); err != nil {
		t.Fatal(err)
	}
	m, err := connectdemo.MirrorTopics(ctx, a.cl, b.cl, connectdemo.Mirror{
		SourceAlias: "a", TargetAlias: "b",
		Topics:       []string{"orders", "clicks", "legacy.customers"},
		Shift:        func(topic string, p int32) int64 { return 5 + 3*int64(p) },
		SyncEvery:    10,
		Checkpointed: []string{connectdemo.GroupSinkES},
	})
	if err != nil {
		t.Fatal(err)
	}
	a.stopAll()
	return a, b, m, a.snapshot()
}

// committed reads group's committed offsets on c.
func (c *cluster) committed(group string) kadm.OffsetResponses {
	c.t.Helper()
	r, err := c.adm.FetchOffsets(context.Background(), group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return nil
	}
	if err != nil {
		c.t.Fatal(err)
	}
	return r
}

// recordAt reads one record of c.
func (c *cluster) recordAt(topic string, p int32, off int64) *kgo.Record {
	c.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.kc.ListenAddrs()...), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {p: kgo.NewOffset().At(off)}}))
	if err != nil {
		c.t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			c.t.Fatalf("read %s/%d@%d: %v", topic, p, off, err)
		}
		for _, r := range fs.Records() {
			if r.Offset == off {
				return r
			}
		}
	}
}

func TestMigrateMM2(t *testing.T) {
	a, b, m, id := migrationClusters(t)
	// A dry run prints the translation and writes nothing.
	out, _ := b.mustRun(0, "restore", id, "--allow-other-cluster", "--translate", "mm2", "--mm2-source-alias", "a", "--dry-run")
	for _, want := range []string{
		"translation (mm2): 16 sink partitions",
		`note: group "archive-loader" has no checkpoints in a.checkpoints.internal`,
		"groups.exclude",
		"orders/0 -> a.orders: 40 -> ",
		"by mm2-checkpoint",
		"dry run: nothing written",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "translation (mm2): 16 sink partitions") {
		// Seen once under a loaded full suite (7: group archive-loader
		// missing), never reproduced: say what the snapshot and cluster a
		// held, to find why next time.
		st, err := store.OpenStore(context.Background(), a.store)
		if err != nil {
			t.Fatal(err)
		}
		snap, _, err := st.Snapshots().GetWith(context.Background(), id, nil)
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range snap.SinkGroups {
			t.Logf("snapshot %s: group %s connector %q state %s, %d offsets", id, g.Group, g.Connector, g.State, len(g.Offsets))
		}
		listed, err := a.adm.ListGroups(context.Background())
		t.Logf("cluster a lists groups %v (%v); a live capture has %d sink groups", listed.Groups(), err, len(a.capture().SinkGroups))
	}
	if got := b.committed(connectdemo.GroupSinkES); len(got) != 0 {
		t.Fatalf("the dry run committed %v", got)
	}

	out, _ = b.mustRun(0, "restore", id, "--allow-other-cluster", "--translate", "mm2", "--mm2-source-alias", "a", "--source-brokers", a.brokers)
	if !strings.Contains(out, "verified:") || !strings.Contains(out, "by mm2-offset-sync") {
		t.Fatalf("restore output:\n%s", out)
	}
	// The es sink's group gets exactly the checkpointed downstream offsets.
	got := b.committed(connectdemo.GroupSinkES)
	cps := m.Checkpoints[connectdemo.GroupSinkES]["a.orders"]
	if len(cps) != 6 {
		t.Fatalf("checkpoints: %v", m.Checkpoints)
	}
	for p, want := range cps {
		if o, _ := got.Lookup("a.orders", p); o.At != want {
			t.Errorf("a.orders/%d committed %d, want the checkpoint's %d", p, o.At, want)
		}
	}
	// No group is past the copy of the record it was to read next.
	snap := a.capture()
	for _, g := range snap.SinkGroups {
		live := b.committed(g.Group)
		for _, o := range g.Offsets {
			l, ok := live.Lookup("a."+o.Topic, o.Partition)
			if !ok {
				t.Errorf("%s a.%s/%d not committed", g.Group, o.Topic, o.Partition)
				continue
			}
			if exact := o.Offset + m.Shift[o.Topic][o.Partition]; l.At > exact || l.At < exact-10 {
				t.Errorf("%s a.%s/%d committed %d, the next record's copy is at %d", g.Group, o.Topic, o.Partition, l.At, exact)
			}
		}
	}
}

func TestMigrateTimestamp(t *testing.T) {
	a, b, m, id := migrationClusters(t)
	// Without the prefix the topics are not on b: refused by name.
	code, out, errOut := b.run("restore", id, "--allow-other-cluster", "--translate", "timestamp")
	if code != exitRefused || !strings.Contains(errOut, "cannot be translated") || !strings.Contains(flat(errOut), `group archive-loader clicks/0 cannot be translated: topic "clicks" does not exist on the target`) {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	// Regression: the refusal offered --force, which turns off every
	// safety check, where --topic-prefix a. is the fix.
	if !strings.Contains(errOut, `the target holds "a.clicks": restore with --topic-prefix a.`) ||
		!strings.Contains(errOut, "(to translate them, restore with --topic-prefix a.") || strings.Contains(errOut, "--force") {
		t.Errorf("the refusal does not name --topic-prefix a. alone:\n%s", errOut)
	}
	// With --output json, stdout is the document of the refused restore
	// and the translation goes to stderr.
	code, out, errOut = b.run("restore", id, "--allow-other-cluster", "--translate", "timestamp", "--output", "json", "--dry-run")
	var doc struct {
		Outcome  string `json:"outcome"`
		DryRun   bool   `json:"dry_run"`
		Refusals []struct{ Connector, Check, Reason string }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != exitRefused {
		t.Fatalf("exit %d, stdout not one JSON document (%v):\n%s", code, err, out)
	}
	if doc.Outcome != "refused" || !doc.DryRun || len(doc.Refusals) != 16 || doc.Refusals[0].Check != translate.CheckUntranslatable || !strings.Contains(errOut, "translation (timestamp): 16 sink partitions") {
		t.Fatalf("document %+v\nstderr:\n%s", doc, errOut)
	}
	// --force restores the rest and leaves those partitions alone.
	_, errOut = b.mustRun(0, "restore", id, "--allow-other-cluster", "--translate", "timestamp", "--force", "--connector", connectdemo.ConnSinkES, "--connector", connectdemo.ConnFile)
	if !strings.Contains(errOut, "WARNING: --force: 6 sink partitions cannot be translated and left as they are on the target") {
		t.Fatalf("stderr:\n%s", errOut)
	}
	if got := b.committed(connectdemo.GroupSinkES); len(got) != 0 {
		t.Fatalf("untranslated partitions committed: %v", got)
	}
	out, _ = b.mustRun(0, "restore", id, "--allow-other-cluster", "--translate", "timestamp", "--topic-prefix", "a.")
	if !strings.Contains(out, "re-delivers 1, skips 0") || !strings.Contains(out, "verified:") {
		t.Fatalf("restore output:\n%s", out)
	}
	snap := a.capture()
	n := 0
	for _, g := range snap.SinkGroups {
		live := b.committed(g.Group)
		for _, o := range g.Offsets {
			l, _ := live.Lookup("a."+o.Topic, o.Partition)
			shift := m.Shift[o.Topic][o.Partition]
			if o.Offset == 0 {
				if l.At != 0 {
					t.Errorf("%s %s/%d at 0 committed %d, want the start", g.Group, o.Topic, o.Partition, l.At)
				}
				continue
			}
			// The same rule everywhere: the last consumed record, re-delivered.
			src := a.recordAt(o.Topic, o.Partition, o.Offset-1)
			dst := b.recordAt("a."+o.Topic, o.Partition, l.At)
			if l.At != o.Offset-1+shift || !bytes.Equal(src.Key, dst.Key) || !bytes.Equal(src.Value, dst.Value) {
				t.Errorf("%s %s/%d: %d committed as %d (%s), want %d (%s)", g.Group, o.Topic, o.Partition, o.Offset, l.At, dst.Key, o.Offset-1+shift, src.Key)
			}
			n++
		}
	}
	if n < 15 {
		t.Fatalf("only %d partitions checked", n)
	}
}

func TestMigrateRename(t *testing.T) {
	a, b, _, id := migrationClusters(t)
	newName := `files "new" -> 😀`
	out, _ := b.mustRun(0, "restore", id, "--allow-other-cluster", "--connector", connectdemo.ConnFile, "--connector", connectdemo.ConnSinkES,
		"--rename-connector", connectdemo.ConnFile+"="+newName, "--rename-connector", connectdemo.ConnSinkES+"=es2", "--topic-prefix", "a.")
	if !strings.Contains(out, "rename: connector "+connectdemo.ConnFile+" -> "+newName) || !strings.Contains(out, "verified:") {
		t.Fatalf("restore output:\n%s", out)
	}
	src := a.capture()
	dst := b.capture()
	n := 0
	for _, o := range src.SourceOffsetsOf(connectdemo.ConnFile) {
		_, part, _, err := connectjson.ParseKey(o.Key)
		if err != nil {
			t.Fatal(err)
		}
		// What a worker writes for the same partition under the new name.
		want := connectjson.MarshalKey(newName, part)
		if !bytes.Equal(connectjson.MarshalKey(connectdemo.ConnFile, part), o.Key) {
			continue // not in the worker's form: its partition bytes are kept instead
		}
		found := false
		for _, d := range dst.SourceOffsetsOf(newName) {
			if bytes.Equal(d.Key, want) && bytes.Equal(d.Value, o.Value) && d.Partition == snapshot.PartitionFor(want, 25) {
				found = true
			}
		}
		if !found {
			t.Errorf("no key %s on b", want)
		}
		n++
	}
	if n == 0 || len(dst.SourceOffsetsOf(connectdemo.ConnFile)) != 0 {
		t.Fatalf("%d keys checked; %d keys of the old name on b", n, len(dst.SourceOffsetsOf(connectdemo.ConnFile)))
	}
	if got := b.committed("connect-es2"); len(got["a.orders"]) != 6 {
		t.Errorf("connect-es2: %v", got)
	}
}

func TestStandaloneFileCLI(t *testing.T) {
	a := newCluster(t, nil)
	ctx := t.Context()
	if err := connectdemo.CreateTopics(ctx, a.cl, connectdemo.Topics{}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("../../restore/offsetsfile/testdata/standalone/restore.offsets")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "connect.offsets")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	a.snapshot() // the store must exist: a restore stores its undo snapshot there
	out, _ := a.mustRun(0, "restore", "--from-file", file)
	if !strings.Contains(out, "standalone, 5 offsets for 3 connectors") || !strings.Contains(out, "undo snapshot:") || !strings.Contains(out, "verified:") {
		t.Fatalf("restore output:\n%s", out)
	}
	entries, err := offsetsfile.ReadStandaloneFile(data)
	if err != nil {
		t.Fatal(err)
	}
	live := a.capture()
	want := map[string]string{}
	for _, e := range entries {
		if e.Value != nil {
			want[string(e.Key)] = string(e.Value)
		}
	}
	got := map[string]string{}
	for _, o := range live.SourceTable().Collect() {
		got[string(o.Key)] = string(o.Value)
	}
	if len(got) != len(want) {
		t.Fatalf("live %q, want %q", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("key %s: %q, want %q", k, got[k], v)
		}
	}

	// Renamed on the way: the keys a worker writes for the new name.
	a.mustRun(0, "restore", "--from-file", file, "--rename-connector", "source-file-01=files <new>")
	renamed := map[string]string{}
	for _, o := range a.capture().SourceOffsetsOf("files <new>") {
		renamed[string(o.Key)] = string(o.Value)
	}
	for _, e := range entries {
		n, part, _, err := connectjson.ParseKey(e.Key)
		if err != nil || n != "source-file-01" {
			continue
		}
		if k := connectjson.MarshalKey("files <new>", part); e.Value != nil && renamed[string(k)] != string(e.Value) {
			t.Errorf("renamed key %s: %q, want %q (have %q)", k, renamed[string(k)], e.Value, renamed)
		}
	}
	for k, v := range renamed {
		want[k] = v
	}

	// And back: show --output standalone-file writes what a standalone
	// worker loads.
	id := a.snapshot()
	shown, _ := a.mustRun(0, "show", id, "--output", "standalone-file")
	back, err := offsetsfile.ReadStandaloneFile([]byte(shown))
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(want) {
		t.Fatalf("%d entries, want %d", len(back), len(want))
	}
	for _, e := range back {
		if want[string(e.Key)] != string(e.Value) {
			t.Errorf("entry %s: %q", e.Key, e.Value)
		}
	}
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("no java: the JVM does not read the file back")
	}
	path := filepath.Join(t.TempDir(), "shown.offsets")
	if err := os.WriteFile(path, []byte(shown), 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := filepath.Abs("../../restore/offsetsfile/testdata/standalone/java/ReadOffsets.java")
	if err != nil {
		t.Fatal(err)
	}
	jvm, err := exec.Command("java", src, path).Output()
	if err != nil {
		t.Fatalf("java ReadOffsets: %v", err)
	}
	var lines []string
	for k, v := range want {
		lines = append(lines, base64.StdEncoding.EncodeToString([]byte(k))+" "+base64.StdEncoding.EncodeToString([]byte(v)))
	}
	slices.Sort(lines)
	if got := strings.TrimSpace(string(jvm)); got != strings.Join(lines, "\n") {
		t.Fatalf("the JVM read:\n%s\nwant:\n%s", got, strings.Join(lines, "\n"))
	}
}

func TestShowStandaloneNotToTerminal(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if isTerminal(null) || isTerminal(&bytes.Buffer{}) {
		t.Fatal("/dev/null or a buffer taken for a terminal")
	}
	tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
	if err != nil {
		// No controlling terminal (CI): a pseudo-terminal's master side.
		if tty, err = os.OpenFile("/dev/ptmx", os.O_RDWR, 0); err != nil {
			t.Skipf("no terminal to check against: %v", err)
		}
	}
	defer tty.Close()
	if !isTerminal(tty) {
		t.Fatal("/dev/tty not taken for a terminal")
	}
	var errOut bytes.Buffer
	if code := run(t.Context(), []string{"show", "latest", "--output", "standalone-file", "--store", t.TempDir()}, tty, &errOut); code != exitUsage || !strings.Contains(errOut.String(), "redirect it") {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
}

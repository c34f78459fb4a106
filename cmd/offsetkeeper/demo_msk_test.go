package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// TestDemoMSK runs demo --layout msk-connect from an empty directory and
// follows its walk-through as printed: the bad reset (its kcat line's key,
// value and partition, which must be the key's murmur2 partition), the
// restore refused while the status topic says RUNNING, the UNASSIGNED
// statuses, the restore checked and run, and the move to a recreated
// connector's offsets topic.
func TestDemoMSK(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, other := range []string{"--empty", "--migration"} {
		if code, _, stderr := runCLI(t, "demo", "--layout", "msk-connect", other); code != exitUsage || !strings.Contains(stderr, "pick one") {
			t.Errorf("demo --layout msk-connect %s: exit %d, want a usage error\n%s", other, code, stderr)
		}
	}
	kport := freePorts(t, 3)
	out := startDemo(t, "--layout", "msk-connect", "--port", strconv.Itoa(kport))
	guide := out.String()
	wantLines(t, "the walk-through", guide, "(3 connectors, 3 source keys, 1 sink group)", "s3-sink (sink, group connect-s3-sink)", "No Connect REST API")
	lines := strings.Split(guide, "\n")
	find := func(parts ...string) []string {
		t.Helper()
		var found []string
		for _, l := range lines {
			ok := true
			for _, p := range parts {
				ok = ok && strings.Contains(l, p)
			}
			if ok {
				found = append(found, strings.TrimSpace(l))
			}
		}
		if len(found) == 0 {
			t.Fatalf("the walk-through has no line with %q:\n%s", parts, guide)
		}
		return found
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers("127.0.0.1:"+strconv.Itoa(kport)), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// kcat runs "echo 'KEY|VALUE' | kcat -b B -P -t TOPIC -p N -K '|'".
	kcat := func(line string) {
		t.Helper()
		rec, _, _ := strings.Cut(strings.TrimPrefix(line, "echo '"), "' |")
		k, v, _ := strings.Cut(rec, "|")
		f := strings.Fields(line[strings.Index(line, "| kcat"):])
		var topic string
		var p int
		for i := range f {
			switch f[i] {
			case "-t":
				topic = f[i+1]
			case "-p":
				p, _ = strconv.Atoi(f[i+1])
			}
		}
		if want := snapshot.PartitionFor([]byte(k), 5); int32(p) != want {
			t.Errorf("%s: partition %d, the key's murmur2 partition is %d", line, p, want)
		}
		if err := cl.ProduceSync(t.Context(), &kgo.Record{Topic: topic, Partition: int32(p), Key: []byte(k), Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
	}
	cli := func(want int, line string) string {
		t.Helper()
		args := strings.Fields(strings.TrimPrefix(line, "go run ./cmd/offsetkeeper "))
		code, stdout, stderr := runCLI(t, args...)
		if code != want {
			t.Fatalf("%s: exit %d, want %d\n%s\n%s", line, code, want, stdout, stderr)
		}
		return stdout + stderr
	}
	kcat(find(`{"incrementing":0}`, "kcat")[0])
	restoreLine := find(" restore ", "--connector orders-jdbc --layout")
	if m, r := strings.Index(guide, "--to-offsets-topic"), strings.Index(guide, restoreLine[1]); m < 0 || r < m {
		t.Errorf("the walk-through does not lead with the move to a new offsets topic (MSK Connect gives a connector created again new topics):\n%s", guide)
	}
	if len(restoreLine) != 3 || strings.Contains(guide, "restore latest") {
		t.Fatalf("the walk-through's restores: %q (by ID, never latest)", restoreLine)
	}
	wantLines(t, "the refused restore", cli(3, restoreLine[0]), "its status topic says", "delete the connector")
	for _, l := range find("UNASSIGNED", "kcat") {
		kcat(l)
	}
	wantLines(t, "the dry run", cli(0, restoreLine[1]), `changed  {"incrementing":0} -> {"incrementing":4711}`, "dry run: nothing written")
	wantLines(t, "the restore", cli(0, restoreLine[2]), "verified: 1 connector matches the snapshot", "note: on MSK Connect a connector created again gets new topics")
	wantLines(t, "the restore again", cli(0, restoreLine[2]), "nothing to do")
	moves := find("--to-offsets-topic")
	if len(moves) != 2 {
		t.Fatalf("the moves: %q", moves)
	}
	wantLines(t, "the move's dry run", cli(0, moves[0]), "dry run: would create offsets topic")
	wantLines(t, "the move", cli(0, moves[1]), "  offset.storage.topic=__msk_connect_offsets_orders-jdbc-recreated\n")
}

package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/realconnect"
)

// TestMSKRealWorker is the AWS recipe for a recreated MSK Connect
// connector, on a real Connect 3.8 worker: a worker cluster with its own
// MSK-named trio runs a FileStreamSource to the end of its file and is
// shut down (its status topic says UNASSIGNED, as MSK's workers write when
// a connector is deleted); snapshot --layout msk-connect captures it;
// restore --connector X --to-offsets-topic NEW carries its offsets to a
// new offsets topic; a new worker cluster, with a new trio and
// offset.storage.topic=NEW, runs the connector recreated: it resumes where
// the old one stood, so the lines appended after it are delivered and none
// before it again.
func TestMSKRealWorker(t *testing.T) {
	realconnect.Dir(t)
	c := realconnect.NewCluster(t)
	old := connectdemo.MSKConnector{Name: "lines-src", ID: "0a1b2c3d-4e5f-6789-abcd-ef0123456789-1"}
	recreated := connectdemo.MSKConnector{Name: "lines-src", ID: "fedcba98-7654-3210-fedc-ba9876543210-2"}
	custom := "__msk_connect_offsets_lines-src-recreated"
	trio := func(m connectdemo.MSKConnector, offsets string) []string {
		return []string{"offset.storage.topic=" + offsets, "config.storage.topic=" + m.Topic("configs"), "status.storage.topic=" + m.Topic("status")}
	}
	c.CreateTopic(t, old.Topic("offsets"), 25, true)
	for _, m := range []connectdemo.MSKConnector{old, recreated} {
		c.CreateTopic(t, m.Topic("configs"), 1, true)
		c.CreateTopic(t, m.Topic("status"), 5, true)
	}
	c.CreateTopic(t, "lines", 1, false)

	in := filepath.Join(t.TempDir(), "in.txt")
	first := []string{"one", "two", "three"}
	realconnect.AppendLines(t, in, first...)
	w := realconnect.Start(t, c, realconnect.Options{GroupID: "msk-" + old.ID, Set: trio(old, old.Topic("offsets"))})
	rest := w.REST(t)
	rest.Create(old.Name, realconnect.FileSource(in, "lines"), "")
	rest.WaitState(old.Name, "RUNNING", 1)
	realconnect.Eventually(t, "the source at the end of its file", func() (bool, string) {
		body := rest.Offsets(old.Name)
		return realconnect.SourcePosition(t, body, in) == int64(len("one\ntwo\nthree\n")), string(body)
	})
	stood := restOffsets(t, rest.Offsets(old.Name))
	w.Stop()

	store := filepath.Join(t.TempDir(), "store")
	cli := func(want int, args ...string) (string, string) {
		t.Helper()
		args = append(args, "--store", store, "--brokers", c.Brokers, "--layout", "msk-connect")
		code, stdout, stderr := runCLI(t, args...)
		if code != want {
			t.Fatalf("offsetkeeper %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, want, stdout, stderr)
		}
		return stdout, stderr
	}
	stdout, _ := cli(0, "snapshot")
	id := lastLine(stdout)
	if show, _ := cli(0, "show", id); !strings.Contains(show, old.Topic("offsets")) || !strings.Contains(show, old.Name) {
		t.Errorf("show does not list the connector's MSK offsets topic:\n%s", show)
	}
	stdout, stderr := cli(0, "restore", id, "--connector", old.Name, "--to-offsets-topic", custom)
	wantLines(t, "restore --to-offsets-topic", stdout, "verified", "  offset.storage.topic="+custom+"\n")
	if strings.Contains(stderr, "does not match the offsets topic pattern") {
		t.Errorf("a name the layout matches is warned of:\n%s", stderr)
	}

	// The recreated connector: another worker cluster, its own config and
	// status topics, the custom offsets topic, and the file grown.
	realconnect.AppendLines(t, in, "four", "five")
	w2 := realconnect.Start(t, c, realconnect.Options{GroupID: "msk-" + recreated.ID, Set: trio(recreated, custom)})
	rest2 := w2.REST(t)
	rest2.Create(recreated.Name, realconnect.FileSource(in, "lines"), "")
	rest2.WaitState(recreated.Name, "RUNNING", 1)
	want := append(slices.Clone(first), "four", "five")
	realconnect.Eventually(t, "the recreated source at the end of its file", func() (bool, string) {
		body := rest2.Offsets(recreated.Name)
		return realconnect.SourcePosition(t, body, in) == int64(len(strings.Join(want, "\n"))+1), string(body)
	})
	if got := realconnect.ReadTopic(t, c, "lines", 5); !slices.Equal(got, []string{`"one"`, `"two"`, `"three"`, `"four"`, `"five"`}) {
		t.Errorf("topic lines holds %q: every line once, in order, was wanted (the recreated connector resumed where the old one stood, %v)", got, stood)
	}

	// The next snapshot under the layout finds the recreated connector's
	// offsets in the custom topic.
	stdout, _ = cli(0, "snapshot")
	if show, _ := cli(0, "show", lastLine(stdout), "--connector", old.Name); !strings.Contains(show, custom) {
		t.Errorf("a snapshot after the move does not read %s:\n%s", custom, show)
	}
}

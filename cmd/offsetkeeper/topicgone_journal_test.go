package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
)

// TestOffsetsTopicGoneDaemonAdvice is an incident nobody rehearsed: the
// offsets topic deleted, and not created again, under a daemon that
// journals. Each failing snapshot run's ERROR used to advise the restore
// of the latest full snapshot, which rewinds every source offset committed
// since it (up to a schedule older, an hour by default). Now it advises the
// restore --at just before the deletion; run as printed, then with the
// --create-topics it names, it brings back the offset committed after the
// snapshot.
func TestOffsetsTopicGoneDaemonAdvice(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	// Runs 12 s apart: a run between the journal's last flush before the
	// deletion and the deletion takes a snapshot newer than the moment the
	// journal holds, and its restore is then the right advice (the test
	// would not see the --at). The deletion comes a few seconds after the
	// first run, the next run fails after the journal recorded it.
	logs := c.startDaemon("--journal-interval", "1s", "--schedule", "@every 12s")
	c.waitJournal(time.Now(), logs)
	off := connectdemo.DefaultOffsetsTopic
	fileKey := key(connectdemo.ConnFile, `{"filename":"/data/testdata.txt"}`)
	c.produce(&kgo.Record{Topic: off, Key: fileKey, Value: []byte(`{"position":987654}`)})
	c.waitJournal(moment(), logs)
	// The next runs fail from now on: the latest full snapshot may or may
	// not hold the value; the state just before the deletion does.
	if _, err := c.adm.DeleteTopics(context.Background(), off); err != nil {
		t.Fatal(err)
	}
	// A run between the deletion and the journal's next flush knows only
	// the snapshot; every run after the journal recorded it advises --at.
	waitLog(t, logs, `"msg":"reset seen"`, `"kind":"offsets-topic-deleted"`)
	line := waitLog(t, logs, `"msg":"snapshot run"`, `"result":"failure"`, `is gone`, `restore --at `)
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatal(err)
	}
	msg, _ := m["error"].(string)
	found := regexp.MustCompile(`run (offsetkeeper restore .*? --dry-run): `).FindStringSubmatch(msg)
	if found == nil || !strings.Contains(found[1], " --at ") || !strings.Contains(found[1], "--connector "+connectdemo.ConnFile) {
		t.Fatalf("the snapshot run's error does not advise the restore --at just before the deletion: %s", msg)
	}
	// The snapshot command, by hand, advises the same.
	if code, out, errOut := c.run("snapshot"); code != 1 || !strings.Contains(errOut, "offsetkeeper restore --at ") {
		t.Errorf("snapshot with the offsets topic gone: exit %d, its advice is not the restore --at:\n%s%s", code, out, errOut)
	}
	code, out, errOut := c.runPrinted(found[1])
	if code != 1 || !strings.Contains(errOut, "--create-topics") {
		t.Fatalf("%s: exit %d, want 1 naming --create-topics:\n%s%s", found[1], code, out, errOut)
	}
	var create string
	for _, l := range strings.Split(joinContinued(errOut), "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "offsetkeeper restore ") && strings.HasSuffix(l, " --create-topics") {
			create = l
		}
	}
	if create == "" {
		t.Fatalf("no restore with --create-topics printed:\n%s", errOut)
	}
	if code, out, errOut := c.runPrinted(create); code != 0 || !strings.Contains(out, "verified: ") {
		t.Fatalf("%s: exit %d\n%s%s", create, code, out, errOut)
	}
	for _, o := range c.capture().SourceTable().Collect() {
		if o.Topic == off && string(o.Key) == string(fileKey) {
			if string(o.Value) != `{"position":987654}` {
				t.Errorf("after the restore, %s = %s, want the value committed after the snapshot", fileKey, o.Value)
			}
			return
		}
	}
	t.Errorf("after the restore, %s is missing", fileKey)
}

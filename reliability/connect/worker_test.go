package connect

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/offsetkeeper/offsetkeeper/internal/realconnect"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// TestRealWorker drives the binary as an operator would against one real
// Connect worker and its FileStream pipeline, one moment after another:
// each subtest starts where the one before left the pipeline, and every
// round ends with every record fed delivered to out.txt exactly once.
func TestRealWorker(t *testing.T) {
	realconnect.Dir(t)
	t.Parallel()
	p := newPipeline(t, realconnect.Options{}, filepath.Join(t.TempDir(), "store"))
	p.feed(5)
	p.createSource("")
	p.createSink()
	p.settle()
	older := p.snapshot()
	p.feed(5)
	p.settle()
	current := p.snapshot()

	steps := []struct {
		name string
		fn   func(*pipeline, string, string)
	}{
		{"ShowEqualsGetOffsets", showEqualsGetOffsets},
		{"RefusedWhileRunning", refusedWhileRunning},
		{"BadResetRestoreIntoKafka", badResetRestoreIntoKafka},
		{"BadResetRestoreViaConnect", badResetRestoreViaConnect},
		{"StopConnectorsResume", stopConnectorsResume},
		{"ResumeReportsFailedTask", resumeReportsFailedTask},
		{"JournalUndo", journalUndo},
		{"DisasterRecovery", disasterRecovery},
	}
	for _, s := range steps {
		ok := t.Run(s.name, func(t *testing.T) {
			p.t = t
			s.fn(p, older, current)
		})
		if !ok {
			return // the next step starts from this one's pipeline
		}
	}
}

// show --output connect-rest is, entry for entry, what the worker's GET
// /connectors/X/offsets answers, for a source and a sink.
func showEqualsGetOffsets(p *pipeline, _, current string) {
	for _, name := range []string{srcName, sinkName} {
		shown := p.bin(0, "show", current, "--connector", name, "--output", "connect-rest").stdout
		got, want := canonicalOffsets(p.t, []byte(shown)), canonicalOffsets(p.t, p.rest.Offsets(name))
		if got != want {
			p.t.Errorf("%s: show --output connect-rest\n%s\nGET offsets\n%s", name, got, want)
		}
	}
}

// A restore of the older snapshot while both connectors run is refused
// (exit 3), naming the running connectors, and writes nothing.
func refusedWhileRunning(p *pipeline, older, _ string) {
	offsetsEnd := mapString(ends(p.t, p.adm, p.c.Topics.Offsets))
	group := mapString(committed(p.t, p.adm, sinkGroup))
	r := run(p.t, p.env(), "restore", older, "--connector", srcName, "--connector", sinkName)
	if r.code != 3 {
		p.t.Fatalf("restore while running: want exit 3, got %s", r)
	}
	for _, name := range []string{srcName, sinkName} {
		if !strings.Contains(r.stderr+r.stdout, name) {
			p.t.Errorf("the refusal does not name %s:\n%s", name, r)
		}
	}
	if !strings.Contains(r.stderr+r.stdout, "RUNNING") && !strings.Contains(r.stderr+r.stdout, "STARTED") {
		p.t.Errorf("the refusal does not say the connectors run:\n%s", r)
	}
	if got := mapString(ends(p.t, p.adm, p.c.Topics.Offsets)); got != offsetsEnd {
		p.t.Errorf("a refused restore wrote to %s: ends %s, were %s", p.c.Topics.Offsets, got, offsetsEnd)
	}
	if got := mapString(committed(p.t, p.adm, sinkGroup)); got != group {
		p.t.Errorf("a refused restore moved %s: %s, was %s", sinkGroup, got, group)
	}
	p.settle()
}

// The bad reset (stop, DELETE offsets) undone by a restore into Kafka:
// --stop-connectors, with nothing left to stop, says so; the worker then
// reports the snapshot's offsets, a plain Java consumer in the sink's
// group resumes at them, and after the resume every record is delivered
// exactly once.
func badResetRestoreIntoKafka(p *pipeline, _, _ string) {
	id := p.snapshot()
	wantSrc, wantSink := canonicalOffsets(p.t, p.rest.Offsets(srcName)), canonicalOffsets(p.t, p.rest.Offsets(sinkName))
	before := p.events
	p.badReset(srcName, sinkName)
	r := p.bin(0, "restore", id, "--connector", srcName, "--connector", sinkName, "--stop-connectors")
	if !strings.Contains(r.stdout, "nothing to stop: 2 connectors already STOPPED with no tasks") || strings.Contains(r.stdout, "stopped: ") {
		p.t.Errorf("restore --stop-connectors with both already stopped:\n%s", r)
	}
	if got := canonicalOffsets(p.t, p.rest.Offsets(srcName)); got != wantSrc {
		p.t.Errorf("source offsets after the restore, per the worker:\n%s\nwant\n%s", got, wantSrc)
	}
	if got := canonicalOffsets(p.t, p.rest.Offsets(sinkName)); got != wantSink {
		p.t.Errorf("sink offsets after the restore, per the worker:\n%s\nwant\n%s", got, wantSink)
	}
	p.feed(3)
	javaConsumerResumes(p, before)
	p.resume(srcName, sinkName)
	p.settle()
}

// javaConsumerResumes: a plain Java KafkaConsumer in the sink's group,
// started while the sink is stopped, reads events from the offsets the
// restore committed (the 3 events of each partition fed since: it stops
// once it has them all), and commits nothing.
func javaConsumerResumes(p *pipeline, at [eventsN]int) {
	out := realconnect.Consumer(p.t, "consume", "--bootstrap", p.c.Brokers, "--group", sinkGroup, "--topic", eventsT,
		"--no-commit", "--reset", "none", "--max", strconv.Itoa(3*eventsN), "--idle-ms", "120000")
	if !strings.Contains(out, fmt.Sprintf("CONSUMED %d\n", 3*eventsN)) {
		p.t.Errorf("the Java consumer did not read the %d events fed since the snapshot:\n%s", 3*eventsN, out)
	}
	for part := 0; part < eventsN; part++ {
		want := fmt.Sprintf("RESUMED %s %d %d", eventsT, part, at[part])
		if !strings.Contains(out, want+"\n") {
			p.t.Errorf("the Java consumer did not resume partition %d at %d (%q):\n%s", part, at[part], want, out)
		}
	}
}

// The same bad reset undone through the worker: restore --via connect
// sends the snapshot as PATCH /connectors/X/offsets.
func badResetRestoreViaConnect(p *pipeline, _, _ string) {
	id := p.snapshot()
	p.badReset(srcName, sinkName)
	r := p.bin(0, "restore", id, "--connector", srcName, "--connector", sinkName, "--via", "connect")
	if !strings.Contains(r.stdout, "verified") {
		p.t.Errorf("restore --via connect:\n%s", r)
	}
	p.feed(3)
	p.resume(srcName, sinkName)
	p.settle()
}

// A sink whose offsets were deleted fails (auto.offset.reset=none):
// restore --stop-connectors --resume stops it, writes its offsets, resumes
// it, and reports it resumed only once its task runs again; the source,
// running all along, is left alone.
func stopConnectorsResume(p *pipeline, _, _ string) {
	id := p.snapshot()
	p.badReset(sinkName)
	p.rest.Resume(sinkName)
	realconnect.Eventually(p.t, "the sink's task fails without offsets", func() (bool, string) {
		st, _ := p.rest.Status(sinkName)
		return len(st.Tasks) == 1 && st.Tasks[0].State == "FAILED", st.String()
	})
	r := p.bin(0, "restore", id, "--connector", srcName, "--connector", sinkName, "--stop-connectors", "--resume")
	for _, want := range []string{"stopping 1 connector: " + sinkName + "\n", "resumed: connector " + sinkName + " (RUNNING, 1 task)"} {
		if !strings.Contains(r.stdout, want) {
			p.t.Errorf("restore --stop-connectors --resume: no %q in\n%s", want, r)
		}
	}
	if strings.Contains(r.stdout, "resumed: connector "+srcName) {
		p.t.Errorf("the source, left alone, was resumed:\n%s", r)
	}
	p.rest.WaitState(sinkName, "RUNNING", 1)
	p.feed(3)
	p.settle()
}

// A resumed connector whose task fails is not reported resumed: restore
// --stop-connectors --resume exits 1 with the task's trace, after the
// offsets were written and verified. The sink's task failed before the
// stop too (no offsets), with another trace: that stale status is not
// taken for the new failure.
func resumeReportsFailedTask(p *pipeline, _, _ string) {
	const doomed = "doomed-sink"
	dir := p.t.TempDir()
	out := filepath.Join(dir, "out.txt")
	var offs kadm.Offsets
	for i := int32(0); i < eventsN; i++ {
		offs.Add(kadm.Offset{Topic: eventsT, Partition: i, At: 0, LeaderEpoch: -1})
	}
	if err := p.adm.CommitAllOffsets(context.Background(), "connect-"+doomed, offs); err != nil {
		p.t.Fatal(err)
	}
	p.rest.Create(doomed, realconnect.FileSink(out, eventsT, "consumer.override.auto.offset.reset=none"), "")
	p.rest.WaitState(doomed, "RUNNING", 1)
	realconnect.Eventually(p.t, doomed+" commits the ends of events", func() (bool, string) {
		got, want := realconnect.SinkOffsets(p.t, p.rest.Offsets(doomed)), ends(p.t, p.adm, eventsT)
		return mapString(got) == mapString(want), mapString(got)
	})
	id := p.snapshot()
	p.badReset(doomed)
	p.rest.Resume(doomed)
	var before string
	realconnect.Eventually(p.t, doomed+"'s task fails without offsets", func() (bool, string) {
		st, _ := p.rest.Status(doomed)
		if len(st.Tasks) == 1 && st.Tasks[0].State == "FAILED" {
			before = st.Tasks[0].Trace
			return true, ""
		}
		return false, st.String()
	})
	if err := os.RemoveAll(dir); err != nil {
		p.t.Fatal(err)
	}
	r := run(p.t, p.env(), "restore", id, "--connector", doomed, "--stop-connectors", "--resume")
	if r.code != 1 || !strings.Contains(r.stdout, "verified: ") || !strings.Contains(r.stderr, `connector "`+doomed+`" task 0 FAILED after the resume`) ||
		!strings.Contains(r.stderr, out) || strings.Contains(r.stdout, "resumed: connector "+doomed) {
		p.t.Errorf("restore --resume of a connector whose task fails: want exit 1 with the task's trace (naming %s), got %s", out, r)
	}
	if strings.Contains(r.stderr, firstLine(before)) {
		p.t.Errorf("the error carries the failure from before the stop (%q):\n%s", firstLine(before), r.stderr)
	}
	p.rest.Delete(doomed)
	p.rest.WaitGone(doomed)
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// The daemon's journal catches a reset made through the worker, and the
// command `events` prints for it, run as printed (with the settings in the
// environment), puts the connector back.
func journalUndo(p *pipeline, _, _ string) {
	logs := daemon(p.t, p.env(), "--journal-interval", "1s")
	journalCovers(p, time.Now(), logs)
	want := canonicalOffsets(p.t, p.rest.Offsets(srcName))
	p.badReset(srcName)
	var undo string
	realconnect.Eventually(p.t, "events lists the reset", func() (bool, string) {
		r := run(p.t, p.env(), "events", "--connector", srcName, "--output", "json")
		var evs []struct {
			Kind string `json:"kind"`
			Undo string `json:"undo"`
		}
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &evs) != nil {
			return false, r.String()
		}
		// events also lists the tool's own restores of the steps before
		// (kind restored, whose command rolls them back): wait for the reset.
		for i := len(evs) - 1; i >= 0; i-- {
			if evs[i].Kind != snapshot.EventRestored {
				undo = evs[i].Undo
				return true, ""
			}
		}
		return false, r.String()
	})
	// The command names the program as it was run (here the test's build)
	// and, with a Connect URL in the settings, stops and resumes the
	// connector itself: the reset above left it running.
	args := strings.Fields(undo)
	if len(args) < 2 || filepath.Base(args[0]) != "offsetkeeper" || args[1] != "restore" || !strings.Contains(undo, "--stop-connectors --resume") {
		p.t.Fatalf("events prints %q, not an offsetkeeper restore that stops and resumes the connector", undo)
	}
	r := p.bin(0, args[1:]...)
	if got := canonicalOffsets(p.t, p.rest.Offsets(srcName)); got != want {
		p.t.Errorf("after %q the worker reports\n%s\nwant\n%s\n%s", undo, got, want, r)
	}
	p.feed(3)
	p.resume(srcName)
	p.settle()
}

// journalCovers waits until the store's journal covers the moment at.
func journalCovers(p *pipeline, at time.Time, logs func() string) {
	p.t.Helper()
	realconnect.Eventually(p.t, "the journal covers "+at.Format(time.RFC3339Nano), func() (bool, string) {
		s, err := store.OpenStore(context.Background(), p.store)
		if err != nil {
			return false, err.Error()
		}
		defer s.Close()
		cov, err := s.Journal().Coverage(context.Background())
		if err != nil || len(cov) == 0 {
			return false, fmt.Sprint(cov, err, logs())
		}
		return cov[len(cov)-1].To.After(at), fmt.Sprint(cov)
	})
}

// Disaster recovery: a fresh worker on a second Kafka cluster, the source
// connector recreated there stopped ("initial_state": "STOPPED": it never
// had tasks), its offsets restored with --allow-other-cluster, resumed: it
// produces only the lines that came after the snapshot.
func disasterRecovery(p *pipeline, _, _ string) {
	id := p.snapshot()
	done := p.lines
	dr := realconnect.NewCluster(p.t, kfake.ClusterID("offsetkeeper-dr-cluster"))
	drp := newPipelineOn(p.t, dr, realconnect.Options{}, p.store)
	drp.in = p.in
	drp.createSource("STOPPED")
	r := drp.bin(0, "restore", id, "--connector", srcName, "--source-only", "--allow-other-cluster")
	if !strings.Contains(r.stdout, "verified") {
		p.t.Errorf("restore into the other cluster:\n%s", r)
	}
	p.feed(4)
	drp.resume(srcName)
	drp.settleSource()
	var want []string
	for i := done + 1; i <= p.lines; i++ {
		want = append(want, strconv.Quote(fmt.Sprintf("line-%04d", i)))
	}
	if got := realconnect.ReadTopic(p.t, dr, linesT, len(want)); strings.Join(got, " ") != strings.Join(want, " ") {
		p.t.Errorf("the recreated source wrote\n%s\nwant only the lines after the snapshot\n%s", got, want)
	}
}

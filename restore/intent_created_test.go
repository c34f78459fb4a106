package restore_test

import (
	"log/slog"
	"maps"
	"regexp"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// TestKilledCreateConnectorsSaysRunAgain: disaster recovery with
// --create-connectors --stop-connectors --resume killed (SIGKILL) after it
// created the connectors STOPPED, before it wrote their offsets. The next
// command's report of the restore that did not finish said only "did not
// finish; every reader sees the offsets it touched alike": no word of the
// connectors left STOPPED without offsets, and no command (its record
// held no stopped connector). It now names them as created STOPPED and
// prints the command that finishes it, on lines of its own, the log line
// after it (it came between the note and the command); that restore,
// run again, writes their offsets and resumes them as the snapshot had
// them, and removes the record.
func TestKilledCreateConnectorsSaysRunAgain(t *testing.T) {
	_, snap := oldCluster(t)
	dst := newConnectCluster(t, "new-cluster")
	storeURL := "file://" + t.TempDir()
	st, err := store.OpenStore(t.Context(), storeURL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	info, err := st.Snapshots().Put(t.Context(), snap)
	if err != nil {
		t.Fatal(err)
	}
	stored, _, err := st.Snapshots().GetWith(t.Context(), info.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	again := "offsetkeeper restore " + info.ID + " --allow-other-cluster --create-connectors --stop-connectors --resume"
	killChild(t, childSpec{Brokers: dst.cl.OptValue(kgo.SeedBrokers).([]string), Store: storeURL, Snapshot: info.ID, Point: "undo",
		ConnectURL: dst.srv.URL, CreateConnectors: true, Again: again})
	stopped := map[string]string{"src": connectrest.StateStopped, "snk": connectrest.StateStopped, "other": connectrest.StateStopped}
	if got := restStates(t, dst.rc, stopped); !maps.Equal(got, stopped) {
		t.Fatalf("after the kill the connectors are %v, want all created STOPPED: the test proves nothing", got)
	}

	// The log on the same stream, as on a terminal: its line comes after
	// the note, never between the note and the command that ends it.
	var out strings.Builder
	logger := slog.New(slog.NewTextHandler(&out, nil))
	if _, err := restore.RecoverInterrupted(t.Context(), restore.Recovery{Client: dst.cl, Store: st, Out: &out, Log: logger}); err != nil {
		t.Fatal(err)
	}
	if l, c := strings.Index(out.String(), "interrupted restore checked"), strings.Index(out.String(), "--resume\n"); l < 0 || c < 0 || l < c {
		t.Errorf("the log line splits the note from its command:\n%s", out.String())
	}
	said := strings.Join(strings.Fields(out.String()), " ")
	if !strings.Contains(said, "it created 3 connectors STOPPED (other, snk, src): run it again to finish it, which resumes them:") {
		t.Errorf("the report does not name the connectors created STOPPED:\n%s", out.String())
	}
	if !containsLine(strings.Split(continuedLines.ReplaceAllString(out.String(), " "), "\n"), again) {
		t.Errorf("the report does not print the command on lines of its own:\n%s", out.String())
	}

	req := stopRequest(stored)
	req.CreateConnectors, req.Options.AllowOtherCluster = true, true
	var rerun strings.Builder
	if _, err := restore.Run(t.Context(), restore.Env{Client: dst.cl, Store: st, Connect: dst.rc, Out: &rerun}, req); err != nil {
		t.Fatalf("the restore run again: %v\n%s", err, rerun.String())
	}
	waitREST(t, dst.rc, map[string]string{"src": connectrest.StateRunning, "snk": connectrest.StateRunning, "other": connectrest.StateRunning})
	if !strings.Contains(rerun.String(), "verified: 3 connectors match the snapshot") {
		t.Errorf("the restore run again:\n%s", rerun.String())
	}
	if intents, err := st.Restores().List(t.Context()); err != nil || len(intents) != 0 {
		t.Errorf("records left: %+v, %v", intents, err)
	}
}

// continuedLines matches a shell continuation and the next line's indent.
var continuedLines = regexp.MustCompile(` \\\n +`)

// containsLine tells whether one of lines, trimmed, is s.
func containsLine(lines []string, s string) bool {
	for _, l := range lines {
		if strings.TrimSpace(l) == s {
			return true
		}
	}
	return false
}

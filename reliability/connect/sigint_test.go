package connect

import (
	"bufio"
	"context"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/realconnect"
)

// TestRealWorkerSIGINTRestore: Ctrl-C in the middle of a restore with
// --stop-connectors --resume on a real Connect 3.8 worker, while it waits
// for the connectors it stopped. The advised "run the same restore again"
// once left the connectors the first run had stopped STOPPED. Now the
// interrupted run says "interrupted", puts back what it stopped (both
// RUNNING again, nothing written), and prints the restore to run again;
// that command, run as printed, restores the snapshot and resumes both.
func TestRealWorkerSIGINTRestore(t *testing.T) {
	realconnect.Dir(t)
	t.Parallel()
	p := newPipeline(t, realconnect.Options{}, t.TempDir()+"/store")
	p.feed(3)
	p.createSource("")
	p.createSink()
	p.settle()
	id := p.snapshot()
	p.feed(2)
	p.settle() // the live offsets are past the snapshot's: a rollback to restore

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary(t), "restore", id, "--stop-connectors", "--resume")
	cmd.Env = p.env()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	sc := bufio.NewScanner(stdout)
	signaled := false
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		if !signaled && strings.HasPrefix(sc.Text(), "stopping 2 connectors") {
			_ = cmd.Process.Signal(syscall.SIGINT) // Ctrl-C while it waits for the stop
			signaled = true
		}
	}
	err = cmd.Wait()
	first := out.String() + stderr.String()
	if !signaled || err == nil || !strings.Contains(first, "interrupted") || strings.Contains(first, "context canceled") {
		t.Fatalf("the interrupted restore (signaled %v, %v):\n%s", signaled, err, first)
	}
	states := p.rest.Must(200, "GET", "/connectors?expand=status", nil).String()
	if strings.Count(states, `"connector":{"state":"RUNNING"`) != 2 {
		t.Errorf("after Ctrl-C the connectors are not both RUNNING as before: %s", states)
	}
	// Its words, a wide command's " \" continuations joined as the shell does.
	flat := strings.Join(strings.Fields(regexp.MustCompile(` \\\n +`).ReplaceAllString(first, " ")), " ")
	m := regexp.MustCompile(`(\S*offsetkeeper restore ` + regexp.QuoteMeta(id) + `[^(;)]*?--resume)`).FindStringSubmatch(flat)
	if m == nil || strings.Contains(m[1], "<") {
		t.Fatalf("no restore to run again printed (or a placeholder):\n%s", first)
	}
	r := p.bin(0, strings.Fields(m[1])[1:]...)
	for _, want := range []string{"verified: ", "resumed: connector " + srcName, "resumed: connector " + sinkName} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the printed restore lacks %q:\n%s", want, r)
		}
	}
	p.rest.WaitState(srcName, "RUNNING", 1)
	p.rest.WaitState(sinkName, "RUNNING", 1)
}

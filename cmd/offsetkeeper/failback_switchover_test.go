package main

import (
	"maps"
	"os/exec"
	"strings"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
)

// TestFailbackSwitchoverAfterMirrorMaker: a planned failback after a
// MirrorMaker 2 failover, every printed command run as printed. The
// failback is refused while the new primary runs its connectors and
// prints their stops there and their resumes on the old primary; stopped,
// the failback again leaves them STOPPED, as the new primary has them.
// Two things broke. Its sinks' offsets on a.orders could not be mapped,
// and the plan deleted the old primary's group positions on orders (not
// in the translated state) while the note said they "were left as the
// standby has them": resumed, the sinks would have started from
// auto.offset.reset. And the sinks, STOPPED as on the primary and not
// held, were named nowhere, so the refusal's resumes, run next, started
// them before their offsets were written. Now the positions are kept
// (nothing deleted), the note names the sinks to resume only after the
// printed failback, which maps the copies back; then the printed resumes
// start them.
func TestFailbackSwitchoverAfterMirrorMaker(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("the printed stops and resumes are curl commands: no curl here")
	}
	w, st, back, brc := failedOver(t)
	standbyOffsets := groupOffsets(t, w.bcl, connectdemo.GroupSinkES)
	before := groupOffsets(t, w.acl, connectdemo.GroupSinkES)
	args := []string{"failback", "--store", st, "--standby-brokers", w.primary, "--standby-translate", "timestamp",
		"--standby-connect-url", back.URL, "--connect-url", w.connect.URL}
	_, errs := mustCLI(t, exitRefused, args...)
	var stops, resumes []string
	for _, l := range strings.Split(errs, "\n") {
		switch s := strings.TrimSpace(l); {
		case strings.HasPrefix(s, "curl ") && strings.HasSuffix(strings.TrimSuffix(s, "'"), "/stop"):
			stops = append(stops, s)
		case strings.HasPrefix(s, "curl ") && strings.HasSuffix(strings.TrimSuffix(s, "'"), "/resume"):
			resumes = append(resumes, s)
		}
	}
	if len(stops) == 0 || len(resumes) != len(stops) {
		t.Fatalf("the refusal prints %d stops and %d resumes:\n%s", len(stops), len(resumes), errs)
	}
	sh := func(cmd string) {
		t.Helper()
		if b, err := exec.Command("sh", "-c", strings.Replace(cmd, "curl", curl, 1)).CombinedOutput(); err != nil {
			t.Fatalf("the printed %s: %v\n%s", cmd, err, b)
		}
	}
	for _, c := range stops {
		sh(c)
	}
	// The new primary's journal would record the stops; a snapshot does.
	mustCLI(t, 0, "snapshot", "--brokers", w.standby, "--store", st)

	out, _ := mustCLI(t, 0, args...)
	fits(t, "failback", out)
	if !strings.Contains(out, " 0 sink deletions") || !maps.Equal(groupOffsets(t, w.acl, connectdemo.GroupSinkES), before) {
		t.Errorf("the failback that could not map a.orders changed the old primary's group %s (%v, now %v):\n%s",
			connectdemo.GroupSinkES, before, groupOffsets(t, w.acl, connectdemo.GroupSinkES), out)
	}
	fix := pasted(out, "offsetkeeper failback ")
	if !strings.Contains(flat(out), "resume none of ") || !strings.Contains(flat(out), connectdemo.ConnSinkES) || fix == "" {
		t.Fatalf("the failback does not name the sinks to resume only after the printed failback, or prints none:\n%s", out)
	}
	out, _ = mustCLI(t, 0, shellArgs(t, fix)...)
	if strings.Contains(out, "could not be translated") {
		t.Errorf("the printed failback still misses partitions:\n%s", out)
	}
	mappedBack(t, standbyOffsets, groupOffsets(t, w.acl, connectdemo.GroupSinkES))
	for _, c := range resumes {
		sh(c)
	}
	if st := connectorState(t, brc, connectdemo.ConnSinkES); st != connectrest.StateRunning {
		t.Errorf("%s is %s on the old primary after the printed resumes, want RUNNING", connectdemo.ConnSinkES, st)
	}
}

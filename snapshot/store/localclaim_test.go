package store_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob/fileblob"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// claimChildEnv runs TestLocalClaimAcrossProcesses as one of the racing
// processes, on the store directory it names.
const claimChildEnv = "OFFSETKEEPER_TEST_CLAIM_DIR"

// TestLocalClaimAcrossProcesses: fileblob checks IfNotExist with a stat
// and a rename under a lock of its own process, so six processes creating
// one key at once had more than one winner in 14 of 30 rounds: two daemons
// on a shared directory were not fenced. The test binary runs again as
// six processes; each round they all write one snapshot ID at once (the
// parent releases them together), and exactly one must win.
func TestLocalClaimAcrossProcesses(t *testing.T) {
	if dir := os.Getenv(claimChildEnv); dir != "" {
		claimChild(t, dir)
		return
	}
	const procs, rounds = 6, 60
	dir := t.TempDir()
	type child struct {
		in  io.WriteCloser
		out *bufio.Reader
	}
	var children []child
	for range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLocalClaimAcrossProcesses$", "-test.count=1")
		cmd.Env = append(os.Environ(), claimChildEnv+"="+dir)
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { in.Close(); _ = cmd.Wait() })
		children = append(children, child{in: in, out: bufio.NewReader(out)})
	}
	base := time.Now().UTC().Add(-time.Hour)
	several := 0
	for r := range rounds {
		id := snapshot.NewID(base.Add(time.Duration(r) * time.Millisecond))
		for _, c := range children {
			if _, err := fmt.Fprintln(c.in, id); err != nil {
				t.Fatal(err)
			}
		}
		won := 0
		for i, c := range children {
			line, err := c.out.ReadString('\n')
			if err != nil {
				t.Fatalf("round %d, process %d: %v", r, i, err)
			}
			switch line = strings.TrimSpace(line); line {
			case "won":
				won++
			case "lost":
			default:
				t.Fatalf("round %d, process %d: %s", r, i, line)
			}
		}
		if won != 1 {
			several++
			t.Errorf("round %d: %d processes created %s, want exactly 1", r, won, id)
		}
	}
	t.Logf("%d rounds of %d processes: %d with other than one winner", rounds, procs, several)
}

// claimChild is one racing process: for each ID read from stdin it puts a
// snapshot with that ID and prints won, lost (ErrExists) or the error.
func claimChild(t *testing.T, dir string) {
	ctx := context.Background()
	var s *store.Store
	if os.Getenv(claimChildEnv+"_FILEBLOB") != "" {
		// fileblob alone, for comparison by hand.
		b, err := fileblob.OpenBucket(dir, &fileblob.Options{NoTempDir: true})
		if err != nil {
			t.Fatal(err)
		}
		s = store.NewStore(b)
	} else {
		var err error
		if s, err = store.OpenStore(ctx, dir); err != nil {
			t.Fatal(err)
		}
	}
	defer s.Close()
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		_, err := s.Snapshots().Put(ctx, &snapshot.Snapshot{ID: strings.TrimSpace(in.Text()), ClusterID: "c1", Reason: snapshot.ReasonScheduled})
		switch {
		case err == nil:
			fmt.Println("won")
		case errors.Is(err, snapshot.ErrExists):
			fmt.Println("lost")
		default:
			fmt.Println("error:", strings.ReplaceAll(err.Error(), "\n", " "))
		}
	}
}

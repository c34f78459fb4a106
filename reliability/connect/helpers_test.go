package connect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/realconnect"
)

var (
	binDir    string
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "offsetkeeper-realconnect-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// binary builds cmd/offsetkeeper once per run, without the race detector
// unless OFFSETKEEPER_RACE_BINARY=1 and the tests run with -race (as CI
// does: the binary on a real worker is the path most like production).
func binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		binPath = filepath.Join(binDir, "offsetkeeper")
		args := []string{"build", "-o", binPath}
		if raceEnabled && os.Getenv("OFFSETKEEPER_RACE_BINARY") == "1" {
			args = append(args, "-race")
		}
		args = append(args, "github.com/offsetkeeper/offsetkeeper/cmd/offsetkeeper")
		out, err := exec.Command(goTool, args...).CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	})
	if buildErr != nil {
		t.Fatalf("build offsetkeeper: %v", buildErr)
	}
	return binPath
}

// result is one run of the binary.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// env is a clean environment (no OFFSETKEEPER_ variable of the developer)
// plus extra.
func env(extra ...string) []string {
	e := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "OFFSETKEEPER_") })
	return append(e, extra...)
}

// run runs the binary to completion with env.
func run(t testing.TB, environ []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary(t), args...)
	cmd.Env = environ
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("offsetkeeper %s: hung\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), out.String(), errb.String())
	}
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run offsetkeeper: %v", err)
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// canonicalOffsets is a GET offsets body with its entries in a stable
// order and its JSON re-encoded with sorted keys: Connect lists a sink's
// partitions in no stable order.
func canonicalOffsets(t testing.TB, body []byte) string {
	t.Helper()
	var doc struct {
		Offsets []map[string]any `json:"offsets"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("decode offsets body %s: %v", body, err)
	}
	var entries []string
	for _, e := range doc.Offsets {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, string(b))
	}
	sort.Strings(entries)
	return "[" + strings.Join(entries, ",") + "]"
}

// ends is the end offset of each partition of topics, "topic/p" -> end.
func ends(t testing.TB, adm *kadm.Client, topics ...string) map[string]int64 {
	t.Helper()
	listed, err := adm.ListEndOffsets(context.Background(), topics...)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]int64{}
	listed.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			t.Fatalf("list end offset %s/%d: %v", o.Topic, o.Partition, o.Err)
		}
		m[o.Topic+"/"+strconv.Itoa(int(o.Partition))] = o.Offset
	})
	return m
}

// committed is group's committed offsets, "topic/p" -> offset.
func committed(t testing.TB, adm *kadm.Client, group string) map[string]int64 {
	t.Helper()
	offs, err := adm.FetchOffsets(context.Background(), group)
	if err != nil {
		t.Fatalf("fetch offsets of %s: %v", group, err)
	}
	m := map[string]int64{}
	offs.Each(func(o kadm.OffsetResponse) {
		m[o.Topic+"/"+strconv.Itoa(int(o.Partition))] = o.At
	})
	return m
}

func mapString(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%d ", k, m[k])
	}
	return strings.TrimSpace(b.String())
}

// daemon runs `offsetkeeper daemon` with environ until the test ends, and
// returns what it has logged so far.
func daemon(t testing.TB, environ []string, args ...string) func() string {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"daemon", "--leader-election=false", "--listen", ""}, args...)...)
	cmd.Env = environ
	var logs bytes.Buffer
	var mu sync.Mutex
	cmd.Stdout, cmd.Stderr = &lockedWriter{&mu, &logs}, &lockedWriter{&mu, &logs}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			mu.Lock()
			t.Logf("daemon logs:\n%s", logs.String())
			mu.Unlock()
		}
	})
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		return logs.String()
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// producer is a client that writes records to the partition they name.
func producer(t testing.TB, c *realconnect.Cluster) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.KC.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

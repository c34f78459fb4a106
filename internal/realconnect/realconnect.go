// Package realconnect runs a real Apache Kafka Connect worker over an
// in-process kfake cluster, for tests. It is a test helper: only _test.go
// files import it.
//
// The worker is found through OFFSETKEEPER_TEST_CONNECT, a directory that
// holds either bin/connect-worker (the build in ../shared/kafka-connect:
// Connect 3.8's own herder, backing stores and REST resources) or
// bin/connect-distributed.sh (a Kafka download, started with a generated
// worker .properties); a relative path is taken from the module's root.
// Unset, [Dir] skips the test with a one-line reason.
//
// The types to know are [Cluster] (kfake with Connect's topics created up
// front: the Java admin client cannot create topics on kfake), [Worker] (one
// worker subprocess, stopped when the test ends) and [REST] (the requests a
// test makes of Connect's REST API, each answer kept whole).
package realconnect

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
)

// EnvDir names the environment variable that points at a worker.
const EnvDir = "OFFSETKEEPER_TEST_CONNECT"

// StartTimeout bounds a worker's start: the JVM, the REST listener and the
// first group join. Generous, because the machine may be shared.
var StartTimeout = 3 * time.Minute

// Kind is how a worker directory runs a worker.
type Kind int

const (
	// Shared is bin/connect-worker, the build that runs without Jetty.
	Shared Kind = iota
	// Distribution is a Kafka download's bin/connect-distributed.sh.
	Distribution
)

// Dir returns the worker directory and its kind, or skips t when
// OFFSETKEEPER_TEST_CONNECT is unset. A set variable that names no worker
// fails t: a mistyped path must not pass as a skipped suite.
func Dir(t testing.TB) (string, Kind) {
	t.Helper()
	dir := os.Getenv(EnvDir)
	if dir == "" {
		t.Skip(EnvDir + " is unset: no real Kafka Connect worker to test against (see README, Development)")
	}
	abs, err := resolve(dir)
	if err != nil {
		t.Fatalf("%s=%s: %v", EnvDir, dir, err)
	}
	if isExec(filepath.Join(abs, "bin", "connect-worker")) {
		return abs, Shared
	}
	if isExec(filepath.Join(abs, "bin", "connect-distributed.sh")) {
		return abs, Distribution
	}
	t.Fatalf("%s=%s holds neither bin/connect-worker nor bin/connect-distributed.sh", EnvDir, dir)
	return "", 0
}

// resolve makes dir absolute. A relative dir is taken from the module's
// root (the directory of go.mod above the working directory), where
// `go test ./...` is run, not from the package directory each test binary
// runs in.
func resolve(dir string) (string, error) {
	if filepath.IsAbs(dir) {
		return dir, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, dir), nil
		}
		if filepath.Dir(d) == d {
			return filepath.Abs(dir)
		}
	}
}

func isExec(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// Cluster is a 3-broker kfake cluster with Connect's worker topics.
type Cluster struct {
	KC      *kfake.Cluster
	Client  *kgo.Client
	Brokers string
	Topics  connectdemo.Topics
}

// NewCluster starts a kfake cluster (connectdemo.NewCluster: 3 brokers,
// no automatic topic creation; opts override), creates the default worker
// topics with replication factor 3, and closes it all when t ends.
func NewCluster(t testing.TB, opts ...kfake.Opt) *Cluster {
	t.Helper()
	kc, err := connectdemo.NewCluster(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	c := &Cluster{KC: kc, Client: cl, Brokers: strings.Join(kc.ListenAddrs(), ","), Topics: connectdemo.DefaultTopics()}
	c.Topics.ReplicationFactor = 3
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := connectdemo.CreateTopics(ctx, cl, c.Topics); err != nil {
		t.Fatal(err)
	}
	return c
}

// CreateTopic creates a topic with partitions partitions (compacted when
// compact), replication factor 3. An existing topic is left as it is.
func (c *Cluster) CreateTopic(t testing.TB, name string, partitions int32, compact bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var cfgs map[string]*string
	if compact {
		cfgs = map[string]*string{"cleanup.policy": kmsg.StringPtr("compact")}
	}
	resp, err := kadm.NewClient(c.Client).CreateTopic(ctx, partitions, 3, cfgs, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		t.Fatalf("create topic %s: %v", name, err)
	}
}

// Options configure a worker.
type Options struct {
	// GroupID is the worker's group.id; default "connect-cluster".
	GroupID string
	// Set overrides worker settings, key=value (exactly.once.source.support=enabled).
	Set []string
}

// Worker is one Connect worker subprocess.
type Worker struct {
	// URL is the REST API's base URL, http://127.0.0.1:port.
	URL string
	// GroupID is the worker's group.id.
	GroupID string
	// Log is the file that holds the worker's stdout and stderr.
	Log string

	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex
	err  error
}

// Start starts a worker over c and waits until its REST API answers and it
// has joined its group. It is stopped (SIGTERM, then SIGKILL) when t ends;
// when t failed, the tail of its log is printed.
func Start(t testing.TB, c *Cluster, opts Options) *Worker {
	t.Helper()
	dir, kind := Dir(t)
	if opts.GroupID == "" {
		opts.GroupID = connectdemo.DefaultWorkerGroupID
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	w := &Worker{URL: "http://127.0.0.1:" + strconv.Itoa(port), GroupID: opts.GroupID,
		Log: filepath.Join(tmp, "worker.log"), done: make(chan struct{})}
	cmd, err := command(dir, kind, tmp, c, port, opts)
	if err != nil {
		t.Fatal(err)
	}
	w.cmd = cmd
	logf, err := os.Create(w.Log)
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("start connect worker %s: %v", cmd.Path, err)
	}
	ready, joined := make(chan struct{}), make(chan struct{})
	var readyOnce sync.Once
	markReady := func() { readyOnce.Do(func() { close(ready) }) }
	go w.scan(pr, logf, markReady, joined)
	if kind == Distribution {
		go w.pollReady(markReady) // its log lines are no contract: ask the API
	}
	go func() {
		err := cmd.Wait()
		w.mu.Lock()
		w.err = err
		w.mu.Unlock()
		pw.Close()
		close(w.done)
	}()
	t.Cleanup(func() {
		w.stop()
		if t.Failed() {
			t.Logf("connect worker log (%s), its errors:\n%s\nlast lines:\n%s", w.Log, errorBlocks(w.Log, 5, 30), tail(w.Log, 60))
		}
	})
	w.await(t, ready, joined)
	return w
}

// await waits for both signs of a ready worker, failing t if the worker
// exits or StartTimeout passes first.
func (w *Worker) await(t testing.TB, ready, joined chan struct{}) {
	t.Helper()
	timeout := time.After(StartTimeout)
	for ready != nil || joined != nil {
		select {
		case <-ready:
			ready = nil
		case <-joined:
			joined = nil
		case <-w.done:
			t.Fatalf("connect worker exited before it was ready (%v); log:\n%s", w.exitErr(), tail(w.Log, 60))
		case <-timeout:
			t.Fatalf("connect worker not ready within %s (REST up: %v, group joined: %v); log:\n%s",
				StartTimeout, ready == nil, joined == nil, tail(w.Log, 60))
		}
	}
}

// scan copies the worker's output to its log, calling ready when the REST
// API listens and closing joined at the first group join.
func (w *Worker) scan(r io.Reader, logf *os.File, ready func(), joined chan struct{}) {
	defer logf.Close()
	var joinedOnce sync.Once
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(logf, line)
		switch {
		case strings.Contains(line, "JVMCONNECT READY"):
			ready()
		case strings.Contains(line, "Joined group at generation"):
			joinedOnce.Do(func() { close(joined) })
		}
	}
	io.Copy(io.Discard, r)
}

// pollReady calls ready once GET / answers 200, or gives up when the
// worker exits.
func (w *Worker) pollReady(ready func()) {
	hc := &http.Client{Timeout: 5 * time.Second}
	for {
		select {
		case <-w.done:
			return
		case <-time.After(200 * time.Millisecond):
		}
		resp, err := hc.Get(w.URL + "/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				ready()
				return
			}
		}
	}
}

func (w *Worker) exitErr() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// stop sends SIGTERM to the worker's process group, and SIGKILL if it has
// not exited within 30 seconds.
func (w *Worker) stop() {
	select {
	case <-w.done:
		return
	default:
	}
	pgid := w.cmd.Process.Pid
	syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-w.done:
	case <-time.After(30 * time.Second):
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-w.done
	}
}

// Stop stops the worker now, as the end of the test would.
func (w *Worker) Stop() { w.stop() }

// Kill kills the worker's process group with SIGKILL, as a machine lost
// would stop it (nothing flushed, nothing committed), and waits for it.
func (w *Worker) Kill() {
	select {
	case <-w.done:
		return
	default:
	}
	syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL)
	<-w.done
}

// REST returns a client of the worker's REST API.
func (w *Worker) REST(t testing.TB) *REST { return NewREST(t, w.URL) }

// command builds the command line that starts a worker of kind from dir.
func command(dir string, kind Kind, tmp string, c *Cluster, port int, opts Options) (*exec.Cmd, error) {
	env := append(os.Environ(), "LOG_DIR="+filepath.Join(tmp, "logs"))
	if kind == Shared {
		args := []string{"--bootstrap", c.Brokers, "--rest-port", strconv.Itoa(port), "--rest-host", "127.0.0.1", "--group-id", opts.GroupID}
		for _, kv := range opts.Set {
			args = append(args, "--set", kv)
		}
		cmd := exec.Command(filepath.Join(dir, "bin", "connect-worker"), args...)
		cmd.Env = env
		return cmd, nil
	}
	props := filepath.Join(tmp, "worker.properties")
	if err := os.WriteFile(props, []byte(workerProperties(dir, tmp, c, port, opts)), 0o600); err != nil {
		return nil, fmt.Errorf("write worker properties: %w", err)
	}
	cmd := exec.Command(filepath.Join(dir, "bin", "connect-distributed.sh"), props)
	cmd.Env = env
	return cmd, nil
}

// workerProperties is the .properties of a distribution's worker: the
// defaults of bin/connect-worker (a typical connect-distributed.properties,
// client telemetry off), then opts.Set.
func workerProperties(dir, tmp string, c *Cluster, port int, opts Options) string {
	p := []string{
		"bootstrap.servers=" + c.Brokers,
		"group.id=" + opts.GroupID,
		"key.converter=org.apache.kafka.connect.json.JsonConverter",
		"value.converter=org.apache.kafka.connect.json.JsonConverter",
		"key.converter.schemas.enable=false",
		"value.converter.schemas.enable=false",
		"offset.storage.topic=" + c.Topics.Offsets,
		"config.storage.topic=" + c.Topics.Configs,
		"status.storage.topic=" + c.Topics.Status,
		"offset.storage.replication.factor=3",
		"config.storage.replication.factor=3",
		"status.storage.replication.factor=3",
		"offset.flush.interval.ms=1000",
		"listeners=http://127.0.0.1:" + strconv.Itoa(port),
		"rest.advertised.host.name=127.0.0.1",
		"rest.advertised.port=" + strconv.Itoa(port),
		"enable.metrics.push=false",
		"producer.enable.metrics.push=false",
		"consumer.enable.metrics.push=false",
		"admin.enable.metrics.push=false",
	}
	// Since Kafka 3.2 the FileStream connectors are not on the worker's
	// classpath; the quickstart names their jar as a plugin.
	if jars, _ := filepath.Glob(filepath.Join(dir, "libs", "connect-file-*.jar")); len(jars) > 0 {
		p = append(p, "plugin.path="+strings.Join(jars, ","))
	}
	p = append(p, opts.Set...)
	return strings.Join(p, "\n") + "\n"
}

// freePort returns a loopback TCP port nothing listens on.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// tail is the last n lines of the file at path.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "(no log)"
		}
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// errorBlocks returns the first n ERROR entries of a worker log, each with
// up to lines lines of what follows it (the stack trace): the last lines of
// a failed test's log are the worker shutting down, and the cause of an
// error answer (a 500 from the REST API) is logged where it happened.
func errorBlocks(path string, n, lines int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	var out []string
	all := strings.Split(string(b), "\n")
	for i := 0; i < len(all) && n > 0; i++ {
		if !strings.Contains(all[i], "] ERROR ") {
			continue
		}
		n--
		end := i + 1
		for end < len(all) && end < i+lines && !strings.HasPrefix(all[end], "[") {
			end++
		}
		out = append(out, all[i:end]...)
		i = end - 1
	}
	if len(out) == 0 {
		return "(none)"
	}
	return strings.Join(out, "\n")
}

// Consumer runs the shared build's plain Java consumer (bin/consumer) with
// args (consume|committed --bootstrap B --group G --topic T ...) and
// returns its stdout. A distribution has no such driver: the test is
// skipped, saying so.
func Consumer(t testing.TB, args ...string) string {
	t.Helper()
	dir, kind := Dir(t)
	if kind != Shared {
		t.Skip("bin/consumer (a plain Java consumer driver) is only in the shared build (../shared/kafka-connect)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "bin", "consumer"), args...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("bin/consumer %s: %v\nstdout:\n%s\nstderr (tail):\n%s", strings.Join(args, " "), err, out.String(), lastLines(errb.String(), 40))
	}
	return out.String()
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

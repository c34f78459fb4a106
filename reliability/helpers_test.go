package reliability

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// binDir holds the offsetkeeper binary built for this test run.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "offsetkeeper-reliability-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary builds cmd/offsetkeeper once per test run and returns its path.
// It is built without the race detector (a race binary starts slowly, and
// the suite runs it a few hundred times; the in-process tests cover races)
// unless OFFSETKEEPER_RACE_BINARY=1 and the tests run with -race.
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
		cmd := exec.Command(goTool, args...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	})
	if buildErr != nil {
		t.Fatalf("build offsetkeeper: %v", buildErr)
	}
	return binPath
}

// cleanEnv is the environment of the test process without any
// OFFSETKEEPER_ variable, so the developer's settings never leak into a
// binary under test.
func cleanEnv(extra ...string) []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "OFFSETKEEPER_") })
	return append(env, extra...)
}

// result is one run of the binary.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// runBin runs the binary to completion (at most two minutes) with env
// added to a clean environment.
func runBin(t testing.TB, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary(t), args...)
	cmd.Env = cleanEnv(env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("offsetkeeper %s: hung for 2 minutes\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), out.String(), errb.String())
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

// cluster is a seeded 3-broker kfake cluster and a local store directory.
type cluster struct {
	t       testing.TB
	kc      *kfake.Cluster
	cl      *kgo.Client
	adm     *kadm.Client
	spec    connectdemo.Spec
	exp     *connectdemo.Expected
	brokers string
	store   string // a directory
}

// newCluster starts a kfake cluster seeded with spec (nil: unseeded).
func newCluster(t testing.TB, spec *connectdemo.Spec, opts ...kfake.Opt) *cluster {
	t.Helper()
	kc, cl := testkit.Cluster(t, opts...)
	c := &cluster{
		t: t, kc: kc, cl: cl, adm: kadm.NewClient(cl),
		brokers: strings.Join(kc.ListenAddrs(), ","),
		store:   filepath.Join(t.TempDir(), "store"),
	}
	if spec != nil {
		c.spec = *spec
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		exp, err := connectdemo.Seed(ctx, cl, *spec)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(exp.Stop)
		c.exp = exp
	}
	return c
}

// bin runs the binary against this cluster and store.
func (c *cluster) bin(args ...string) result {
	c.t.Helper()
	return runBin(c.t, c.env(), args...)
}

// env is the environment that points the binary at this cluster and
// store, through the flags' environment twins.
func (c *cluster) env() []string {
	return []string{
		"OFFSETKEEPER_STORE=" + c.store,
		"OFFSETKEEPER_BROKERS=" + c.brokers,
		"OFFSETKEEPER_KAFKA_TIMEOUT=10s",
		"OFFSETKEEPER_OFFSETS_TOPIC=" + connectdemo.DefaultOffsetsTopic,
	}
}

// mustBin runs the binary and fails the test unless it exits with want.
func (c *cluster) mustBin(want int, args ...string) result {
	c.t.Helper()
	r := c.bin(args...)
	if r.code != want {
		c.t.Fatalf("offsetkeeper %s: want exit %d, got %s", strings.Join(args, " "), want, r)
	}
	return r
}

// snapshotID takes a snapshot with the binary and returns its ID.
func (c *cluster) snapshotID(args ...string) string {
	c.t.Helper()
	r := c.mustBin(0, append([]string{"snapshot"}, args...)...)
	return lastLine(r.stdout)
}

// produce writes records with a plain producer (murmur2 partitioner).
func (c *cluster) produce(recs ...*kgo.Record) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		c.t.Fatal(err)
	}
}

// stopAll stops every connector that has a config, as the Connect herder
// does on PUT /connectors/<name>/stop: an empty task commit, then target
// state STOPPED.
func (c *cluster) stopAll() {
	c.t.Helper()
	var names []string
	for n, conn := range c.exp.Connectors {
		if conn.HasConfig {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var recs []*kgo.Record
	for _, n := range names {
		recs = append(recs,
			&kgo.Record{Topic: connectdemo.DefaultConfigsTopic, Key: []byte("commit-" + n), Value: []byte(`{"tasks":0}`)},
			&kgo.Record{Topic: connectdemo.DefaultConfigsTopic, Key: []byte("target-state-" + n), Value: []byte(`{"state":"PAUSED","state.v2":"STOPPED"}`)},
		)
	}
	c.produce(recs...)
}

// capture reads the live cluster in process (worker topics of DefaultSpec).
func (c *cluster) capture() *snapshot.Snapshot {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	snap, err := capture.Capture(ctx, c.cl, capture.Options{})
	if err != nil {
		c.t.Fatal(err)
	}
	return snap
}

// openStore opens the cluster's store directory in process.
func (c *cluster) openStore() *store.Store {
	c.t.Helper()
	s, err := store.OpenStore(context.Background(), c.store)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { s.Close() })
	return s
}

// ends returns the end offset of every partition of topics.
func (c *cluster) ends(topics ...string) string {
	c.t.Helper()
	listed, err := c.adm.ListEndOffsets(context.Background(), topics...)
	if err != nil {
		c.t.Fatal(err)
	}
	var out []string
	listed.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			c.t.Fatalf("list end offset %s/%d: %v", o.Topic, o.Partition, o.Err)
		}
		out = append(out, fmt.Sprintf("%s/%d=%d", o.Topic, o.Partition, o.Offset))
	})
	sort.Strings(out)
	return strings.Join(out, " ")
}

// canonical is the document of snap without what differs between two
// captures of the same state (ID and creation time).
func canonical(t testing.TB, snap *snapshot.Snapshot) string {
	t.Helper()
	cp := *snap
	cp.ID, cp.CreatedAt = "", time.Time{}
	var b bytes.Buffer
	if err := cp.Encode(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// topicState is every live key of one offsets topic in a snapshot:
// "partition key" -> value, exact bytes.
func topicState(snap *snapshot.Snapshot, topic string) map[string]string {
	m := map[string]string{}
	for _, o := range snap.SourceTable().Collect() {
		if o.Topic == topic {
			m[fmt.Sprintf("%d %s", o.Partition, o.Key)] = string(o.Value)
		}
	}
	return m
}

// stateDiff describes how got differs from want, "" when equal.
func stateDiff(got, want map[string]string) string {
	var d []string
	for k, w := range want {
		if g, ok := got[k]; !ok {
			d = append(d, fmt.Sprintf("missing %s (want %q)", k, w))
		} else if g != w {
			d = append(d, fmt.Sprintf("%s = %q, want %q", k, g, w))
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			d = append(d, fmt.Sprintf("extra %s = %q", k, g))
		}
	}
	sort.Strings(d)
	if len(d) > 5 {
		d = append(d[:5], fmt.Sprintf("... %d more", len(d)-5))
	}
	return strings.Join(d, "; ")
}

// checkStore asserts that every snapshot the store lists verifies, and
// returns their IDs.
func checkStore(t testing.TB, st *store.Store) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	infos, err := st.Snapshots().List(ctx)
	if err != nil {
		t.Fatalf("list store: %v", err)
	}
	var ids []string
	for _, i := range infos {
		if _, err := st.Snapshots().Verify(ctx, i.ID); err != nil {
			t.Errorf("listed snapshot %s does not verify: %v", i.ID, err)
		}
		ids = append(ids, i.ID)
	}
	return ids
}

// key is a Connect offsets key for connector and a JSON partition map.
func key(connector, partition string) []byte {
	return []byte(`["` + connector + `",` + partition + `]`)
}

// damage rewrites offsets of DefaultSpec connectors in both offsets
// topics and moves a sink group, as a bad reset would; round makes each
// call write different values.
func (c *cluster) damage(round int) {
	c.t.Helper()
	v := func(s string) []byte { return []byte(fmt.Sprintf(s, round)) }
	c.produce(
		&kgo.Record{Topic: connectdemo.DefaultOffsetsTopic, Key: key(connectdemo.ConnJDBC, `{"protocol":"1","table":"shop.orders"}`), Value: v(`{"incrementing":%d}`)},
		&kgo.Record{Topic: connectdemo.DefaultOffsetsTopic, Key: key(connectdemo.ConnMongo, `{"rs":"rs0","server_id":"mongo1"}`)},
		&kgo.Record{Topic: connectdemo.DefaultOffsetsTopic, Key: key(connectdemo.ConnMySQL, `{"server":"dbserver9"}`), Value: v(`{"file":"mysql-bin.000001","pos":%d}`)},
		&kgo.Record{Topic: connectdemo.DefaultOffsetsTopic, Key: key(connectdemo.ConnFile, `{"filename":"/data/testdata.txt"}`), Value: v(`{"position":%d}`)},
		&kgo.Record{Topic: connectdemo.EOSOffsetsTopic, Key: key(connectdemo.ConnEOS, `{"server":"pgpayments"}`), Value: v(`{"lsn":%d}`)},
	)
	var offs kadm.Offsets
	for p := int32(0); p < 3; p++ {
		offs.Add(kadm.Offset{Topic: "clicks", Partition: p, At: int64(round % 7), LeaderEpoch: -1})
	}
	if err := c.adm.CommitAllOffsets(context.Background(), connectdemo.GroupSinkS3, offs); err != nil {
		c.t.Fatalf("commit %s: %v", connectdemo.GroupSinkS3, err)
	}
}

// offsetsTopics are DefaultSpec's two offsets topics.
var offsetsTopics = []string{connectdemo.DefaultOffsetsTopic, connectdemo.EOSOffsetsTopic}

// eventually polls cond every 20ms until it holds or d passes.
func eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

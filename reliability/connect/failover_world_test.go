package connect

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/realconnect"
)

// failoverWorld is a primary cluster whose Connect state names n
// FileStreamSource connectors (written to its config and offsets topics
// as a worker writes them: no worker runs there), each reading a file of
// its own whose position in the state is after fileLines/2 lines, and a
// standby cluster with a real worker: what a failover of many connectors
// needs, and nothing else.
type failoverWorld struct {
	a, b  *realconnect.Cluster
	w     *realconnect.Worker
	rest  *realconnect.REST
	store string
	dir   string
	n     int
	extra []string // connector settings beyond FileSource's
}

const (
	fileLines = 10
	bulkTopic = "bulk"
)

func connName(i int) string { return fmt.Sprintf("src-%04d", i) }

func (fw *failoverWorld) file(i int) string {
	return filepath.Join(fw.dir, fmt.Sprintf("f%04d.txt", i))
}

func fileLine(i, k int) string { return fmt.Sprintf("c%04d-line-%02d", i, k) }

// statePosition is the position of file i in the state: after half its
// lines.
func statePosition(i int) int64 {
	var n int64
	for k := 1; k <= fileLines/2; k++ {
		n += int64(len(fileLine(i, k)) + 1)
	}
	return n
}

func newFailoverWorld(tb testing.TB, n int, opts realconnect.Options, extra ...string) *failoverWorld {
	tb.Helper()
	realconnect.Dir(tb)
	if os.Getenv("JAVA_OPTS") == "" && n > 100 {
		tb.Setenv("JAVA_OPTS", "-Xmx3g -XX:+UseSerialGC") // a task is a producer and a thread
	}
	fw := &failoverWorld{a: realconnect.NewCluster(tb, kfake.ClusterID("primary")), b: realconnect.NewCluster(tb, kfake.ClusterID("standby")),
		store: "file://" + tb.TempDir(), dir: tb.TempDir(), n: n, extra: extra}
	fw.b.CreateTopic(tb, bulkTopic, 1, false)
	fw.a.CreateTopic(tb, bulkTopic, 1, false)
	var conf, offs []*kgo.Record
	for i := range n {
		var body strings.Builder
		for k := 1; k <= fileLines; k++ {
			body.WriteString(fileLine(i, k) + "\n")
		}
		if err := os.WriteFile(fw.file(i), []byte(body.String()), 0o644); err != nil {
			tb.Fatal(err)
		}
		name := connName(i)
		props := realconnect.FileSource(fw.file(i), bulkTopic, extra...)
		props["name"] = name
		cfg, _ := json.Marshal(map[string]any{"properties": props})
		task, _ := json.Marshal(map[string]any{"properties": props})
		conf = append(conf,
			&kgo.Record{Topic: fw.a.Topics.Configs, Key: []byte("connector-" + name), Value: cfg},
			&kgo.Record{Topic: fw.a.Topics.Configs, Key: []byte("task-" + name + "-0"), Value: task},
			&kgo.Record{Topic: fw.a.Topics.Configs, Key: []byte("commit-" + name), Value: []byte(`{"tasks":1}`)})
		file, _ := json.Marshal(fw.file(i))
		key := []byte(`["` + name + `",{"filename":` + string(file) + `}]`)
		offs = append(offs, &kgo.Record{Topic: fw.a.Topics.Offsets, Partition: connectdemo.Murmur2Partition(key, fw.a.Topics.OffsetsPartitions),
			Key: key, Value: []byte(`{"position":` + strconv.FormatInt(statePosition(i), 10) + `}`)})
	}
	pr := producer(tb, fw.a)
	ctx := context.Background()
	if err := pr.ProduceSync(ctx, conf...).FirstErr(); err != nil {
		tb.Fatal(err)
	}
	if err := pr.ProduceSync(ctx, offs...).FirstErr(); err != nil {
		tb.Fatal(err)
	}
	fw.w = realconnect.Start(tb, fw.b, opts)
	fw.rest = fw.w.REST(tb)
	return fw
}

// standbyFlags are failover's (and the daemon's) standby settings, with
// the standby's Connect at url.
func (fw *failoverWorld) standbyFlags(url string) []string {
	return []string{"--standby-brokers", fw.b.Brokers, "--standby-connect-url", url, "--standby-translate", "none"}
}

func (fw *failoverWorld) env() []string {
	return env("OFFSETKEEPER_BROKERS="+fw.a.Brokers, "OFFSETKEEPER_STORE="+fw.store, "OFFSETKEEPER_KAFKA_TIMEOUT=30s")
}

// syncStandby runs the daemon until every connector is in step on the
// standby (created STOPPED there with its offsets), then stops it; it
// returns how long that took.
func (fw *failoverWorld) syncStandby(tb testing.TB) time.Duration {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(binary(tb), append([]string{"daemon", "--leader-election=false", "--listen", addr, "--schedule", "@every 1h",
		"--journal-interval", "1s", "--standby-interval", "1s"}, fw.standbyFlags(fw.w.URL)...)...)
	cmd.Env = fw.env()
	logs := &lockedBuilder{b: &strings.Builder{}}
	cmd.Stdout, cmd.Stderr = logs, logs
	began := time.Now()
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	stop := func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	defer stop()
	for inStep(addr) < fw.n {
		select {
		case <-done:
			tb.Fatalf("the daemon exited\n%s", logs.String())
		default:
		}
		if time.Since(began) > 30*time.Minute {
			tb.Fatalf("the standby never got in step\n%s", tailOf(logs.String(), 20))
		}
		time.Sleep(200 * time.Millisecond)
	}
	return time.Since(began)
}

var inStepLine = regexp.MustCompile(`(?m)^offsetkeeper_standby_connectors\{state="in_step"\} (\S+)$`)

// inStep is the daemon's offsetkeeper_standby_connectors{state="in_step"}
// (0 while it does not answer).
func inStep(addr string) int {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	m := inStepLine.FindStringSubmatch(b.String())
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return int(v)
}

// failoverDoc is what the checks read of failover --output json.
type failoverDoc struct {
	Resumed []string `json:"resumed"`
	// ResumedBefore are those an earlier, killed run had resumed.
	ResumedBefore []string           `json:"resumed_before"`
	Seconds       float64            `json:"duration_seconds"`
	Phases        map[string]float64 `json:"phase_seconds"`
	Errors        []string           `json:"errors"`
}

// running is how many of the connectors the worker reports RUNNING with
// their task RUNNING, and one that is not, as an example.
func (fw *failoverWorld) running(tb testing.TB) (int, string) {
	tb.Helper()
	r := fw.rest.Do(http.MethodGet, "/connectors?expand=status", nil)
	var all map[string]struct {
		Status realconnect.Status `json:"status"`
	}
	if err := json.Unmarshal(r.Body, &all); err != nil {
		tb.Fatalf("GET /connectors?expand=status: %v: %s", err, r)
	}
	n, example := 0, ""
	for name, e := range all {
		st := e.Status
		if st.Connector.State == "RUNNING" && len(st.Tasks) == 1 && st.Tasks[0].State == "RUNNING" {
			n++
		} else if example == "" || name < example {
			example = name + " " + st.String()
		}
	}
	return n, example
}

// waitRunning waits until every connector and its task run; it returns
// how long that took.
func (fw *failoverWorld) waitRunning(tb testing.TB, limit time.Duration) time.Duration {
	tb.Helper()
	began := time.Now()
	for {
		n, example := fw.running(tb)
		if n == fw.n {
			return time.Since(began)
		}
		if time.Since(began) > limit {
			tb.Fatalf("%d of %d connectors run after %s; not: %s", n, fw.n, limit, example)
		}
		time.Sleep(time.Second)
	}
}

// checkDelivered checks that the standby's bulk topic (read committed)
// holds, for every connector, the lines of its file after its position in
// the state, each once: every connector resumed where the state says.
func (fw *failoverWorld) checkDelivered(tb testing.TB) {
	tb.Helper()
	want := fw.n * (fileLines - fileLines/2)
	got := realconnect.ReadTopic(tb, fw.b, bulkTopic, want)
	seen := map[string]int{}
	for _, v := range got {
		var line string
		if err := json.Unmarshal([]byte(v), &line); err != nil {
			tb.Fatalf("a record of %s: %q: %v", bulkTopic, v, err)
		}
		seen[line]++
	}
	bad := 0
	for i := range fw.n {
		for k := 1; k <= fileLines; k++ {
			wantN := 0
			if k > fileLines/2 {
				wantN = 1
			}
			if seen[fileLine(i, k)] != wantN && bad < 10 {
				bad++
				tb.Errorf("%s: %d times in the standby's topic, want %d", fileLine(i, k), seen[fileLine(i, k)], wantN)
			}
		}
	}
	if len(got) != want {
		tb.Errorf("the standby's topic holds %d records, want %d", len(got), want)
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
)

// freePorts returns the first of n consecutive loopback ports free now.
// They are below the ephemeral range when it can be read: the demo binds
// some of them only after its clients have connected, and a client's
// local port, taken from that range, must not be one of them.
func freePorts(t *testing.T, n int) int {
	t.Helper()
	low := ephemeralLow()
	for range 50 {
		addr := "127.0.0.1:0"
		if low > 20000+n {
			addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(20000+rand.IntN(low-20000-n)))
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		first := ln.Addr().(*net.TCPAddr).Port
		held := []net.Listener{ln}
		for i := 1; i < n; i++ {
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(first+i)))
			if err != nil {
				break
			}
			held = append(held, l)
		}
		for _, l := range held {
			l.Close()
		}
		if len(held) == n {
			return first
		}
	}
	t.Fatalf("no %d consecutive free ports", n)
	return 0
}

// ephemeralLow is the first port of Linux's ephemeral range, 0 when it
// cannot be read.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	low, _ := strconv.Atoi(f[0])
	return low
}

// startDemo runs the demo with args (in the test's directory) until the
// test ends, and returns its output once it has printed its walk-through.
func startDemo(t *testing.T, args ...string) *testkit.SyncBuffer {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	var out, errs testkit.SyncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"demo"}, args...), &out, &errs)
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("demo: exit %d\n%s", code, errs.String())
		}
	})
	for !strings.Contains(out.String(), "Ctrl-C stops the demo.") {
		select {
		case code := <-done:
			done <- code
			t.Fatalf("demo ended: exit %d\n%s\n%s", code, out.String(), errs.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return &out
}

// TestDemo runs the demo from an empty directory, as a new user would, and
// follows its walk-through: the Connect REST API answers, a bad reset
// through it, and the restore it prints with --stop-connectors --resume,
// then again --via connect.
func TestDemo(t *testing.T) {
	t.Chdir(t.TempDir())
	kport, cport := freePorts(t, 3), freePorts(t, 1)
	out := startDemo(t, "--port", strconv.Itoa(kport), "--rest-port", strconv.Itoa(cport), "--churn-every", "200ms")
	guide := joinContinued(out.String()) // commands over 120 columns are continued
	if e, l := strings.Index(guide, " events --brokers "), strings.Index(guide, " restore latest "); e < 0 || l < e {
		t.Errorf("the walk-through does not teach events before restore latest:\n%s", guide)
	}
	connectURL := "http://127.0.0.1:" + strconv.Itoa(cport)
	brokers := "127.0.0.1:" + strconv.Itoa(kport)
	for _, want := range []string{connectURL, "--stop-connectors --resume", "--via connect", "curl -sS --fail-with-body -X DELETE " + connectURL + "/connectors/inventory-connector/offsets",
		"go run ./cmd/offsetkeeper restore latest --connector inventory-connector --brokers " + brokers,
		// events and its commands first, restore latest second.
		"2. The reset as the journal caught it, with the restore back to just before it:\n       go run ./cmd/offsetkeeper events --brokers " + brokers} {
		if !strings.Contains(guide, want) {
			t.Errorf("the walk-through lacks %q:\n%s", want, guide)
		}
	}

	rest := func(method, path string) (int, string) {
		req, _ := http.NewRequestWithContext(t.Context(), method, connectURL+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}
	code, body := rest("GET", "/connectors")
	var names []string
	if code != 200 || json.Unmarshal([]byte(body), &names) != nil || !strings.Contains(body, "inventory-connector") {
		t.Fatalf("GET /connectors: %d %s", code, body)
	}
	// What the restores must bring back: the demo's first snapshot, as
	// Connect renders it (the running connector churns past it meanwhile).
	code, want, serr := runCLI(t, "show", "latest", "--connector", "inventory-connector", "--output", "connect-rest")
	if code != exitOK {
		t.Fatalf("show: exit %d: %s", code, serr)
	}
	want = offsetSet(t, want)
	var before string
	for deadline := time.Now().Add(time.Minute); ; { // the demo keeps the connector busy
		_, before = rest("GET", "/connectors/inventory-connector/offsets")
		if offsetSet(t, before) != want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("inventory-connector's offsets never moved past the first snapshot")
		}
		time.Sleep(50 * time.Millisecond)
	}

	badReset := func() {
		for _, r := range [][2]string{{"PUT", "/stop"}, {"DELETE", "/offsets"}, {"PUT", "/resume"}} {
			if code, body := rest(r[0], "/connectors/inventory-connector"+r[1]); code >= 300 {
				t.Fatalf("%s %s: %d %s", r[0], r[1], code, body)
			}
		}
		if _, after := rest("GET", "/connectors/inventory-connector/offsets"); after == before {
			t.Fatalf("the reset changed nothing: %s", after)
		}
	}
	restore := []string{"restore", "latest", "--connector", "inventory-connector", "--brokers", brokers,
		"--connect-url", connectURL, "--stop-connectors", "--resume", "--kafka-timeout", "10s"}
	for _, via := range []string{"kafka", "connect"} {
		badReset()
		code, rout, rerr := runCLI(t, append(restore, "--via", via)...)
		if code != exitOK {
			t.Fatalf("restore --via %s: exit %d\n%s\n%s", via, code, rout, rerr)
		}
		if !strings.Contains(rout, "resumed: connector inventory-connector") {
			t.Errorf("restore --via %s did not resume:\n%s", via, rout)
		}
		if _, after := rest("GET", "/connectors/inventory-connector/offsets"); offsetSet(t, after) != want {
			t.Errorf("restore --via %s: offsets\n got %s\nwant %s", via, offsetSet(t, after), want)
		}
		// The demo leaves a connector reset through the REST API alone:
		// once its churn has ticked twice more (a running connector it
		// churns moved twice), the offsets are still the restored ones.
		for range 2 {
			demoChurned(t, rest, connectdemo.ConnJDBC)
		}
		if _, later := rest("GET", "/connectors/inventory-connector/offsets"); offsetSet(t, later) != want {
			t.Errorf("after restore --via %s the demo moved the offsets again:\n%s", via, later)
		}
	}
	first, _, _ := strings.Cut(strings.TrimSpace(strings.SplitAfter(guide, "First snapshot: ")[1]), " ")
	demoSinkReset(t, rest, first, append(restore[2:2], "--brokers", brokers, "--connect-url", connectURL, "--stop-connectors", "--resume", "--kafka-timeout", "10s"))
}

// demoSinkReset resets the demo's running sink through its REST API as
// Connect allows it (stopped, its tasks gone from the group), then restores
// it from first, the demo's first snapshot (the demo never moves that
// group's offsets): they come back.
func demoSinkReset(t *testing.T, rest func(method, path string) (int, string), first string, flags []string) {
	t.Helper()
	const sink = "/connectors/es-sink-orders"
	_, before := rest("GET", sink+"/offsets")
	if offsetSet(t, before) == "" {
		t.Fatalf("es-sink-orders has no offsets to reset: %s", before)
	}
	if code, body := rest("PUT", sink+"/stop"); code >= 300 {
		t.Fatalf("PUT stop: %d %s", code, body)
	}
	// As on a real worker, the reset is refused until the stopped tasks
	// have left the group; the demo's Connect lets them leave.
	for deadline := time.Now().Add(30 * time.Second); ; {
		code, body := rest("DELETE", sink+"/offsets")
		if code < 300 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("DELETE offsets of the stopped sink: still %d %s", code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code, body := rest("PUT", sink+"/resume"); code >= 300 {
		t.Fatalf("PUT resume: %d %s", code, body)
	}
	if _, after := rest("GET", sink+"/offsets"); offsetSet(t, after) != "" {
		t.Fatalf("the sink reset left offsets: %s", after)
	}
	args := append([]string{"restore", first, "--connector", "es-sink-orders"}, flags...)
	if code, rout, rerr := runCLI(t, args...); code != exitOK {
		t.Fatalf("restore of the sink: exit %d\n%s\n%s", code, rout, rerr)
	}
	if _, after := rest("GET", sink+"/offsets"); offsetSet(t, after) != offsetSet(t, before) {
		t.Errorf("after the restore es-sink-orders has offsets\n%s\nwant\n%s", offsetSet(t, after), offsetSet(t, before))
	}
}

// offsetSet is a Connect REST offsets body in a canonical order.
func offsetSet(t *testing.T, body string) string {
	t.Helper()
	var v struct {
		Offsets []json.RawMessage `json:"offsets"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("offsets body %q: %v", body, err)
	}
	var out []string
	for _, o := range v.Offsets {
		var m map[string]any
		if err := json.Unmarshal(o, &m); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(m) // sorted keys
		out = append(out, string(b))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

func TestDemoProgram(t *testing.T) {
	for arg0, want := range map[string]string{
		"/tmp/go-build1234/b001/exe/offsetkeeper": "go run ./cmd/offsetkeeper",
		"offsetkeeper":                "offsetkeeper",
		"./offsetkeeper":              "./offsetkeeper",
		"/usr/local/bin/offsetkeeper": "/usr/local/bin/offsetkeeper",
	} {
		if got := demoProgram(arg0); got != want {
			t.Errorf("demoProgram(%q) = %q, want %q", arg0, got, want)
		}
	}
}

// demoChurned waits until the demo's churn moves conn's offsets, as read
// through the demo's Connect REST API (rest).
func demoChurned(t *testing.T, rest func(method, path string) (int, string), conn string) {
	t.Helper()
	_, was := rest("GET", "/connectors/"+conn+"/offsets")
	for deadline := time.Now().Add(30 * time.Second); ; {
		if _, now := rest("GET", "/connectors/"+conn+"/offsets"); offsetSet(t, now) != offsetSet(t, was) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the demo's churn did not move %s's offsets in 30s", conn)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

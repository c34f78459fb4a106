package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// chromiumPath finds Debian's chromium (or CHROMIUM=path); "" if none.
func chromiumPath() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browser starts headless Chromium for the test and collects the console
// errors and exceptions of every page it loads.
type browser struct {
	ctx    context.Context
	mu     sync.Mutex
	errors []string
}

func newBrowser(t *testing.T) *browser {
	path := chromiumPath()
	if path == "" {
		t.Skip("SKIPPED: NO CHROMIUM FOUND: the page is not tested in a browser; install Debian's chromium (apt-get install -y chromium; .ci/run does) or set CHROMIUM=/path/to/chrome")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1360, 900),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelB(); cancelA() })
	b := &browser{ctx: ctx}
	if err := chromedp.Listen(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
				b.errors = append(b.errors, fmt.Sprintf("console.%s: %v", e.Type, e.Args))
			}
		case *runtime.EventExceptionThrown:
			b.errors = append(b.errors, fmt.Sprintf("exception: %s at %s:%d", e.ExceptionDetails.Text, e.ExceptionDetails.URL, e.ExceptionDetails.LineNumber))
		}
	}); err != nil {
		t.Fatalf("start chromium %s: %v", path, err)
	}
	return b
}

// load opens u, checks it raised no console error, saves a screenshot as
// name.png (in OFFSETKEEPER_SCREENSHOTS when set, else the test's temp
// dir) and returns the numbers js evaluates to.
func (b *browser) load(t *testing.T, u, name string, js map[string]string) map[string]int {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(u), chromedp.WaitReady("footer")); err != nil {
		t.Fatalf("load %s: %v", u, err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", u, err)
	}
	got := map[string]int{}
	for k, expr := range js {
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](expr))
		if err != nil {
			t.Fatalf("%s: evaluate %s: %v", u, expr, err)
		}
		got[k] = n
	}
	dir := os.Getenv("OFFSETKEEPER_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.errors) > 0 {
		t.Errorf("%s: console errors: %v", u, b.errors)
		b.errors = nil
	}
	return got
}

// pageJournalInterval is the journal interval of the daemons whose pages
// the tests read. A page's newest state is the journal's state at now,
// refused as not covered yet once the last flush is two intervals old (see
// store.flushedLately): at 1s, flushes slowed past a second on a loaded
// machine made the page refuse its own newest state.
const pageJournalInterval = "3s"

// The page, as a user looks at it: a daemon journals a cluster whose
// connectors commit; after a reset made by hand the board, the timeline,
// the connector pages and the diff show it in a real browser, and the
// JSON twins parse.
func TestPageInBrowser(t *testing.T) {
	b := newBrowser(t)
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	// A worker reports a task of the mirror connector failed.
	c.produce(&kgo.Record{Topic: connectdemo.DefaultStatusTopic, Key: []byte("status-task-" + connectdemo.ConnMirror + "-1"),
		Value: []byte(`{"state":"FAILED","trace":"org.apache.kafka.connect.errors.ConnectException: eu is unreachable\n\tat X.poll(X.java:1)","worker_id":"connect-1:8083","generation":9}`)})
	addr := freeAddr(t)
	logs := c.startDaemon("--journal-interval", pageJournalInterval, "--schedule", "@every 1h", "--listen", addr)
	c.waitJournal(time.Now(), logs)
	base := "http://" + addr

	jdbc := key(connectdemo.ConnJDBC, `{"protocol":"1","table":"shop.orders"}`)
	for i := int64(1); i <= 4; i++ {
		c.produce(&kgo.Record{Topic: connectdemo.DefaultOffsetsTopic, Key: jdbc, Value: []byte(fmt.Sprintf(`{"incrementing":%d}`, 1000+100*i))})
		c.commit(connectdemo.GroupSinkS3, kadm.Offset{Topic: "clicks", Partition: 0, At: 60 + i})
		c.waitJournal(moment(), logs)
	}
	before := moment()
	c.badReset()
	c.waitJournal(moment(), logs)
	// The page reads the store through a cache of a couple of seconds:
	// wait until it shows the reset's events rather than for the cache.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var tl struct {
			Events []snapshot.Event `json:"events"`
		}
		getJSON(t, base+"/api/timeline", &tl)
		if len(tl.Events) >= 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page shows %d events of the reset after 30 s", len(tl.Events))
		}
	}

	checkBoardHTML(t, base)
	checkTwins(t, base, before)

	got := b.load(t, base+"/", "web-board", map[string]string{
		"rows":   `document.querySelectorAll("tr.row").length`,
		"reset":  `document.querySelectorAll("tr.row.st-reset").length`,
		"sparks": `document.querySelectorAll("tr.row svg.spark path").length`,
		"first":  `document.querySelector("tr.row").classList.contains("st-ok") ? 0 : 1`,
		"failed": `document.querySelector("tr.row").classList.contains("st-failed") && document.querySelector("tr.row .worker.bad").textContent.includes("task 1 FAILED: org.apache.kafka.connect.errors.ConnectException") ? 1 : 0`,
		"worker": `[...document.querySelectorAll("tr.row .worker")].filter(e => e.textContent.includes("tasks running")).length`,
	})
	if got["rows"] < 14 || got["reset"] < 2 || got["sparks"] < 10 || got["first"] != 1 || got["failed"] != 1 || got["worker"] < 8 {
		t.Errorf("board: %v; want every connector with its worker state, the failed one first, then the reset ones, with their sparklines", got)
	}
	got = b.load(t, base+"/connectors/"+url.PathEscape(connectdemo.ConnSinkS3), "web-connector-sink", map[string]string{
		"plots":  `document.querySelectorAll("svg.plot").length`,
		"points": `document.querySelectorAll("svg.plot[data-partition='clicks-0'] circle.pt").length`,
		"logend": `document.querySelectorAll("svg.plot circle.logend").length`,
		"flags":  `document.querySelectorAll("svg.plot g.flag").length`,
	})
	if got["plots"] < 3 || got["points"] < 4 || got["logend"] < 3 || got["flags"] < 1 {
		t.Errorf("sink page: %v; want a plot per partition with the commits, the log end and the reset flag", got)
	}
	got = b.load(t, base+"/connectors/"+url.PathEscape(connectdemo.ConnJDBC), "web-connector-source", map[string]string{
		"incrementing": `document.querySelectorAll("svg.plot[data-field='incrementing'] circle.pt").length`,
		"flags":        `document.querySelectorAll("svg.plot g.flag.rewound").length`,
	})
	if got["incrementing"] < 5 || got["flags"] < 1 {
		t.Errorf("source page: %v; want the incrementing position's points and the rewind flag", got)
	}
	got = b.load(t, base+"/timeline?at="+url.QueryEscape(before.UTC().Format(time.RFC3339Nano)), "web-timeline", map[string]string{
		"snaps":    `document.querySelectorAll("svg.timeline g.snap").length`,
		"epochs":   `document.querySelectorAll("svg.timeline rect.epoch").length`,
		"flags":    `document.querySelectorAll("svg.timeline g.flag").length`,
		"backward": `document.querySelectorAll(".plan tr.v-backward, .plan tr.v-appeared").length`,
		"cmd":      `document.querySelector("pre.cmd").textContent.includes("restore --at ") ? 1 : 0`,
	})
	if got["snaps"] < 1 || got["epochs"] < 1 || got["flags"] < 4 || got["backward"] < 3 || got["cmd"] != 1 {
		t.Errorf("timeline: %v; want snapshots, an epoch, the reset flags and the plan with its command", got)
	}
	got = b.load(t, base+"/diff?from="+url.QueryEscape(before.UTC().Format(time.RFC3339Nano))+"&to=live", "web-diff", map[string]string{
		"backward": `document.querySelectorAll("tr.v-backward").length`,
		"vanished": `document.querySelectorAll("tr.v-vanished").length`,
	})
	if got["backward"] < 3 || got["vanished"] < 2 {
		t.Errorf("diff: %v; want the rewound sink partitions and the tombstoned sources", got)
	}
}

// checkBoardHTML: GET / is HTML naming every connector with its state.
func checkBoardHTML(t *testing.T, base string) {
	code, body, err := httpGet(base + "/")
	if err != nil || code != 200 || !strings.HasPrefix(body, "<!doctype html>") {
		t.Fatalf("GET /: %d %v\n%.300s", code, err, body)
	}
	var board struct {
		Connectors []struct{ Name, State string } `json:"connectors"`
	}
	getJSON(t, base+"/api/connectors", &board)
	if len(board.Connectors) < 14 {
		t.Errorf("/api/connectors: %d connectors", len(board.Connectors))
	}
	for _, c := range board.Connectors {
		i := strings.Index(body, `data-connector="`+htmlAttr(c.Name)+`"`)
		if i < 0 {
			t.Errorf("GET / does not name %s", c.Name)
			continue
		}
		row, _, _ := strings.Cut(body[i:], "</tr>")
		if !strings.Contains(row, ">"+c.State+"</span>") {
			t.Errorf("GET / does not show %s %s:\n%s", c.Name, c.State, row)
		}
	}
}

func htmlAttr(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;").Replace(s)
}

// checkTwins: every view's JSON twin parses and says what the page shows.
func checkTwins(t *testing.T, base string, before time.Time) {
	var board struct {
		Connectors []struct{ Name, Status, State string } `json:"connectors"`
		Journal    struct{ On, Live bool }                `json:"journal"`
		LogEnd     bool                                   `json:"log_end"`
	}
	getJSON(t, base+"/api/connectors", &board)
	status := map[string]string{}
	for _, r := range board.Connectors {
		status[r.Name] = r.Status
	}
	if status[connectdemo.ConnMongo] != "RESET" || status[connectdemo.ConnSinkES] != "RESET" || status[connectdemo.ConnJDBC] != "REWOUND" ||
		!board.Journal.On || !board.Journal.Live || !board.LogEnd {
		t.Errorf("/api/connectors: statuses %v, journal %+v, log_end %v", status, board.Journal, board.LogEnd)
	}
	var conn struct {
		Partitions []struct{ Partition, Field string } `json:"partitions"`
	}
	getJSON(t, base+"/api/connectors/"+url.PathEscape(connectdemo.ConnMySQL), &conn)
	// The journal's position field first (snapshot.PositionFields: ts_sec
	// for Debezium MySQL, whose pos restarts with every binlog file), the
	// binlog pos beside it.
	plotsPos := false
	for _, p := range conn.Partitions {
		plotsPos = plotsPos || p.Field == "pos"
	}
	if len(conn.Partitions) == 0 || conn.Partitions[0].Field != snapshot.PositionFields[0] || !plotsPos {
		t.Errorf("/api/connectors/%s: %+v; want Debezium MySQL ts_sec first and pos plotted", connectdemo.ConnMySQL, conn.Partitions)
	}
	var tl struct {
		Events []snapshot.Event `json:"events"`
		Plan   struct{ Command string }
	}
	getJSON(t, base+"/api/timeline?at="+url.QueryEscape(before.UTC().Format(time.RFC3339Nano))+"&connector="+connectdemo.ConnSinkS3, &tl)
	if len(tl.Events) < 4 || !strings.Contains(tl.Plan.Command, "--connector "+connectdemo.ConnSinkS3+" ") ||
		!strings.HasSuffix(tl.Plan.Command, " --dry-run") || !strings.Contains(tl.Plan.Command, " --store ") {
		t.Errorf("/api/timeline: %d events, plan %q", len(tl.Events), tl.Plan.Command)
	}
	var d struct {
		Counts map[string]int `json:"counts"`
	}
	getJSON(t, base+"/api/diff?from="+url.QueryEscape(before.UTC().Format(time.RFC3339Nano))+"&to=live", &d)
	if d.Counts["backward"] == 0 {
		t.Errorf("/api/diff: %v", d.Counts)
	}
	var snaps []snapshot.Info
	getJSON(t, base+"/api/snapshots", &snaps)
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	code, body, err := httpGet(u)
	if err != nil || code != 200 {
		t.Fatalf("GET %s: %d %v\n%s", u, code, err, body)
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("GET %s: %v\n%.500s", u, err, body)
	}
}

// The board at 1,000 connectors, measured once for docs/benchmarks.md
// (OFFSETKEEPER_PAGE_BENCH=1; nothing is asserted about the figures):
// the size of GET /, the server's time to answer it, and Chromium's time
// to load and lay it out.
func TestBoardAt1000Connectors(t *testing.T) {
	if os.Getenv("OFFSETKEEPER_PAGE_BENCH") == "" {
		t.Skip("a measurement: run with OFFSETKEEPER_PAGE_BENCH=1")
	}
	b := newBrowser(t)
	spec := connectdemo.DefaultSpec()
	spec.ExtraFileConnectors, spec.ExtraSinkGroups, spec.GroupPartitions = 500, 484, 4
	c := newCluster(t, &spec)
	for range 3 {
		c.snapshot()
	}
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	exit := make(chan int, 1)
	var stderr testkit.SyncBuffer
	go func() {
		exit <- run(ctx, []string{"serve", "--store", c.store, "--listen", addr, "--refresh", "0"}, &testkit.SyncBuffer{}, &stderr)
	}()
	t.Cleanup(func() { cancel(); <-exit })
	base := "http://" + addr
	var code int
	var body string
	var err error
	var cold time.Duration
	for range 100 {
		start := time.Now()
		if code, body, err = httpGet(base + "/"); err == nil {
			cold = time.Since(start)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code != 200 {
		t.Fatalf("GET /: %d %v %s", code, err, stderr.String())
	}
	// Kept: past the page's 2 s cache, so that the figure is a full read
	// (a benchmark of real time, run by hand with OFFSETKEEPER_PAGE_BENCH).
	time.Sleep(2100 * time.Millisecond)
	start := time.Now()
	_, body, _ = httpGet(base + "/")
	server := time.Since(start)
	rows := strings.Count(body, `<tr class="row `)
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write([]byte(body))
	zw.Close()
	time.Sleep(2100 * time.Millisecond) // past the cache again: the browser's load is a full read too
	got := b.load(t, base+"/", "board-1000", map[string]string{
		"rows": `document.querySelectorAll("tr.row").length`,
		"ms":   `Math.round(performance.getEntriesByType("navigation")[0].loadEventEnd)`,
	})
	t.Logf("board at %d connectors: %d bytes of HTML (%d gzipped; %d rows), server %v cold (reads the 3 snapshots), %v warm (store listed and read again, snapshots cached), browser load event at %d ms (%d rows laid out)",
		rows, len(body), zipped.Len(), rows, cold.Round(time.Millisecond), server.Round(time.Millisecond), got["ms"], got["rows"])
}

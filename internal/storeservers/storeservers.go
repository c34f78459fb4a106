// Package storeservers starts the object store servers operators run, for
// tests: MinIO (S3), Azurite (Azure Blob) and fake-gcs-server (Cloud
// Storage), each as a process of its own on a free loopback port with its
// data in a temporary directory, stopped when the test ends. A test finds
// the programs on PATH, in $GOPATH/bin, or where these variables say:
//
//	OFFSETKEEPER_TEST_MINIO          the minio binary
//	OFFSETKEEPER_TEST_AZURITE        the azurite-blob script (node_modules/.bin/azurite-blob)
//	OFFSETKEEPER_TEST_FAKE_GCS       the fake-gcs-server binary
//
// Azurite is also looked for in .cache/azurite/node_modules/.bin of the
// module and in ~/.cache/offsetkeeper-azurite/node_modules/.bin, where
// .ci/run installs it. A server whose program is missing is skipped with
// t.Skip, naming what to install, unless OFFSETKEEPER_TEST_REQUIRE_SERVERS
// names it (see require.go).
//
// Every server is reached through a Proxy, so that a test can cut the
// connection mid-call, slow it down, or let requests through and drop the
// replies.
package storeservers

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Bucket is the bucket (container) every server is started with.
const Bucket = "offsetkeeper-test"

// Server is a running store server.
type Server struct {
	// Name is the backend: "minio", "azurite" or "fake-gcs-server".
	Name string
	// URL is the store URL of Bucket, through Proxy.
	URL string
	// Env is the environment the URL needs (credentials, emulator host);
	// Use sets it for a test.
	Env map[string]string
	// WrongEnv is Env with credentials the server refuses (nil when it
	// accepts any).
	WrongEnv map[string]string
	// MissingURL is the store URL of a bucket that does not exist.
	MissingURL string
	// Proxy stands between the URL and the server.
	Proxy *Proxy

	t testing.TB
	// port is where the server listens: chosen free before each start,
	// and chosen again when another process took it first (the proxy
	// follows, so URL stays the same).
	port   int
	start  func() *exec.Cmd
	cmd    *exec.Cmd
	ready  func() error
	log    *syncBuffer
	exited chan struct{}
}

// syncBuffer is a bytes.Buffer for a process's output.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func (b *syncBuffer) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.b.Reset()
}

// Use sets s.Env for the test (t.Setenv: not in parallel tests).
func (s *Server) Use(t testing.TB) {
	for k, v := range s.Env {
		t.Setenv(k, v)
	}
}

// Stop stops the server: SIGTERM, then SIGKILL if it has not exited
// within 10 s (Azurite keeps its metadata in memory until it stops).
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.exited
	}
	s.cmd = nil
}

// Restart starts the server again on its data, on the same port unless
// another process took it meanwhile (URL stays the same either way).
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.run()
}

func (s *Server) run() {
	s.t.Helper()
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		if attempt > 0 {
			// The port may have been taken between freePort and the
			// server's bind (parallel test packages start servers too):
			// move to another one.
			s.port = freePort(s.t)
			s.Proxy.setTarget(fmt.Sprintf("127.0.0.1:%d", s.port))
		}
		if lastErr = s.startOnce(); lastErr == nil {
			return
		}
		s.Stop()
	}
	s.t.Fatalf("%s did not become ready: %v\n%s", s.Name, lastErr, s.log.String())
}

// startOnce starts the server on s.port and waits until it answers there
// itself: an answer from another process that holds the port (a server of
// another test package that took it first) is not readiness.
func (s *Server) startOnce() error {
	s.log.Reset()
	cmd := s.start()
	cmd.Stdout, cmd.Stderr = s.log, s.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("start %s: %v", s.Name, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	s.cmd, s.exited = cmd, exited
	var lastErr error
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); {
		if lastErr = s.ready(); lastErr == nil {
			owned, err := listensOn(cmd.Process.Pid, s.port)
			if err == nil && owned {
				return nil
			}
			lastErr = fmt.Errorf("port %d answers, but not from the %s started (pid %d): %v", s.port, s.Name, cmd.Process.Pid, err)
		}
		select {
		case <-exited:
			return fmt.Errorf("exited: %s (last check: %v)", s.log.String(), lastErr)
		case <-time.After(100 * time.Millisecond):
		}
	}
	return lastErr
}

// find returns the program env names, or name on PATH or in $GOPATH/bin,
// or one of the extra paths.
func find(env, name string, extra ...string) string {
	if p := os.Getenv(env); p != "" {
		return p
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		if home, err := os.UserHomeDir(); err == nil {
			gopath = filepath.Join(home, "go")
		}
	}
	for _, p := range append([]string{filepath.Join(gopath, "bin", name)}, extra...) {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	return ""
}

// freePort returns a loopback port nothing listens on.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// newServer is a server that will listen on port, or on a free port when
// port is 0.
func newServer(t testing.TB, name string, port int) *Server {
	logRun(t, name)
	if port == 0 {
		port = freePort(t)
	}
	s := &Server{Name: name, t: t, log: &syncBuffer{}, port: port}
	s.Proxy = NewProxy(t, fmt.Sprintf("127.0.0.1:%d", s.port))
	t.Cleanup(s.Stop)
	return s
}

func httpOK(method, u string, body io.Reader, ok ...int) error {
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, c := range ok {
		if resp.StatusCode == c {
			return nil
		}
	}
	return fmt.Errorf("%s %s: %s: %s", method, u, resp.Status, b)
}

// MinIO starts MinIO with Bucket created.
func MinIO(t testing.TB) *Server {
	t.Helper()
	bin := find("OFFSETKEEPER_TEST_MINIO", "minio")
	if bin == "" {
		missing(t, "minio", "minio not installed: go install github.com/minio/minio@v0.0.0-20260212201848-7aac2a2c5b7c (or set OFFSETKEEPER_TEST_MINIO)")
	}
	dir := t.TempDir()
	s := newServer(t, "minio", 0)
	const user, pass = "offsetkeeper", "offsetkeeper-secret"
	s.start = func() *exec.Cmd {
		cmd := exec.Command(bin, "server", dir, "--address", fmt.Sprintf("127.0.0.1:%d", s.port), "--console-address", fmt.Sprintf("127.0.0.1:%d", freePort(t)), "--quiet")
		cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+user, "MINIO_ROOT_PASSWORD="+pass, "MINIO_BROWSER=off", "MINIO_UPDATE=off", "MINIO_CI_CD=1")
		return cmd
	}
	s.ready = func() error {
		return httpOK("GET", fmt.Sprintf("http://127.0.0.1:%d/minio/health/ready", s.port), nil, 200)
	}
	s.run()
	s.Env = awsEnv(t, user, pass)
	s.WrongEnv = awsEnv(t, user, "not-the-secret")
	s.URL = s3URL(Bucket, "http://"+s.Proxy.Addr)
	s.MissingURL = s3URL("no-such-bucket", "http://"+s.Proxy.Addr)
	if err := CreateS3Bucket(s.Env, s.Endpoint(), Bucket); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	return s
}

func s3URL(bucket, endpoint string) string {
	q := url.Values{}
	q.Set("endpoint", endpoint)
	q.Set("region", "us-east-1")
	q.Set("use_path_style", "true")
	return (&url.URL{Scheme: "s3", Host: bucket, RawQuery: q.Encode()}).String()
}

// awsEnv is an AWS environment of static credentials and nothing from the
// machine.
func awsEnv(t testing.TB, id, secret string) map[string]string {
	nowhere := filepath.Join(t.TempDir(), "no-such-aws-file")
	return map[string]string{
		"AWS_ACCESS_KEY_ID": id, "AWS_SECRET_ACCESS_KEY": secret, "AWS_SESSION_TOKEN": "",
		"AWS_PROFILE": "", "AWS_DEFAULT_PROFILE": "", "AWS_CONFIG_FILE": nowhere, "AWS_SHARED_CREDENTIALS_FILE": nowhere,
		"AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_S3": "",
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_ROLE_ARN": "", "AWS_WEB_IDENTITY_TOKEN_FILE": "",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI": "", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "",
	}
}

// Azurite's well-known development account.
const (
	azuriteAccount = "devstoreaccount1"
	azuriteKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// Azurite starts Azurite's blob service with Bucket created as a
// container.
func Azurite(t testing.TB) *Server {
	t.Helper()
	var extra []string
	if root, err := moduleRoot(); err == nil {
		extra = append(extra, filepath.Join(root, ".cache", "azurite", "node_modules", ".bin", "azurite-blob"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		extra = append(extra, filepath.Join(home, ".cache", "offsetkeeper-azurite", "node_modules", ".bin", "azurite-blob"))
	}
	bin := find("OFFSETKEEPER_TEST_AZURITE", "azurite-blob", extra...)
	if bin == "" {
		missing(t, "azurite", "azurite not installed: npm install azurite@3.37.0 into ~/.cache/offsetkeeper-azurite (or set OFFSETKEEPER_TEST_AZURITE to its node_modules/.bin/azurite-blob)")
	}
	dir := t.TempDir()
	s := newServer(t, "azurite", 0)
	s.start = func() *exec.Cmd {
		return exec.Command(bin, "--blobHost", "127.0.0.1", "--blobPort", fmt.Sprint(s.port), "--location", dir,
			"--loose", "--skipApiVersionCheck", "--disableTelemetry", "--silent")
	}
	s.ready = func() error {
		// Any HTTP answer from Azurite means it listens.
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/%s?comp=list", s.port, azuriteAccount))
		if err != nil {
			return err
		}
		resp.Body.Close()
		if srv := resp.Header.Get("Server"); !strings.Contains(srv, "Azurite") {
			return fmt.Errorf("port %d answers as %q, not Azurite", s.port, srv)
		}
		return nil
	}
	s.run()
	s.Env = map[string]string{"AZURE_STORAGE_ACCOUNT": azuriteAccount, "AZURE_STORAGE_KEY": azuriteKey, "AZURE_STORAGE_SAS_TOKEN": "", "AZURE_STORAGE_CONNECTION_STRING": ""}
	s.WrongEnv = map[string]string{"AZURE_STORAGE_ACCOUNT": azuriteAccount, "AZURE_STORAGE_KEY": "d3Jvbmcta2V5LXdyb25nLWtleS13cm9uZy1rZXktd3Jvbmcta2V5LXdyb25nLWtleQ==", "AZURE_STORAGE_SAS_TOKEN": "", "AZURE_STORAGE_CONNECTION_STRING": ""}
	az := func(c string) string {
		return fmt.Sprintf("azblob://%s?protocol=http&domain=%s&localemu=true", c, s.Proxy.Addr)
	}
	s.URL, s.MissingURL = az(Bucket), az("no-such-container")
	if err := CreateAzureContainer(fmt.Sprintf("http://%s/%s", s.Proxy.Addr, azuriteAccount), azuriteAccount, azuriteKey, Bucket); err != nil {
		t.Fatalf("create container: %v", err)
	}
	return s
}

// FakeGCS starts fake-gcs-server with Bucket created.
func FakeGCS(t testing.TB) *Server {
	t.Helper()
	return fakeGCS(t, 0)
}

// fakeGCS starts fake-gcs-server trying port first (0: a free one).
func fakeGCS(t testing.TB, port int) *Server {
	t.Helper()
	bin := find("OFFSETKEEPER_TEST_FAKE_GCS", "fake-gcs-server")
	if bin == "" {
		missing(t, "fake-gcs-server", "fake-gcs-server not installed: go install github.com/fsouza/fake-gcs-server@v1.56.1 (or set OFFSETKEEPER_TEST_FAKE_GCS)")
	}
	dir := t.TempDir()
	s := newServer(t, "fake-gcs-server", port)
	s.start = func() *exec.Cmd {
		return exec.Command(bin, "-scheme", "http", "-host", "127.0.0.1", "-port", fmt.Sprint(s.port),
			"-backend", "filesystem", "-filesystem-root", dir, "-public-host", s.Proxy.Addr, "-log-level", "error")
	}
	s.ready = func() error {
		return httpOK("GET", fmt.Sprintf("http://127.0.0.1:%d/storage/v1/b", s.port), nil, 200)
	}
	s.run()
	s.Env = map[string]string{"STORAGE_EMULATOR_HOST": s.Proxy.Addr, "STORAGE_EMULATOR_HOST_GRPC": ""}
	s.URL, s.MissingURL = "gs://"+Bucket, "gs://no-such-bucket"
	if err := httpOK("POST", fmt.Sprintf("http://%s/storage/v1/b", s.Proxy.Addr), strings.NewReader(`{"name":"`+Bucket+`"}`), 200); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	return s
}

func moduleRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("no caller")
	}
	return filepath.Abs(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Proxy is a TCP proxy on a free loopback port in front of a server.
type Proxy struct {
	// Addr is where it listens, host:port.
	Addr   string
	target string
	ln     net.Listener

	mu    sync.Mutex
	conns map[net.Conn]bool
	// down refuses connections; dropReplies lets requests through and
	// closes the connection instead of passing the first reply on.
	down, dropReplies bool
	// delay is slept before each chunk sent upstream (a slow network).
	delay time.Duration
	// rate, when set, is the bytes per second sent upstream on each
	// connection (a slow link: see SetRate).
	rate int64
	// Up counts the bytes sent to the server.
	Up atomic.Int64
	// Dropped counts the replies dropped.
	Dropped atomic.Int64
}

// NewProxy starts a proxy to target, closed when the test ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Addr: ln.Addr().String(), target: target, ln: ln, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { ln.Close(); p.Cut() })
	go p.serve()
	return p
}

// setTarget sends new connections to target.
func (p *Proxy) setTarget(target string) {
	p.mu.Lock()
	p.target = target
	p.mu.Unlock()
}

// SetDown refuses (true) or accepts (false) new connections, and cuts
// those open.
func (p *Proxy) SetDown(down bool) {
	p.mu.Lock()
	p.down = down
	p.mu.Unlock()
	if down {
		p.Cut()
	}
}

// DropReplies, while set, lets every request reach the server and drops
// its reply: the client sees the connection closed.
func (p *Proxy) DropReplies(drop bool) {
	p.mu.Lock()
	p.dropReplies = drop
	p.mu.Unlock()
}

// SetDelay slows every chunk sent to the server by d.
func (p *Proxy) SetDelay(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

// SetRate limits what each connection sends to the server to
// bytesPerSecond (0: no limit), in pieces of a tenth of a second, as a slow
// link would: the client's kernel takes a small request whole, and the
// server receives it over seconds.
func (p *Proxy) SetRate(bytesPerSecond int64) {
	p.mu.Lock()
	p.rate = bytesPerSecond
	p.mu.Unlock()
}

// Cut closes every open connection.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

func (p *Proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		p.mu.Unlock()
		if down {
			c.Close()
			continue
		}
		go p.handle(c)
	}
}

func (p *Proxy) track(c net.Conn, on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on {
		p.conns[c] = true
	} else {
		delete(p.conns, c)
	}
}

func (p *Proxy) handle(c net.Conn) {
	defer c.Close()
	p.mu.Lock()
	target := p.target
	p.mu.Unlock()
	u, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer u.Close()
	p.track(c, true)
	p.track(u, true)
	defer p.track(c, false)
	defer p.track(u, false)
	done := make(chan struct{}, 2)
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := c.Read(buf)
			if n > 0 {
				p.mu.Lock()
				d, rate := p.delay, p.rate
				p.mu.Unlock()
				if d > 0 {
					time.Sleep(d)
				}
				if werr := p.send(u, buf[:n], rate); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		done <- struct{}{}
	}()
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := u.Read(buf)
			if n > 0 {
				p.mu.Lock()
				drop := p.dropReplies
				p.mu.Unlock()
				if drop {
					p.Dropped.Add(1)
					c.Close()
					break
				}
				if _, werr := c.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		done <- struct{}{}
	}()
	<-done
}

// send writes b to the server at rate bytes per second (0: at once).
func (p *Proxy) send(u net.Conn, b []byte, rate int64) error {
	for len(b) > 0 {
		n := len(b)
		if rate > 0 {
			n = min(n, int(max(rate/10, 1)))
			time.Sleep(time.Duration(n) * time.Second / time.Duration(rate))
		}
		p.Up.Add(int64(n))
		if _, err := u.Write(b[:n]); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// Endpoint is the server's HTTP endpoint, through the proxy.
func (s *Server) Endpoint() string { return "http://" + s.Proxy.Addr }

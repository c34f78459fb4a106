package connectrest_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim/connectsimtest"
	"github.com/offsetkeeper/offsetkeeper/internal/kafkaconf"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
)

func TestKafkaVersion(t *testing.T) {
	for _, tc := range []struct {
		in           string
		major, minor int
		ok           bool
	}{
		{"3.6.0", 3, 6, true},
		{"3.5.2", 3, 5, true},
		{"4.0.0", 4, 0, true},
		{"3.10.1", 3, 10, true},
		{"3.6.1.redhat-00003", 3, 6, true},
		{"3.7.0-SNAPSHOT", 3, 7, true},
		{"7.5.0-ccs", 3, 5, true}, // Confluent Platform 7.5 ships Kafka 3.5
		{"7.6.1-ce", 3, 6, true},
		{"8.0.0-ccs", 4, 0, true},
		{"6.2.0-ccs", 2, 8, true},
		{"unknown", 0, 0, false},
		{"", 0, 0, false},
		{"3", 0, 0, false},
	} {
		major, minor, ok := connectrest.KafkaVersion(tc.in)
		if major != tc.major || minor != tc.minor || ok != tc.ok {
			t.Errorf("KafkaVersion(%q) = %d.%d %v, want %d.%d %v", tc.in, major, minor, ok, tc.major, tc.minor, tc.ok)
		}
	}
}

func TestStatusString(t *testing.T) {
	for _, tc := range []struct {
		st   connectrest.Status
		want string
	}{
		{connectrest.Status{Connector: connectrest.ConnectorState{State: "STOPPED"}}, "STOPPED"},
		{connectrest.Status{Connector: connectrest.ConnectorState{State: "RUNNING"}, Tasks: []connectrest.TaskState{{State: "RUNNING"}}}, "RUNNING, 1 task"},
		{connectrest.Status{Connector: connectrest.ConnectorState{State: "RUNNING"}, Tasks: []connectrest.TaskState{{State: "RUNNING"}, {State: "FAILED"}, {State: "FAILED"}}}, "RUNNING, 3 tasks (2 FAILED)"},
	} {
		if got := tc.st.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.st, got, tc.want)
		}
	}
}

func TestNewRejects(t *testing.T) {
	for _, tc := range []struct {
		cfg  connectrest.Config
		want string
	}{
		{connectrest.Config{}, "no worker URL"},
		{connectrest.Config{URLs: []string{"connect:8083"}}, "want http://host:port"},
		{connectrest.Config{URLs: []string{"http://admin:hunter2@connect:8083"}}, "holds credentials"},
		{connectrest.Config{URLs: []string{"http://c:8083"}, Username: "u", Token: "t"}, "not both"},
		{connectrest.Config{URLs: []string{"http://c:8083"}, CertFile: "x"}, "needs both"},
	} {
		_, err := connectrest.New(tc.cfg)
		if !errors.Is(err, connectrest.ErrConfig) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

// TestFailoverAndErrors: a dead worker and one that hangs are skipped, the
// one that answered is tried first next time; a proxy's non-JSON error page
// becomes a readable error.
func TestFailoverAndErrors(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close() // connection refused from now on
	release := make(chan struct{})
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer hanging.Close()
	defer close(release)
	var hits atomic.Int32
	good := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/":
			w.Write([]byte(`{"version":"3.5.1","commit":"c","kafka_cluster_id":"k"}`))
		case "/connectors":
			w.Write([]byte(`["x","gone"]`)) // a worker before Kafka 2.3 ignores expand
		case "/connectors/x/status":
			w.Write([]byte(`{"name":"x","connector":{"state":"RUNNING","worker_id":"w:8083"},"tasks":[],"type":"sink"}`))
		case "/connectors/a->b/status":
			w.WriteHeader(502)
			w.Write([]byte("<html>Bad Gateway</html>"))
		default:
			w.WriteHeader(404)
			w.Write([]byte(`{"error_code":404,"message":"Connector x not found"}`))
		}
	}))
	defer good.Close()
	rc, err := connectrest.New(connectrest.Config{URLs: []string{deadURL, hanging.URL, good.URL}, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	si, err := rc.ServerInfo(ctx)
	if err != nil || si.Version != "3.5.1" {
		t.Fatalf("failover: %+v %v", si, err)
	}
	// The good worker is tried first now: no new wait on the hanging one.
	began := time.Now()
	_, err = rc.Status(ctx, "nope")
	if !errors.Is(err, connectrest.ErrNotFound) || !strings.Contains(err.Error(), "Connector x not found") {
		t.Fatalf("404: %v", err)
	}
	if time.Since(began) > 250*time.Millisecond || hits.Load() != 2 {
		t.Errorf("the worker that answered was not tried first (%d hits, %s)", hits.Load(), time.Since(began))
	}
	all, err := rc.Connectors(ctx)
	if err != nil || len(all) != 1 || all["x"].Status.Connector.State != "RUNNING" {
		t.Errorf("names-only listing: %v %v", all, err)
	}
	_, err = rc.Status(ctx, "a->b")
	var apiErr *connectrest.Error
	if !errors.As(err, &apiErr) || apiErr.Status != 502 || apiErr.Message != "<html>Bad Gateway</html>" {
		t.Errorf("non-JSON error: %v", err)
	}
	_, err = rc.RequireOffsetsAPI(ctx)
	if !errors.Is(err, connectrest.ErrUnsupported) || !strings.Contains(err.Error(), "Kafka 3.5") || !strings.Contains(err.Error(), "3.6") {
		t.Errorf("version check of 3.5.1: %v", err)
	}

	none, err := connectrest.New(connectrest.Config{URLs: []string{deadURL}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := none.ServerInfo(ctx); !errors.Is(err, connectrest.ErrUnreachable) || !strings.Contains(err.Error(), deadURL) {
		t.Errorf("no worker: %v", err)
	}
}

// TestAuthAndTLS: basic auth and bearer tokens reach the server; a wrong
// password is a 401 that never shows the password; mutual TLS works with
// the CA and client certificate files.
func TestAuthAndTLS(t *testing.T) {
	_, cl := testkit.Cluster(t)
	ctx := context.Background()
	if err := connectdemo.CreateTopics(ctx, cl, connectdemo.Topics{}); err != nil {
		t.Fatal(err)
	}

	basic, err := connectsimtest.Start(cl, connectsim.Options{Username: "ops", Password: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	defer basic.Close()
	ok, _ := connectrest.New(connectrest.Config{URLs: []string{basic.URL}, Username: "ops", Password: kafkaconf.Secret("s3cret")})
	if _, err := ok.ServerInfo(ctx); err != nil {
		t.Errorf("basic auth: %v", err)
	}
	bad, _ := connectrest.New(connectrest.Config{URLs: []string{basic.URL}, Username: "ops", Password: kafkaconf.Secret("wrong-pass")})
	_, err = bad.ServerInfo(ctx)
	if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "--connect-user") || strings.Contains(err.Error(), "wrong-pass") {
		t.Errorf("wrong password: %v", err)
	}

	bearer, err := connectsimtest.Start(cl, connectsim.Options{Token: "tok-123"})
	if err != nil {
		t.Fatal(err)
	}
	defer bearer.Close()
	tok, _ := connectrest.New(connectrest.Config{URLs: []string{bearer.URL}, Token: kafkaconf.Secret("tok-123")})
	if _, err := tok.Connectors(ctx); err != nil {
		t.Errorf("bearer token: %v", err)
	}

	dir := t.TempDir()
	ca := newCA(t)
	serverCert := ca.issue(t, false, "127.0.0.1")
	clientCert, clientKey := ca.issueFiles(t, dir, "client")
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	tlsSrv, err := connectsimtest.Start(cl, connectsim.Options{TLS: &tls.Config{
		Certificates: []tls.Certificate{serverCert}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert,
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer tlsSrv.Close()
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	mtls, err := connectrest.New(connectrest.Config{URLs: []string{tlsSrv.URL}, CAFile: caFile, CertFile: clientCert, KeyFile: clientKey})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mtls.ServerInfo(ctx); err != nil {
		t.Errorf("mutual TLS: %v", err)
	}
	noCert, _ := connectrest.New(connectrest.Config{URLs: []string{tlsSrv.URL}, CAFile: caFile})
	if _, err := noCert.ServerInfo(ctx); !errors.Is(err, connectrest.ErrUnreachable) {
		t.Errorf("TLS without a client certificate: %v", err)
	}
}

// ca is the test kit's certificate authority, with the shapes this
// package's tests want its certificates in.
type ca struct{ *testkit.CA }

func newCA(t *testing.T) ca { return ca{testkit.NewCA(t, "test CA")} }

func (c ca) pems(t *testing.T, client bool, ips ...string) (certPEM, keyPEM []byte) {
	t.Helper()
	return c.Issue(t, "leaf", client, ips...)
}

func (c ca) issue(t *testing.T, client bool, ips ...string) tls.Certificate {
	t.Helper()
	cp, k := c.pems(t, client, ips...)
	cert, err := tls.X509KeyPair(cp, k)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func (c ca) issueFiles(t *testing.T, dir, name string) (certFile, keyFile string) {
	t.Helper()
	cp, k := c.pems(t, true)
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	if err := os.WriteFile(certFile, cp, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, k, 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

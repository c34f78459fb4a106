package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
)

// selfSigned writes a certificate for 127.0.0.1 and its key into dir.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "offsetkeeper test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// serve --web-config FILE serves every path over TLS behind basic auth,
// as the Prometheus exporters read that file; a bad file is a usage error.
func TestServeWebConfig(t *testing.T) {
	dir := t.TempDir()
	store := "file://" + filepath.Join(dir, "store")
	os.MkdirAll(filepath.Join(dir, "store"), 0o755)
	certFile, keyFile, pool := selfSigned(t, dir)
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "web.yml")
	os.WriteFile(cfg, []byte("tls_server_config:\n  cert_file: "+certFile+"\n  key_file: "+keyFile+
		"\nbasic_auth_users:\n  ops: "+string(hash)+"\n"), 0o600)

	bad := filepath.Join(dir, "bad.yml")
	os.WriteFile(bad, []byte("tls_server_config:\n  cert_file: /nonexistent.pem\n  key_file: /nonexistent.pem\n"), 0o600)
	var so, se testkit.SyncBuffer
	if code := run(context.Background(), []string{"serve", "--store", store, "--web-config", bad}, &so, &se); code != exitUsage || !strings.Contains(se.String(), "--web-config") {
		t.Errorf("serve with a bad web config: exit %d, %s", code, se.String())
	}

	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	exit := make(chan int, 1)
	var stderr testkit.SyncBuffer
	go func() {
		exit <- run(ctx, []string{"serve", "--store", store, "--listen", addr, "--web-config", cfg}, &testkit.SyncBuffer{}, &stderr)
	}()
	t.Cleanup(func() { cancel(); <-exit })
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 5 * time.Second}
	get := func(path, user, pass string) int {
		req, _ := http.NewRequest("GET", "https://"+addr+path, nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		for range 100 {
			resp, err := client.Do(req)
			if err == nil {
				resp.Body.Close()
				return resp.StatusCode
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("GET %s never answered: %s", path, stderr.String())
		return 0
	}
	for _, p := range []string{"/", "/api/connectors", "/healthz"} {
		if code := get(p, "", ""); code != http.StatusUnauthorized {
			t.Errorf("GET %s without credentials: %d, want 401", p, code)
		}
		if code := get(p, "ops", "wrong"); code != http.StatusUnauthorized {
			t.Errorf("GET %s with a wrong password: %d, want 401", p, code)
		}
		if code := get(p, "ops", "s3cret"); code != http.StatusOK {
			t.Errorf("GET %s with credentials: %d, want 200", p, code)
		}
	}
	if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("plain HTTP answered 200 on a TLS listener")
		}
	}
}

package kafkaconf

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
)

// testCA is the test kit's certificate authority.
type testCA = testkit.CA

func newTestCA(t *testing.T, name string) *testCA { return testkit.NewCA(t, name) }

// serverTLS returns the broker side TLS configuration: a certificate from ca
// for names, and, if clientCA is not nil, client certificates required and
// verified against it.
func serverTLS(t *testing.T, ca *testCA, clientCA *testCA, names ...string) *tls.Config {
	t.Helper()
	certPEM, keyPEM := ca.Issue(t, "broker", false, names...)
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	tc := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if clientCA != nil {
		pool := x509.NewCertPool()
		pool.AddCert(clientCA.Cert)
		tc.ClientCAs = pool
		tc.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return tc
}

// writeFile writes b to name in dir with mode 0600 and returns its path.
func writeFile(t *testing.T, dir, name string, b ...[]byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	var all []byte
	for _, x := range b {
		all = append(all, x...)
	}
	if err := os.WriteFile(p, all, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

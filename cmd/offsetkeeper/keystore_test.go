package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"software.sslmate.com/src/go-pkcs12"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// keytoolFixture is a JKS or PKCS12 file made by keytool
// (internal/kafkaconf/testdata/keystores/make.sh).
func keytoolFixture(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "internal", "kafkaconf", "testdata", "keystores", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSnapshotJKSTruststore: a worker .properties whose truststore is a JKS
// file made by keytool, as most Connect workers ship, snapshots over TLS
// with nothing converted; a wrong truststore password is one clear line.
func TestSnapshotJKSTruststore(t *testing.T) {
	b, err := os.ReadFile(keytoolFixture(t, "broker.p12"))
	if err != nil {
		t.Fatal(err)
	}
	key, leaf, _, err := pkcs12.DecodeChain(b, "broker-pass")
	if err != nil {
		t.Fatal(err)
	}
	cab, err := os.ReadFile(keytoolFixture(t, "ca.p12"))
	if err != nil {
		t.Fatal(err)
	}
	_, ca, err := pkcs12.Decode(cab, "ca-pass")
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	c := secureCluster(t,
		&tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{leaf.Raw}, PrivateKey: key}}, MinVersion: tls.VersionTLS12},
		&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})

	worker := func(trustPass string) string {
		return writeTestFile(t, t.TempDir(), "connect-distributed.properties", fmt.Appendf(nil, `bootstrap.servers=%s
security.protocol=SASL_SSL
sasl.mechanism=%s
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="%s" password="%s";
ssl.truststore.location=%s
ssl.truststore.password=%s
`, c.brokers, scramMechanism, backupUser, backupPassword, keytoolFixture(t, "truststore.jks"), trustPass))
	}
	code, out, errs := runCLI(t, "snapshot", "--worker-config", worker("trust-pass"), "--store", c.store, "--kafka-timeout", "10s")
	if code != exitOK {
		t.Fatalf("snapshot with a JKS truststore: exit %d\n%s\n%s", code, out, errs)
	}
	if _, err := snapshot.ParseID(lastLine(out)); err != nil {
		t.Fatalf("snapshot printed %q: %v", out, err)
	}

	code, out, errs = runCLI(t, "snapshot", "--worker-config", worker("Wrong-Trust-Pass"), "--store", c.store, "--kafka-timeout", "10s")
	if code != exitError {
		t.Fatalf("wrong truststore password: exit %d, want 1\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"truststore.jks", "ssl.truststore.password"} {
		if !strings.Contains(errs, want) {
			t.Errorf("error does not say %q:\n%s", want, errs)
		}
	}
	noSecrets(t, "wrong truststore password", []string{out, errs}, "Wrong-Trust-Pass", backupPassword)
	if n := strings.Count(strings.TrimSpace(errs), "\n"); n > 1 {
		t.Errorf("error takes %d lines:\n%s", n+1, errs)
	}
}

package kafkaconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"software.sslmate.com/src/go-pkcs12"

	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
)

// The fixtures of testdata/keystores, made by its make.sh with keytool.
const keystores = "testdata/keystores"

func fixture(name string) string { return filepath.Join(keystores, name) }

// keytoolBroker returns the broker TLS config of the keytool fixtures: the
// broker.p12 certificate, client certificates required and checked against
// the CA in ca.p12.
func keytoolBroker(t *testing.T) *tls.Config {
	t.Helper()
	b, err := os.ReadFile(fixture("broker.p12"))
	if err != nil {
		t.Fatal(err)
	}
	key, leaf, chain, err := pkcs12.DecodeChain(b, "broker-pass")
	if err != nil {
		t.Fatal(err)
	}
	cab, err := os.ReadFile(fixture("ca.p12"))
	if err != nil {
		t.Fatal(err)
	}
	_, ca, err := pkcs12.Decode(cab, "ca-pass")
	if err != nil {
		t.Fatal(err)
	}
	cert := tls.Certificate{Certificate: [][]byte{leaf.Raw}, PrivateKey: key}
	for _, c := range chain {
		cert.Certificate = append(cert.Certificate, c.Raw)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: pool,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
}

func workerTLS(t *testing.T, brokers []string, lines ...string) Config {
	t.Helper()
	props, err := ParseProperties(strings.NewReader(fmt.Sprintf("bootstrap.servers=%s\nsecurity.protocol=SSL\n%s\n",
		strings.Join(brokers, ","), strings.Join(lines, "\n"))))
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := FromWorkerProperties(props)
	if err != nil {
		t.Fatalf("FromWorkerProperties: %v", err)
	}
	return c
}

// TestConnectJavaKeystores: the JKS and PKCS12 stores keytool makes, with
// their passwords, work as a worker's ssl.* properties name them, over
// mutual TLS; a wrong password or type names the file and the property.
func TestConnectJavaKeystores(t *testing.T) {
	cluster := testkit.Kfake(t, kfake.NumBrokers(1), kfake.TLS(keytoolBroker(t)))
	brokers := cluster.ListenAddrs()
	jksTrust := []string{"ssl.truststore.location=" + fixture("truststore.jks"), "ssl.truststore.password=trust-pass"}
	jksKey := []string{"ssl.keystore.location=" + fixture("keystore.jks"), "ssl.keystore.password=store-pass", "ssl.key.password=key-pass"}
	join := func(a ...[]string) (out []string) {
		for _, x := range a {
			out = append(out, x...)
		}
		return out
	}

	t.Run("JKS by default", func(t *testing.T) {
		mustConnect(t, workerTLS(t, brokers, join(jksTrust, jksKey)...))
	})
	t.Run("PKCS12", func(t *testing.T) {
		mustConnect(t, workerTLS(t, brokers,
			"ssl.truststore.type=PKCS12", "ssl.truststore.location="+fixture("truststore.p12"), "ssl.truststore.password=trust-pass",
			"ssl.keystore.type=pkcs12", "ssl.keystore.location="+fixture("keystore.p12"), "ssl.keystore.password=store-pass"))
	})
	t.Run("a PKCS12 file under the default type, as Java reads it", func(t *testing.T) {
		mustConnect(t, workerTLS(t, brokers,
			"ssl.truststore.location="+fixture("truststore.p12"), "ssl.truststore.password=trust-pass",
			"ssl.keystore.location="+fixture("keystore.p12"), "ssl.keystore.password=store-pass"))
	})
	t.Run("no client certificate", func(t *testing.T) {
		connectErr(t, workerTLS(t, brokers, jksTrust...), ErrTLS, nil)
	})

	for _, tt := range []struct {
		name  string
		lines []string
		want  []string
	}{
		{"wrong truststore password", join([]string{"ssl.truststore.location=" + fixture("truststore.jks"), "ssl.truststore.password=nope-Wr0ng"}, jksKey),
			[]string{"truststore.jks", "ssl.truststore.password", "wrong password"}},
		{"wrong PKCS12 truststore password", join([]string{"ssl.truststore.location=" + fixture("truststore.p12"), "ssl.truststore.password=nope-Wr0ng"}, jksKey),
			[]string{"truststore.p12", "ssl.truststore.password"}},
		{"wrong key password", join(jksTrust, []string{"ssl.keystore.location=" + fixture("keystore.jks"), "ssl.keystore.password=store-pass", "ssl.key.password=nope-Wr0ng"}),
			[]string{"keystore.jks", "ssl.key.password"}},
		{"key password missing", join(jksTrust, []string{"ssl.keystore.location=" + fixture("keystore.jks"), "ssl.keystore.password=store-pass"}),
			[]string{"keystore.jks", "ssl.key.password"}},
		{"wrong keystore password", join(jksTrust, []string{"ssl.keystore.location=" + fixture("keystore.p12"), "ssl.keystore.password=nope-Wr0ng"}),
			[]string{"keystore.p12", "ssl.keystore.password"}},
		{"no password", []string{"ssl.truststore.location=" + fixture("truststore.jks")},
			[]string{"truststore.jks", "ssl.truststore.password is not set"}},
		{"a PEM file called JKS", []string{"ssl.truststore.type=JKS", "ssl.truststore.location=" + fixture("make.sh"), "ssl.truststore.password=x"},
			[]string{"make.sh", "ssl.truststore.type", "neither"}},
		{"missing file", []string{"ssl.truststore.location=" + fixture("nonexistent.jks"), "ssl.truststore.password=x"},
			[]string{"nonexistent.jks", "ssl.truststore.location"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := workerTLS(t, brokers, tt.lines...).Opts()
			if err == nil {
				t.Fatal("Opts succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "nope-Wr0ng") {
				t.Errorf("error %q shows the password", err)
			}
		})
	}
	t.Run("unknown type", func(t *testing.T) {
		_, _, err := FromWorkerProperties(map[string]string{"security.protocol": "SSL",
			"ssl.truststore.type": "BCFKS", "ssl.truststore.location": "/ts.bcfks"})
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "ssl.truststore.type") || !strings.Contains(err.Error(), "/ts.bcfks") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("secrets do not print", func(t *testing.T) {
		c := workerTLS(t, brokers, join(jksTrust, jksKey)...)
		for _, s := range []string{c.String(), fmt.Sprintf("%#v", c), fmt.Sprintf("%+v", c.TLS)} {
			if strings.Contains(s, "trust-pass") || strings.Contains(s, "key-pass") || strings.Contains(s, "store-pass") {
				t.Errorf("a password shows: %s", s)
			}
		}
	})
}

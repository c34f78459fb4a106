package kafkaconf

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestOptsErrors(t *testing.T) {
	const secret = "Pa55-w0rd-Secret"
	dir := t.TempDir()
	ca := newTestCA(t, "ca")
	certPEM, keyPEM := ca.Issue(t, "client", true)
	certFile := writeFile(t, dir, "cert.pem", certPEM)
	jks := writeFile(t, dir, "truststore.jks", []byte{0xfe, 0xed, 0xfe, 0xed, 0, 0, 0, 2})
	blk, _ := pem.Decode(keyPEM)
	encKey := writeFile(t, dir, "enc.pem", pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: blk.Bytes}))
	emptyFile := writeFile(t, dir, "empty", []byte("\n"))
	brokers := []string{"kafka:9092"}

	tests := []struct {
		name string
		c    Config
		kind error
		want []string
	}{
		{"no brokers", Config{}, ErrNoBrokers, []string{"--brokers", "OFFSETKEEPER_BROKERS"}},
		{"broker without port", Config{Brokers: []string{"kafka"}}, ErrInvalidConfig, []string{`"kafka"`, "--brokers"}},
		{"broker with bad port", Config{Brokers: []string{"kafka:x"}}, ErrInvalidConfig, []string{`"kafka:x"`}},
		{"negative timeout", Config{Brokers: brokers, DialTimeout: -time.Second}, ErrInvalidConfig, []string{"dial timeout"}},
		{"tiny request timeout", Config{Brokers: brokers, RequestTimeout: time.Millisecond}, ErrInvalidConfig, []string{"100ms"}},
		{"cert without key", Config{Brokers: brokers, TLS: TLS{CertFile: certFile}}, ErrInvalidConfig, []string{"--tls-key"}},
		{"credentials without mechanism", Config{Brokers: brokers, SASL: SASL{Username: "u", Password: secret}}, ErrInvalidConfig, []string{"--sasl-mechanism"}},
		{"no username", Config{Brokers: brokers, SASL: SASL{Mechanism: "PLAIN", Password: secret}}, ErrInvalidConfig, []string{"--sasl-username"}},
		{"no password", Config{Brokers: brokers, SASL: SASL{Mechanism: "SCRAM-SHA-256", Username: "u"}}, ErrInvalidConfig, []string{"--sasl-password", "--sasl-password-file"}},
		{"both passwords", Config{Brokers: brokers, SASL: SASL{Mechanism: "PLAIN", Username: "u", Password: secret, PasswordFile: "/x"}}, ErrInvalidConfig, []string{"only one"}},
		{"missing password file", Config{Brokers: brokers, SASL: SASL{Mechanism: "PLAIN", Username: "u", PasswordFile: dir + "/nope"}}, os.ErrNotExist, []string{"--sasl-password-file", "nope"}},
		{"empty password file", Config{Brokers: brokers, SASL: SASL{Mechanism: "PLAIN", Username: "u", PasswordFile: emptyFile}}, ErrInvalidConfig, []string{"empty"}},
		{"no token", Config{Brokers: brokers, SASL: SASL{Mechanism: "OAUTHBEARER"}}, ErrInvalidConfig, []string{"--sasl-oauth-token"}},
		{"GSSAPI", Config{Brokers: brokers, SASL: SASL{Mechanism: "GSSAPI"}}, ErrInvalidConfig, []string{"Kerberos"}},
		{"unknown mechanism", Config{Brokers: brokers, SASL: SASL{Mechanism: "SCRAM"}}, ErrInvalidConfig, []string{`"SCRAM"`, "PLAIN"}},
		{"missing CA", Config{Brokers: brokers, TLS: TLS{CAFile: dir + "/nope.pem"}}, os.ErrNotExist, []string{"--tls-ca"}},
		{"JKS CA", Config{Brokers: brokers, TLS: TLS{CAFile: jks}}, ErrNotPEM, []string{jks, "keytool", "openssl pkcs12"}},
		{"JKS keystore", Config{Brokers: brokers, TLS: TLS{CertFile: jks, KeyFile: jks}}, ErrNotPEM, []string{jks, "-nodes"}},
		{"encrypted key", Config{Brokers: brokers, TLS: TLS{CertFile: certFile, KeyFile: encKey}}, ErrEncryptedKey, []string{encKey, "openssl pkey"}},
		{"key does not match", Config{Brokers: brokers, TLS: TLS{CertFile: certFile, KeyFile: certFile}}, nil, []string{"load client certificate"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.c.Opts()
			if err == nil || (tt.kind != nil && !errors.Is(err, tt.kind)) {
				t.Fatalf("Opts() = %v, want %v", err, tt.kind)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error %q shows the secret", err)
			}
		})
	}
}

func TestOptsAWSAndOAuth(t *testing.T) {
	t.Setenv(EnvAWSAccessKeyID, "")
	t.Setenv(EnvAWSSecretAccessKey, "")
	c := Config{Brokers: []string{"b-1.msk:9098"}, TLS: TLS{Enabled: true}, SASL: SASL{Mechanism: "aws_msk_iam"}}
	if _, err := c.Opts(); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), EnvAWSAccessKeyID) {
		t.Errorf("without AWS env: %v", err)
	}
	t.Setenv(EnvAWSAccessKeyID, "AKIAEXAMPLE")
	t.Setenv(EnvAWSSecretAccessKey, "aws-secret")
	if _, err := c.Opts(); err != nil {
		t.Errorf("with AWS env: %v", err)
	}
	tok := writeFile(t, t.TempDir(), "token", []byte("eyJ.token\n"))
	for _, s := range []SASL{{Mechanism: "OAUTHBEARER", TokenFile: tok}, {Mechanism: "OAUTHBEARER", Token: "eyJ.token"}} {
		if _, err := (Config{Brokers: []string{"k:9092"}, SASL: s}).Opts(); err != nil {
			t.Errorf("OAUTHBEARER %v: %v", s, err)
		}
	}
}

func TestRedacted(t *testing.T) {
	secrets := []string{"sasl-Secret-1", "oauth-Secret-2", "-----BEGIN PRIVATE KEY-----\nkey-Secret-3"}
	c := Config{
		Brokers: []string{"k1:9093", "k2:9093"},
		TLS:     TLS{CAFile: "/ca.pem", CertPEM: "cert", KeyPEM: Secret(secrets[2]), ServerName: "kafka"},
		SASL:    SASL{Mechanism: "scram-sha-512", Username: "connect", Password: Secret(secrets[0]), Token: Secret(secrets[1])},
	}
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("start", "kafka", c, "sasl", c.SASL, "tls", c.TLS, "password", c.SASL.Password)
	js, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	outputs := map[string]string{
		"Redacted": c.Redacted(),
		"%v":       fmt.Sprintf("%v", c),
		"%+v":      fmt.Sprintf("%+v", c),
		"%#v":      fmt.Sprintf("%#v", c),
		"%s":       fmt.Sprintf("%s", c),
		"%v SASL":  fmt.Sprintf("%v", c.SASL),
		"%+v SASL": fmt.Sprintf("%+v", c.SASL),
		"%#v SASL": fmt.Sprintf("%#v", c.SASL),
		"%+v TLS":  fmt.Sprintf("%+v", c.TLS),
		"%x":       fmt.Sprintf("%x", c.SASL.Password),
		"%q":       fmt.Sprintf("%q", c.SASL.Password),
		"slog":     logs.String(),
		"json":     string(js),
	}
	for name, out := range outputs {
		for _, s := range secrets {
			if strings.Contains(out, s) || strings.Contains(out, "Secret-") {
				t.Errorf("%s shows a secret: %s", name, out)
			}
		}
	}
	for _, w := range []string{"brokers=k1:9093,k2:9093", "tls=on", "tls_ca=/ca.pem", "tls_key_pem=[redacted]", "sasl=SCRAM-SHA-512",
		"sasl_username=connect", "sasl_password=[redacted]", "sasl_oauth_token=[redacted]", "retry_timeout=30s"} {
		if !strings.Contains(c.Redacted(), w) {
			t.Errorf("Redacted() = %q, missing %q", c.Redacted(), w)
		}
	}
	if got := (Config{Brokers: []string{"k:9092"}}).String(); got != "brokers=k:9092 client_id=offsetkeeper tls=off sasl=none dial_timeout=10s request_timeout=10s retry_timeout=30s request_retries=5" {
		t.Errorf("String() = %q", got)
	}
	if Secret("").String() != "" {
		t.Error("empty Secret prints")
	}
}

func TestMerge(t *testing.T) {
	file := Config{
		Brokers: []string{"file:9092"},
		TLS:     TLS{Enabled: true, CAPEM: "inline", CertFile: "/c", KeyFile: "/k", SkipHostnameVerification: true},
		SASL:    SASL{Mechanism: "SCRAM-SHA-512", Username: "connect", Password: "from-file"},
	}
	tests := []struct {
		name       string
		base, over Config
		want       Config
	}{
		{"empty over keeps all", file, Config{}, file},
		{"flags win", file, Config{
			Brokers: []string{"flag:9093"}, ClientID: "ok", DialTimeout: time.Second,
			TLS:  TLS{CAFile: "/flag-ca.pem", CertPEM: "c", KeyPEM: "k", ServerName: "kafka"},
			SASL: SASL{Username: "other", PasswordFile: "/run/secrets/pw"},
		}, Config{
			Brokers: []string{"flag:9093"}, ClientID: "ok", DialTimeout: time.Second,
			TLS:  TLS{Enabled: true, CAFile: "/flag-ca.pem", CertPEM: "c", KeyPEM: "k", ServerName: "kafka", SkipHostnameVerification: true},
			SASL: SASL{Mechanism: "SCRAM-SHA-512", Username: "other", PasswordFile: "/run/secrets/pw"},
		}},
		{"booleans only turn on", Config{}, Config{TLS: TLS{Enabled: true, InsecureSkipVerify: true}, SASL: SASL{Token: "t"}},
			Config{TLS: TLS{Enabled: true, InsecureSkipVerify: true}, SASL: SASL{Token: "t"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.base.Merge(tt.over); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Merge\n got %+v %+v %+v\nwant %+v %+v %+v", got, got.TLS, got.SASL, tt.want, tt.want.TLS, tt.want.SASL)
			}
		})
	}
}

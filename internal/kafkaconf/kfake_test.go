package kafkaconf

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
)

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// mustConnect connects and checks that the client can list topics.
func mustConnect(t *testing.T, c Config) {
	t.Helper()
	ctx := testContext(t)
	cl, err := c.Connect(ctx)
	if err != nil {
		t.Fatalf("Connect(%s): %v", c, err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).ListTopics(ctx); err != nil {
		t.Fatalf("list topics: %v", err)
	}
}

// connectErr connects, expecting an error that matches kind, contains each
// of want and none of secrets.
func connectErr(t *testing.T, c Config, kind error, want []string, secrets ...string) {
	t.Helper()
	cl, err := c.Connect(testContext(t))
	if err == nil {
		cl.Close()
		t.Fatalf("Connect(%s) succeeded", c)
	}
	if !errors.Is(err, kind) {
		t.Errorf("error %q does not match %v", err, kind)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
	for _, s := range secrets {
		if strings.Contains(err.Error(), s) {
			t.Errorf("error %q contains the secret %q", err, s)
		}
	}
}

func TestConnectSASL(t *testing.T) {
	const pass = "s3cret-Pa55"
	cluster := testkit.Kfake(t, kfake.NumBrokers(1), kfake.EnableSASL(),
		kfake.Superuser(MechanismPlain, "plain-user", pass),
		kfake.Superuser(MechanismScramSHA256, "scram256-user", pass),
		kfake.Superuser(MechanismScramSHA512, "scram512-user", pass),
	)
	brokers := cluster.ListenAddrs()
	passFile := writeFile(t, t.TempDir(), "password", []byte(pass+"\n"))
	for _, tt := range []struct{ mech, user string }{
		{MechanismPlain, "plain-user"},
		{MechanismScramSHA256, "scram256-user"},
		{"scram-sha-512", "scram512-user"}, // case-insensitive
	} {
		t.Run(tt.mech, func(t *testing.T) {
			mustConnect(t, Config{Brokers: brokers, SASL: SASL{Mechanism: tt.mech, Username: tt.user, Password: pass}})
			mustConnect(t, Config{Brokers: brokers, SASL: SASL{Mechanism: tt.mech, Username: tt.user, PasswordFile: passFile}})

			const wrong = "wrong-Hunter2-pass"
			connectErr(t, Config{Brokers: brokers, SASL: SASL{Mechanism: tt.mech, Username: tt.user, Password: wrong}},
				ErrSASL, []string{"--sasl-password", "--sasl-username", brokers[0], tt.user}, wrong, pass)
		})
	}
	t.Run("no SASL against a SASL listener", func(t *testing.T) {
		connectErr(t, Config{Brokers: brokers}, ErrProtocolMismatch, []string{"--sasl-mechanism"})
	})
}

func TestConnectTLS(t *testing.T) {
	ca, clientCA, other := newTestCA(t, "kafka-ca"), newTestCA(t, "client-ca"), newTestCA(t, "other-ca")
	dir := t.TempDir()
	caFile := writeFile(t, dir, "ca.pem", ca.PEM)
	otherFile := writeFile(t, dir, "other.pem", other.PEM)
	certPEM, keyPEM := clientCA.Issue(t, "offsetkeeper", true)
	certFile := writeFile(t, dir, "client.pem", certPEM)
	keyFile := writeFile(t, dir, "client.key", keyPEM)
	keystore := writeFile(t, dir, "keystore.pem", certPEM, keyPEM) // Kafka's PEM keystore: chain + key
	const pass = "tls-and-sasl-secret"

	mtls := testkit.Kfake(t, kfake.NumBrokers(1), kfake.TLS(serverTLS(t, ca, clientCA, "127.0.0.1", "localhost")),
		kfake.EnableSASL(), kfake.Superuser(MechanismScramSHA512, "connect", pass))
	brokers := mtls.ListenAddrs()
	scram := SASL{Mechanism: MechanismScramSHA512, Username: "connect", Password: pass}

	t.Run("mutual TLS and SCRAM", func(t *testing.T) {
		mustConnect(t, Config{Brokers: brokers, SASL: scram, TLS: TLS{CAFile: caFile, CertFile: certFile, KeyFile: keyFile}})
	})
	t.Run("worker properties with PEM stores", func(t *testing.T) {
		props, err := ParseProperties(strings.NewReader(fmt.Sprintf(`
bootstrap.servers=%s
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="connect" password="%s";
ssl.truststore.type=PEM
ssl.truststore.location=%s
ssl.keystore.type=PEM
ssl.keystore.location=%s
`, strings.Join(brokers, ","), pass, caFile, keystore)))
		if err != nil {
			t.Fatal(err)
		}
		c, _, err := FromWorkerProperties(props)
		if err != nil {
			t.Fatal(err)
		}
		mustConnect(t, c)
	})
	t.Run("worker properties with inline PEM", func(t *testing.T) {
		c, _, err := FromWorkerProperties(map[string]string{
			"bootstrap.servers":              strings.Join(brokers, ","),
			"security.protocol":              "SASL_SSL",
			"sasl.mechanism":                 "SCRAM-SHA-512",
			"sasl.jaas.config":               `org.apache.kafka.common.security.scram.ScramLoginModule required username="connect" password="` + pass + `";`,
			"ssl.truststore.type":            "PEM",
			"ssl.truststore.certificates":    string(ca.PEM),
			"ssl.keystore.type":              "PEM",
			"ssl.keystore.certificate.chain": string(certPEM),
			"ssl.keystore.key":               string(keyPEM),
		})
		if err != nil {
			t.Fatal(err)
		}
		mustConnect(t, c)
		if strings.Contains(c.String(), "PRIVATE KEY") || strings.Contains(c.String(), pass) {
			t.Errorf("String() shows a secret: %s", c)
		}
	})
	t.Run("untrusted CA", func(t *testing.T) {
		connectErr(t, Config{Brokers: brokers, SASL: scram, TLS: TLS{CAFile: otherFile, CertFile: certFile, KeyFile: keyFile}},
			ErrTLS, []string{"unknown authority", "--tls-ca", brokers[0]}, pass)
	})
	t.Run("no client certificate", func(t *testing.T) {
		connectErr(t, Config{Brokers: brokers, SASL: scram, TLS: TLS{CAFile: caFile}},
			ErrTLS, []string{"--tls-cert"}, pass)
	})
	t.Run("plaintext against a TLS listener", func(t *testing.T) {
		connectErr(t, Config{Brokers: brokers, SASL: scram}, ErrProtocolMismatch, []string{"--tls"}, pass)
	})

	// A broker whose certificate names only kafka.test, dialed as 127.0.0.1.
	named := testkit.Kfake(t, kfake.NumBrokers(1), kfake.TLS(serverTLS(t, ca, nil, "kafka.test")))
	nbrokers := named.ListenAddrs()
	t.Run("certificate for another host", func(t *testing.T) {
		connectErr(t, Config{Brokers: nbrokers, TLS: TLS{CAFile: caFile}}, ErrTLS, []string{"--tls-server-name"})
	})
	t.Run("server name", func(t *testing.T) {
		mustConnect(t, Config{Brokers: nbrokers, TLS: TLS{CAFile: caFile, ServerName: "kafka.test"}})
	})
	t.Run("hostname verification off still checks the CA", func(t *testing.T) {
		mustConnect(t, Config{Brokers: nbrokers, TLS: TLS{CAFile: caFile, SkipHostnameVerification: true}})
		connectErr(t, Config{Brokers: nbrokers, TLS: TLS{CAFile: otherFile, SkipHostnameVerification: true}},
			ErrTLS, []string{"unknown authority", "--tls-ca"})
	})
	t.Run("insecure skip verify", func(t *testing.T) {
		mustConnect(t, Config{Brokers: nbrokers, TLS: TLS{InsecureSkipVerify: true}})
	})
}

func TestACLDenied(t *testing.T) {
	const pass = "acl-user-secret"
	allow := func(rt kmsg.ACLResourceType, name string, op kmsg.ACLOperation) kfake.ACL {
		return kfake.ACL{Resource: rt, Name: name, Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: op, Allow: true}
	}
	cluster := testkit.Kfake(t, kfake.NumBrokers(1), kfake.EnableSASL(), kfake.EnableACLs(),
		kfake.Superuser(MechanismScramSHA256, "admin", "admin"),
		kfake.User(MechanismScramSHA256, "snapshot", pass,
			allow(kmsg.ACLResourceTypeTopic, "connect-configs", kmsg.ACLOperationDescribe),
			allow(kmsg.ACLResourceTypeTopic, "connect-configs", kmsg.ACLOperationRead),
		),
		kfake.SeedTopics(1, "connect-offsets", "connect-configs"),
	)
	ctx := testContext(t)
	cl, err := Config{Brokers: cluster.ListenAddrs(), SASL: SASL{Mechanism: MechanismScramSHA256, Username: "snapshot", Password: pass}}.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)

	if _, err := adm.ListEndOffsets(ctx, "connect-configs"); err != nil {
		t.Fatalf("allowed topic: %v", err)
	}

	// As the snapshot code does: name the resource, then describe.
	_, err = adm.ListEndOffsets(ctx, "connect-offsets")
	err = DescribeError(fmt.Errorf("list end offsets of topic %s: %w", "connect-offsets", err))
	var aclErr *ACLError
	if !errors.As(err, &aclErr) || aclErr.ResourceType != "TOPIC" {
		t.Fatalf("got %v, want an ACLError on TOPIC", err)
	}
	for _, w := range []string{"connect-offsets", "TOPIC", "DESCRIBE", "READ", "ALLOW ACL"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
	if !errors.Is(err, ErrNotAuthorized) {
		t.Errorf("error %q does not match ErrNotAuthorized", err)
	}

	resp, err := adm.FetchOffsets(ctx, "connect-sink-s3")
	if err == nil {
		err = resp.Error()
	}
	err = DescribeError(fmt.Errorf("fetch offsets of group %q: %w", "connect-sink-s3", err))
	if !errors.As(err, &aclErr) || aclErr.ResourceType != "GROUP" || !strings.Contains(err.Error(), "connect-sink-s3") {
		t.Fatalf("got %v, want an ACLError on GROUP naming the group", err)
	}
}

func TestConnectUnreachable(t *testing.T) {
	t.Run("closed port", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		start := time.Now()
		connectErr(t, Config{Brokers: []string{addr}, DialTimeout: time.Second, RetryTimeout: 3 * time.Second},
			ErrUnreachable, []string{addr, "--brokers"})
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("took %v", d)
		}
	})
	t.Run("silent listener", func(t *testing.T) {
		addr := silentListener(t)
		start := time.Now()
		connectErr(t, Config{Brokers: []string{addr}, DialTimeout: time.Second, RequestTimeout: 500 * time.Millisecond, RetryTimeout: 2 * time.Second},
			ErrUnreachable, []string{addr, "--brokers"})
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("took %v", d)
		}
	})
	t.Run("TLS to a silent listener", func(t *testing.T) {
		addr := silentListener(t)
		connectErr(t, Config{Brokers: []string{addr}, TLS: TLS{Enabled: true}, DialTimeout: 500 * time.Millisecond, RetryTimeout: 2 * time.Second},
			ErrUnreachable, []string{addr, "--brokers", "--tls"})
	})
	t.Run("client from Opts", func(t *testing.T) {
		// The commands may build their own client: a request still fails
		// within the bound, and DescribeError names the broker.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		opts, err := Config{Brokers: []string{addr}, DialTimeout: time.Second, RetryTimeout: 3 * time.Second}.Opts()
		if err != nil {
			t.Fatal(err)
		}
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		start := time.Now()
		_, err = kadm.NewClient(cl).ListTopics(testContext(t))
		if d := time.Since(start); d > 6*time.Second {
			t.Errorf("took %v", d)
		}
		err = DescribeError(err)
		if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "--brokers") {
			t.Errorf("got %v", err)
		}
	})
}

// silentListener accepts connections and never answers.
func silentListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var conns []net.Conn
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				for _, c := range conns {
					c.Close()
				}
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String()
}

package main

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// The SCRAM users of the secured clusters. The passwords are distinctive so
// that a leak into any output is found by a plain substring search.
const (
	scramMechanism = "SCRAM-SHA-256"
	adminUser      = "admin"
	adminPassword  = "Adm1n-Scram-Secret-7f3e"
	backupUser     = "offsetkeeper"
	backupPassword = "Bkp-Scram-Secret-9c2d41"
	noACLUser      = "no-acls"
	noACLPassword  = "NoAcl-Scram-Secret-5a8b"
	wrongPassword  = "Wrong-Scram-Secret-3e6f"
)

// secureCluster starts a 3-broker kfake cluster with SASL/SCRAM-SHA-256,
// and with TLS when serverTLS is set, and seeds it as Connect would, as the
// superuser. backupUser is a superuser too (ACLs are off unless opts turn
// them on); noACLUser is an ordinary user without any ACL.
func secureCluster(t *testing.T, serverTLS, clientTLS *tls.Config, opts ...kfake.Opt) *cluster {
	t.Helper()
	all := []kfake.Opt{
		kfake.EnableSASL(),
		kfake.Superuser(scramMechanism, adminUser, adminPassword),
		kfake.Superuser(scramMechanism, backupUser, backupPassword),
		kfake.User(scramMechanism, noACLUser, noACLPassword),
	}
	if serverTLS != nil {
		all = append(all, kfake.TLS(serverTLS))
	}
	kc, err := connectdemo.NewCluster(append(all, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	copts := []kgo.Opt{
		kgo.SeedBrokers(kc.ListenAddrs()...),
		kgo.SASL(scram.Auth{User: adminUser, Pass: adminPassword}.AsSha256Mechanism()),
	}
	if clientTLS != nil {
		// A TLS dialer, not kgo.DialTLSConfig: connectdemo copies the
		// client's Dialer into its producers, and kgo refuses a client
		// with both.
		copts = append(copts, kgo.Dialer((&tls.Dialer{Config: clientTLS}).DialContext))
	}
	cl, err := kgo.NewClient(copts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	exp, err := connectdemo.Seed(t.Context(), cl, connectdemo.DefaultSpec())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(exp.Stop)
	return &cluster{t: t, kc: kc, cl: cl, adm: kadm.NewClient(cl), exp: exp,
		brokers: strings.Join(kc.ListenAddrs(), ","), store: filepath.Join(t.TempDir(), "store")}
}

// scramEnv sets the SASL settings in the environment, as a Kubernetes
// Secret would; they are restored when the test ends.
func scramEnv(t *testing.T, user, password string) {
	t.Setenv("OFFSETKEEPER_SASL_MECHANISM", scramMechanism)
	t.Setenv("OFFSETKEEPER_SASL_USERNAME", user)
	t.Setenv("OFFSETKEEPER_SASL_PASSWORD", password)
}

// noSecrets fails the test if any output holds a secret.
func noSecrets(t *testing.T, what string, outputs []string, secrets ...string) {
	t.Helper()
	for _, out := range outputs {
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("%s: output contains the secret %q:\n%s", what, s, out)
			}
		}
	}
}

// TestSnapshotSCRAM: snapshot works with SCRAM credentials from the
// environment, fails clearly with a wrong password, and no output ever
// holds a password: not the logs at any level or format, not the errors,
// not --help.
func TestSnapshotSCRAM(t *testing.T) {
	c := secureCluster(t, nil, nil)
	scramEnv(t, backupUser, backupPassword)

	for _, logArgs := range [][]string{nil, {"--log-level", "debug"}, {"--log-level", "debug", "--log-format", "json"}} {
		code, out, errs := c.run(append([]string{"snapshot"}, logArgs...)...)
		if code != 0 {
			t.Fatalf("snapshot %v with SCRAM: exit %d\n%s\n%s", logArgs, code, out, errs)
		}
		noSecrets(t, "snapshot "+strings.Join(logArgs, " "), []string{out, errs}, backupPassword, adminPassword)
	}
	// The password given as a flag (discouraged, but it works) is not
	// echoed either.
	t.Setenv("OFFSETKEEPER_SASL_PASSWORD", "")
	code, out, errs := c.run("snapshot", "--sasl-password", backupPassword, "--log-level", "debug", "--log-format", "json")
	if code != 0 {
		t.Fatalf("snapshot with --sasl-password: exit %d\n%s", code, errs)
	}
	noSecrets(t, "snapshot --sasl-password", []string{out, errs}, backupPassword)

	t.Run("wrong password", func(t *testing.T) {
		for _, logArgs := range [][]string{{"--log-level", "debug"}, {"--log-level", "debug", "--log-format", "json"}} {
			scramEnv(t, backupUser, wrongPassword)
			code, out, errs := c.run(append([]string{"snapshot"}, logArgs...)...)
			if code != exitError {
				t.Fatalf("snapshot with a wrong password: exit %d, want 1\n%s\n%s", code, out, errs)
			}
			for _, want := range []string{"SASL", "--sasl-password", backupUser} {
				if !strings.Contains(errs, want) {
					t.Errorf("error does not say %q:\n%s", want, errs)
				}
			}
			noSecrets(t, "snapshot with a wrong password", []string{out, errs}, wrongPassword, backupPassword, adminPassword)
			// The same through the flag.
			t.Setenv("OFFSETKEEPER_SASL_PASSWORD", "")
			code, out, errs = c.run(append([]string{"snapshot", "--sasl-password", wrongPassword}, logArgs...)...)
			if code != exitError || !strings.Contains(errs, "--sasl-password") {
				t.Errorf("snapshot --sasl-password <wrong>: exit %d\n%s", code, errs)
			}
			noSecrets(t, "snapshot --sasl-password <wrong>", []string{out, errs}, wrongPassword)
			t.Logf("wrong password: %s", strings.TrimSpace(errs))
		}
	})

	t.Run("help", func(t *testing.T) {
		scramEnv(t, backupUser, backupPassword)
		for _, args := range [][]string{
			{"snapshot", "--help"},
			{"snapshot", "--sasl-password", backupPassword, "--help"},
			{"restore", "--help"},
			{"daemon", "--help"},
			{"--help"},
		} {
			code, out, errs := runCLI(t, args...)
			if code != exitOK || (args[0] != "--help" && !strings.Contains(out, "-sasl-password")) {
				t.Errorf("%v: exit %d\n%s%s", args, code, out, errs)
			}
			noSecrets(t, strings.Join(args, " "), []string{out, errs}, backupPassword)
		}
	})
}

// TestSnapshotNoACLs: a user the ACLs grant nothing fails fast with an
// error naming the resource and the ACL needed, not with a timeout.
func TestSnapshotNoACLs(t *testing.T) {
	c := secureCluster(t, nil, nil, kfake.EnableACLs())
	scramEnv(t, noACLUser, noACLPassword)
	began := time.Now()
	code, out, errs := c.run("snapshot")
	if code != exitError {
		t.Fatalf("snapshot without ACLs: exit %d, want 1\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"not authorized", "ALLOW ACL", "resource type", "docs/security.md"} {
		if !strings.Contains(errs, want) {
			t.Errorf("error does not say %q:\n%s", want, errs)
		}
	}
	if strings.Contains(errs, "did not answer in time") || strings.Contains(errs, "deadline exceeded") {
		t.Errorf("a missing ACL is reported as a timeout:\n%s", errs)
	}
	if d := time.Since(began); d > 8*time.Second {
		t.Errorf("took %s: a missing ACL must fail fast", d)
	}
	noSecrets(t, "snapshot without ACLs", []string{out, errs}, noACLPassword, adminPassword)
	t.Logf("no ACLs (%s): %s", time.Since(began).Round(time.Millisecond), strings.TrimSpace(errs))
	if ids := c.storeIDs(); len(ids) != 0 {
		t.Errorf("a failed snapshot left %v", ids)
	}

	// The superuser, by contrast, may do everything.
	scramEnv(t, backupUser, backupPassword)
	c.snapshot()
}

// TestRestoreSCRAM: a restore as the SCRAM user brings back the snapshot.
func TestRestoreSCRAM(t *testing.T) {
	c := secureCluster(t, nil, nil)
	scramEnv(t, backupUser, backupPassword)
	c.stopAll()
	id := c.snapshot()
	c.badReset()
	out, errs := c.mustRun(0, "restore", "latest")
	for _, want := range []string{"undo snapshot: ", "verified: "} {
		if !strings.Contains(out, want) {
			t.Errorf("restore output lacks %q:\n%s", want, out)
		}
	}
	noSecrets(t, "restore", []string{out, errs}, backupPassword)
	// The restored state is the snapshot: a second run has nothing to do.
	out, _ = c.mustRun(0, "restore", id)
	if !strings.Contains(out, "nothing to do") {
		t.Errorf("second restore:\n%s", out)
	}
}

// TestSnapshotTLS: snapshot over TLS (with SCRAM on top) works with the
// brokers' CA in --tls-ca and fails clearly with an untrusted one.
func TestSnapshotTLS(t *testing.T) {
	ca, other := newCA(t, "kafka-ca"), newCA(t, "other-ca")
	dir := t.TempDir()
	caFile := writeTestFile(t, dir, "ca.pem", ca.PEM)
	otherFile := writeTestFile(t, dir, "other.pem", other.PEM)
	c := secureCluster(t, ca.ServerTLS(t, "127.0.0.1", "localhost"), ca.ClientTLS())
	scramEnv(t, backupUser, backupPassword)

	id := c.snapshot("--tls-ca", caFile)
	if _, err := snapshot.ParseID(id); err != nil {
		t.Fatalf("snapshot over TLS printed %q: %v", id, err)
	}
	// The environment twin works too.
	t.Setenv("OFFSETKEEPER_TLS_CA", caFile)
	c.snapshot()

	t.Run("untrusted CA", func(t *testing.T) {
		t.Setenv("OFFSETKEEPER_TLS_CA", otherFile)
		began := time.Now()
		code, out, errs := c.run("snapshot")
		if code != exitError {
			t.Fatalf("snapshot with an untrusted CA: exit %d, want 1\n%s\n%s", code, out, errs)
		}
		for _, want := range []string{"TLS", "unknown authority", "--tls-ca"} {
			if !strings.Contains(errs, want) {
				t.Errorf("error does not say %q:\n%s", want, errs)
			}
		}
		noSecrets(t, "untrusted CA", []string{out, errs}, backupPassword)
		t.Logf("untrusted CA (%s): %s", time.Since(began).Round(time.Millisecond), strings.TrimSpace(errs))
	})
	t.Run("system roots", func(t *testing.T) {
		t.Setenv("OFFSETKEEPER_TLS_CA", "")
		code, _, errs := c.run("snapshot", "--tls")
		if code != exitError || !strings.Contains(errs, "--tls-ca") {
			t.Errorf("snapshot --tls without the CA: exit %d\n%s", code, errs)
		}
	})
	t.Run("plaintext client", func(t *testing.T) {
		t.Setenv("OFFSETKEEPER_TLS_CA", "")
		code, _, errs := c.run("snapshot")
		if code != exitError || !strings.Contains(errs, "--tls") {
			t.Errorf("snapshot without TLS against a TLS listener: exit %d\n%s", code, errs)
		}
	})
}

// encryptionKey returns a base64key URL and its key, made from seed.
func encryptionKey(seed string) (keyURL, key string) {
	sum := sha256.Sum256([]byte(seed))
	key = base64.URLEncoding.EncodeToString(sum[:])
	return "base64key://" + key, key
}

// TestEncryptedSnapshot: a snapshot taken with --encrypt-key shows,
// verifies and restores only with the key; without it or with another key
// every command says so clearly, and a restore writes nothing. The key is
// never printed.
func TestEncryptedSnapshot(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	keyURL, key := encryptionKey("the right key")
	wrongURL, wrongKey := encryptionKey("another key")
	secrets := []string{key, wrongKey}

	// Taken with the key in the environment.
	t.Setenv("OFFSETKEEPER_ENCRYPT_KEY", keyURL)
	code, out, errs := c.run("snapshot", "--log-level", "debug")
	if code != 0 {
		t.Fatalf("encrypted snapshot: exit %d\n%s", code, errs)
	}
	noSecrets(t, "snapshot --encrypt-key", []string{out, errs}, secrets...)
	id := lastLine(out)
	obj, err := os.ReadFile(filepath.Join(c.store, "snapshots", id+".snap"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(obj[:bytes.IndexByte(obj, '\n')], []byte(`"encryption":"gocloud-secrets-v2"`)) {
		t.Fatalf("stored object is not encrypted: %.200s", obj)
	}
	shown, _ := c.mustRun(0, "show", "latest", "--output", "json")

	t.Run("without the key", func(t *testing.T) {
		t.Setenv("OFFSETKEEPER_ENCRYPT_KEY", "")
		want := "snapshot " + id + " is encrypted: pass --encrypt-key (OFFSETKEEPER_ENCRYPT_KEY)"
		for _, args := range [][]string{{"show", "latest"}, {"show", id, "--output", "json"}, {"diff", id, "--live"}} {
			code, out, errs := c.run(args...)
			if code != exitError || !strings.Contains(errs, want) {
				t.Errorf("%v without the key: exit %d, want 1 and %q\n%s%s", args, code, want, out, errs)
			}
		}
		// list needs no key; verify checks the checksum and says what it did not check.
		out, _ := c.mustRun(0, "list", "--output", "json")
		if !strings.Contains(out, `"encrypted": true`) && !strings.Contains(out, `"encrypted":true`) {
			t.Errorf("list does not say the snapshot is encrypted:\n%s", out)
		}
		out, _ = c.mustRun(0, "verify")
		if !strings.Contains(out, "ok   "+id) || !strings.Contains(out, "encrypted; checksum ok, contents not checked without --encrypt-key") {
			t.Errorf("verify without the key:\n%s", out)
		}
	})

	t.Run("wrong key", func(t *testing.T) {
		t.Setenv("OFFSETKEEPER_ENCRYPT_KEY", wrongURL)
		code, out, errs := c.run("show", "latest", "--log-level", "debug", "--log-format", "json")
		if code != exitError || !strings.Contains(errs, "decrypt snapshot "+id+": wrong key?") {
			t.Errorf("show with a wrong key: exit %d\n%s%s", code, out, errs)
		}
		noSecrets(t, "show with a wrong key", []string{out, errs}, secrets...)
		code, out, errs = c.run("verify", id)
		if code != exitError || !strings.Contains(out, "FAIL") || !strings.Contains(out, "wrong key?") {
			t.Errorf("verify with a wrong key: exit %d\n%s%s", code, out, errs)
		}
		noSecrets(t, "verify with a wrong key", []string{out, errs}, secrets...)
	})

	t.Run("bad keys", func(t *testing.T) {
		short := base64.URLEncoding.EncodeToString([]byte("sixteen byte key"))
		for _, bad := range []string{"base64key://" + short, key, "base64key://"} {
			t.Setenv("OFFSETKEEPER_ENCRYPT_KEY", bad)
			code, out, errs := c.run("show", "latest")
			if code != exitError || !strings.Contains(errs, "--encrypt-key") {
				t.Errorf("bad key: exit %d\n%s%s", code, out, errs)
			}
			noSecrets(t, "a bad --encrypt-key", []string{out, errs}, append(secrets, short)...)
		}
		t.Setenv("OFFSETKEEPER_ENCRYPT_KEY", keyURL)
		for _, args := range [][]string{{"snapshot", "--help"}, {"show", "--help"}, {"show", "--encrypt-key", keyURL, "--help"}} {
			_, out, errs := runCLI(t, args...)
			if !strings.Contains(out, "-encrypt-key") {
				t.Errorf("%v does not document --encrypt-key:\n%s", args, out)
			}
			noSecrets(t, strings.Join(args, " "), []string{out, errs}, secrets...)
		}
	})

	t.Run("with the key", func(t *testing.T) {
		t.Setenv("OFFSETKEEPER_ENCRYPT_KEY", "")
		out, _ := c.mustRun(0, "show", id, "--output", "json", "--encrypt-key", keyURL)
		if out != shown {
			t.Errorf("show with the key as a flag differs from show with it in the environment")
		}
		if _, err := snapshot.Decode([]byte(out)); err != nil {
			t.Errorf("show --output json: %v", err)
		}
		out, _ = c.mustRun(0, "verify", "--encrypt-key", keyURL)
		if !strings.Contains(out, "ok   "+id) || strings.Contains(out, "not checked") {
			t.Errorf("verify with the key:\n%s", out)
		}
	})

	t.Run("restore", func(t *testing.T) {
		c.badReset()
		ends := c.ends(offsetsTopics()...)
		before := c.storeIDs()

		t.Setenv("OFFSETKEEPER_ENCRYPT_KEY", "")
		code, out, errs := c.run("restore", id)
		if code == exitOK || !strings.Contains(errs, "is encrypted: pass --encrypt-key") || !strings.Contains(errs, "nothing was written") {
			t.Errorf("restore without the key: exit %d\n%s%s", code, out, errs)
		}
		t.Setenv("OFFSETKEEPER_ENCRYPT_KEY", wrongURL)
		code, out, errs = c.run("restore", id)
		if code == exitOK || !strings.Contains(errs, "wrong key?") || !strings.Contains(errs, "nothing was written") {
			t.Errorf("restore with a wrong key: exit %d\n%s%s", code, out, errs)
		}
		if got := c.ends(offsetsTopics()...); fmt.Sprint(got) != fmt.Sprint(ends) {
			t.Errorf("a refused restore wrote: end offsets %v, were %v", got, ends)
		}
		if got := c.storeIDs(); len(got) != len(before) {
			t.Errorf("a refused restore stored a snapshot: %v", got)
		}

		t.Setenv("OFFSETKEEPER_ENCRYPT_KEY", keyURL)
		out, errs = c.mustRun(0, "restore", id)
		if !strings.Contains(out, "verified: ") {
			t.Errorf("restore with the key:\n%s", out)
		}
		noSecrets(t, "restore with the key", []string{out, errs}, secrets...)
		// The undo snapshot is encrypted with the same key.
		t.Setenv("OFFSETKEEPER_ENCRYPT_KEY", "")
		out, _ = c.mustRun(0, "verify")
		if n := strings.Count(out, "contents not checked without --encrypt-key"); n != 2 {
			t.Errorf("want the snapshot and its undo snapshot encrypted:\n%s", out)
		}
	})
}

// TestVersion: version and --version print the version, the commit and the
// Go version from the build info; -ldflags -X main.version sets the version.
func TestVersion(t *testing.T) {
	code, out, errs := runCLI(t, "version")
	if code != exitOK || errs != "" {
		t.Fatalf("version: exit %d\n%s%s", code, out, errs)
	}
	if !strings.HasPrefix(out, "offsetkeeper ") || !strings.Contains(out, "commit ") || !strings.Contains(out, runtime.Version()) {
		t.Errorf("version printed %q", out)
	}
	if _, flagOut, _ := runCLI(t, "--version"); flagOut != out {
		t.Errorf("--version printed %q, version %q", flagOut, out)
	}
	if code, _, _ := runCLI(t, "version", "extra"); code != exitUsage {
		t.Errorf("version extra: exit %d, want 2", code)
	}

	old := version
	t.Cleanup(func() { version = old })
	version = "v1.2.3-test"
	_, out, _ = runCLI(t, "--version")
	if !strings.HasPrefix(out, "offsetkeeper v1.2.3-test (commit ") || !strings.Contains(out, runtime.Version()) {
		t.Errorf("--version with main.version set printed %q", out)
	}
	if got := programVersion(); got != "v1.2.3-test" {
		t.Errorf("programVersion() = %q: snapshots record the version", got)
	}
}

// newCA is the test kit's certificate authority.
func newCA(t *testing.T, name string) *testkit.CA { return testkit.NewCA(t, name) }

// writeTestFile writes b to dir/name, mode 0600, and returns its path.
func writeTestFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

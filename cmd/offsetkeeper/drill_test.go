package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim/connectsimtest"
	"github.com/offsetkeeper/offsetkeeper/restore/drill"
)

// writeKeys writes an ed25519 key pair as openssl genpkey and openssl
// pkey -pubout write them, and returns the two files.
func writeKeys(t *testing.T) (keyFile, pubFile string) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p8, _ := x509.MarshalPKCS8PrivateKey(priv)
	spki, _ := x509.MarshalPKIXPublicKey(pub)
	dir := t.TempDir()
	keyFile, pubFile = filepath.Join(dir, "drill.key"), filepath.Join(dir, "drill.pub")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: p8}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pubFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: spki}), 0o644); err != nil {
		t.Fatal(err)
	}
	return keyFile, pubFile
}

// The drill as a user runs it on the demo's cluster: a fresh capture
// passes with Connect; a stored snapshot passes with Complete skipped;
// the reports are listed; a signed one verifies and a changed one does
// not; a snapshot with a flipped byte fails (exit 1); a Connect URL that
// does not answer cannot run (exit 2).
func TestDrillCommand(t *testing.T) {
	brokers, cl, _ := demoCluster(t, connectdemo.DefaultSpec())
	srv, err := connectsimtest.Start(cl, connectsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	code, out, errs := runCLI(t, "snapshot", "--brokers", brokers, "--store", dir)
	if code != 0 {
		t.Fatalf("snapshot: exit %d: %s", code, errs)
	}
	id := lastLine(out)

	code, out, errs = runCLI(t, "drill", "--brokers", brokers, "--store", dir, "--connect-url", srv.URL)
	if code != 0 || !strings.Contains(out, "PASSED") {
		t.Fatalf("drill: exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"ok   restorable", "ok   complete", "ok   recoverable", "RTO:", "RPO:"} {
		if !strings.Contains(out, want) {
			t.Errorf("drill output lacks %q:\n%s", want, out)
		}
	}

	code, out, errs = runCLI(t, "drill", "latest", "--store", dir, "--output", "json")
	var rep drill.Report
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.State.SnapshotID != id || rep.State.SHA256 == "" {
		t.Fatalf("drill latest --output json: exit %d, state %+v\n%s\n%s", code, rep.State, out, errs)
	}
	if c := rep.Check(drill.CheckComplete); c == nil || c.Result != drill.Skipped {
		t.Errorf("complete without --connect-url: %+v", c)
	}

	keyFile, pubFile := writeKeys(t)
	code, out, errs = runCLI(t, "drill", id, "--store", dir, "--signing-key", keyFile, "--output", "json")
	if code != 0 || !drill.Signed([]byte(out)) {
		t.Fatalf("signed drill: exit %d\n%s\n%s", code, out, errs)
	}
	envFile := filepath.Join(t.TempDir(), "report.json")
	if err := os.WriteFile(envFile, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := runCLI(t, "drill", "verify", envFile, "--public-key", pubFile); code != 0 || !strings.Contains(out, "verified") {
		t.Fatalf("drill verify: exit %d\n%s\n%s", code, out, errs)
	}
	var env struct {
		PayloadType string            `json:"payloadType"`
		Payload     string            `json:"payload"`
		Signatures  []json.RawMessage `json:"signatures"`
	}
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatal(err)
	}
	payload, _ := base64.StdEncoding.DecodeString(env.Payload)
	payload[len(payload)/2] ^= 0x01
	env.Payload = base64.StdEncoding.EncodeToString(payload)
	changed, _ := json.Marshal(env)
	if err := os.WriteFile(envFile, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCLI(t, "drill", "verify", envFile, "--public-key", pubFile); code != 1 || !strings.Contains(errs, "does not verify") {
		t.Fatalf("drill verify of a changed payload: exit %d\n%s", code, errs)
	}

	code, out, _ = runCLI(t, "drill", "--list", "--store", dir)
	if code != 0 || strings.Count(out, "passed") != 3 {
		t.Fatalf("drill --list: exit %d\n%s", code, out)
	}
	if code, out, _ := runCLI(t, "list", "--store", dir); code != 0 || !strings.Contains(out, "last drill: ") || !strings.Contains(out, "PASSED") {
		t.Fatalf("list: exit %d\n%s", code, out)
	}

	// Planted fault: one flipped byte in the snapshot object.
	flipByte(t, dir, id)
	code, out, errs = runCLI(t, "drill", id, "--store", dir, "--output", "json")
	rep = drill.Report{}
	if code != 1 || json.Unmarshal([]byte(out), &rep) != nil || rep.Result != drill.Failed {
		t.Fatalf("drill of a flipped byte: exit %d, want 1\n%s\n%s", code, out, errs)
	}
	if fs := rep.Check(drill.CheckRestorable).Failures; len(fs) != 1 || fs[0].Cause != drill.CauseUnreadable || !strings.Contains(fs[0].Detail, "checksum") {
		t.Fatalf("drill of a flipped byte: failures %+v", fs)
	}

	code, _, errs = runCLI(t, "drill", "--brokers", brokers, "--store", dir, "--connect-url", "http://127.0.0.1:1")
	if code != 2 || !strings.Contains(errs, "cannot run") {
		t.Fatalf("drill with a Connect URL that does not answer: exit %d, want 2\n%s", code, errs)
	}
}

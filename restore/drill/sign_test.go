package drill

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
)

// pemKeys returns a fresh ed25519 key pair in the PEM forms openssl
// genpkey -algorithm ed25519 and openssl pkey -pubout write.
func pemKeys(t *testing.T) (privPEM, pubPEM []byte) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p8, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	spki, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: p8}), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: spki})
}

func signedReport(t *testing.T, privPEM []byte) (envelope, payload []byte) {
	t.Helper()
	rep := &Report{Format: Format, Version: Version, ID: "20261207T040000.000000Z-abcdef", StartedAt: time.Date(2026, 12, 7, 4, 0, 0, 0, time.UTC), Result: Passed,
		ToolVersion: "offsetkeeper test", ClusterID: "c1", State: State{Kind: "snapshot", SnapshotID: "20261207T030000.000000Z-123456", SHA256: "ab"},
		Checks: []Check{{Name: CheckRestorable, Result: Passed}}}
	payload, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	priv, err := ParsePrivateKey(privPEM)
	if err != nil {
		t.Fatal(err)
	}
	env, err := Sign(context.Background(), payload, priv)
	if err != nil {
		t.Fatal(err)
	}
	return env, payload
}

// pubKeyVerifier is an independent DSSE verifier: the library's envelope
// verifier over crypto/ed25519, sharing no code with Verify.
type pubKeyVerifier struct{ pub ed25519.PublicKey }

func (v pubKeyVerifier) Verify(_ context.Context, data, sig []byte) error {
	if !ed25519.Verify(v.pub, data, sig) {
		return errors.New("bad signature")
	}
	return nil
}
func (v pubKeyVerifier) KeyID() (string, error)   { return "", nil }
func (v pubKeyVerifier) Public() crypto.PublicKey { return v.pub }

func independentVerify(t *testing.T, envelope []byte, pubPEM []byte) error {
	t.Helper()
	b, _ := pem.Decode(pubPEM)
	k, err := x509.ParsePKIXPublicKey(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	var env dsse.Envelope
	if err := json.Unmarshal(envelope, &env); err != nil {
		t.Fatal(err)
	}
	ev, err := dsse.NewEnvelopeVerifier(pubKeyVerifier{pub: k.(ed25519.PublicKey)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ev.Verify(context.Background(), &env)
	return err
}

// tamper changes one byte of the envelope's payload.
func tamper(t *testing.T, envelope []byte) []byte {
	t.Helper()
	var env dsse.Envelope
	if err := json.Unmarshal(envelope, &env); err != nil {
		t.Fatal(err)
	}
	p, err := env.DecodeB64Payload()
	if err != nil {
		t.Fatal(err)
	}
	i := len(p) / 2
	p[i] ^= 0x01
	env.Payload = base64.StdEncoding.EncodeToString(p)
	out, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSignedReportVerifies(t *testing.T) {
	privPEM, pubPEM := pemKeys(t)
	env, payload := signedReport(t, privPEM)
	pub, err := ParsePublicKey(pubPEM)
	if err != nil {
		t.Fatal(err)
	}
	rep, got, err := Verify(context.Background(), env, pub)
	if err != nil || string(got) != string(payload) || rep.Result != Passed {
		t.Fatalf("Verify: %v, payload %q", err, got)
	}
	if err := independentVerify(t, env, pubPEM); err != nil {
		t.Fatalf("independent verifier: %v", err)
	}
	bad := tamper(t, env)
	if _, _, err := Verify(context.Background(), bad, pub); !errors.Is(err, ErrSignature) {
		t.Errorf("Verify of a changed payload: %v, want ErrSignature", err)
	}
	if err := independentVerify(t, bad, pubPEM); err == nil {
		t.Error("independent verifier accepts a changed payload")
	}
	_, otherPub := pemKeys(t)
	op, _ := ParsePublicKey(otherPub)
	if _, _, err := Verify(context.Background(), env, op); !errors.Is(err, ErrSignature) {
		t.Errorf("Verify with another key: %v, want ErrSignature", err)
	}
}

// openssl checks the signature over DSSE's pre-authentication encoding
// (PAE) with the keys in the forms it writes itself: what docs/drills.md
// shows an auditor.
func TestSignedReportVerifiesWithOpenSSL(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl is not installed")
	}
	dir := t.TempDir()
	keyFile, pubFile := filepath.Join(dir, "key.pem"), filepath.Join(dir, "pub.pem")
	run := func(args ...string) error {
		out, err := exec.Command(openssl, args...).CombinedOutput()
		if err != nil {
			t.Logf("openssl %v: %s", args, out)
		}
		return err
	}
	if err := run("genpkey", "-algorithm", "ed25519", "-out", keyFile); err != nil {
		t.Fatal(err)
	}
	if err := run("pkey", "-in", keyFile, "-pubout", "-out", pubFile); err != nil {
		t.Fatal(err)
	}
	privPEM, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	envelope, _ := signedReport(t, privPEM)
	check := func(envelope []byte) error {
		var env dsse.Envelope
		if err := json.Unmarshal(envelope, &env); err != nil {
			t.Fatal(err)
		}
		payload, err := env.DecodeB64Payload()
		if err != nil {
			t.Fatal(err)
		}
		sig, err := base64.StdEncoding.DecodeString(env.Signatures[0].Sig)
		if err != nil {
			t.Fatal(err)
		}
		pae, sigFile := filepath.Join(dir, "pae.bin"), filepath.Join(dir, "sig.bin")
		if err := os.WriteFile(pae, dsse.PAE(env.PayloadType, payload), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(sigFile, sig, 0o600); err != nil {
			t.Fatal(err)
		}
		return run("pkeyutl", "-verify", "-pubin", "-inkey", pubFile, "-rawin", "-in", pae, "-sigfile", sigFile)
	}
	if err := check(envelope); err != nil {
		t.Fatalf("openssl does not verify a signed report: %v", err)
	}
	if err := check(tamper(t, envelope)); err == nil {
		t.Fatal("openssl verifies a report whose payload changed")
	}
}

package drill

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
)

// PayloadType is the DSSE payloadType of a signed drill report.
const PayloadType = "application/vnd.offsetkeeper.drill+json"

// ErrSignature: a signed report does not verify with the key given.
var ErrSignature = errors.New("drill report signature does not verify")

// ParsePrivateKey reads an ed25519 private key in PEM, PKCS#8 ("PRIVATE
// KEY"), as openssl genpkey -algorithm ed25519 writes it.
func ParsePrivateKey(data []byte) (ed25519.PrivateKey, error) {
	b, _ := pem.Decode(data)
	if b == nil || b.Type != "PRIVATE KEY" {
		return nil, errors.New("read signing key: want a PEM \"PRIVATE KEY\" block (PKCS#8), as openssl genpkey -algorithm ed25519 writes it")
	}
	k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
	if err != nil {
		return nil, fmt.Errorf("read signing key: %w", err)
	}
	ek, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("read signing key: a %T, want ed25519 (openssl genpkey -algorithm ed25519)", k)
	}
	return ek, nil
}

// ParsePublicKey reads an ed25519 public key in PEM ("PUBLIC KEY",
// SubjectPublicKeyInfo), as openssl pkey -pubout writes it.
func ParsePublicKey(data []byte) (ed25519.PublicKey, error) {
	b, _ := pem.Decode(data)
	if b == nil || b.Type != "PUBLIC KEY" {
		return nil, errors.New("read public key: want a PEM \"PUBLIC KEY\" block, as openssl pkey -pubout writes it")
	}
	k, err := x509.ParsePKIXPublicKey(b.Bytes)
	if err != nil {
		return nil, fmt.Errorf("read public key: %w", err)
	}
	ek, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("read public key: a %T, want ed25519", k)
	}
	return ek, nil
}

// ed25519Key signs and verifies DSSE envelopes (dsse.SignerVerifier).
// Its key ID is dsse.SHA256KeyID of the public key.
type ed25519Key struct {
	priv ed25519.PrivateKey
	pub  ed25519.PublicKey
}

func (k ed25519Key) Sign(_ context.Context, data []byte) ([]byte, error) {
	return ed25519.Sign(k.priv, data), nil
}

func (k ed25519Key) Verify(_ context.Context, data, sig []byte) error {
	if !ed25519.Verify(k.pub, data, sig) {
		return ErrSignature
	}
	return nil
}

func (k ed25519Key) KeyID() (string, error) { return dsse.SHA256KeyID(k.pub) }

func (k ed25519Key) Public() crypto.PublicKey { return k.pub }

// Sign wraps report (its JSON document) in a DSSE envelope signed with
// key, and returns the envelope's JSON.
func Sign(ctx context.Context, report []byte, key ed25519.PrivateKey) ([]byte, error) {
	k := ed25519Key{priv: key, pub: key.Public().(ed25519.PublicKey)}
	s, err := dsse.NewEnvelopeSigner(k)
	if err != nil {
		return nil, fmt.Errorf("sign drill report: %w", err)
	}
	env, err := s.SignPayload(ctx, PayloadType, report)
	if err != nil {
		return nil, fmt.Errorf("sign drill report: %w", err)
	}
	out, err := json.MarshalIndent(env, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode drill report envelope: %w", err)
	}
	return append(out, '\n'), nil
}

// Signed reports whether data is a DSSE envelope rather than a bare report.
func Signed(data []byte) bool {
	var probe struct {
		PayloadType string `json:"payloadType"`
	}
	return json.Unmarshal(data, &probe) == nil && probe.PayloadType != ""
}

// Verify checks the DSSE envelope data with pub and returns the report it
// signs. An envelope whose signature does not verify is ErrSignature.
func Verify(ctx context.Context, data []byte, pub ed25519.PublicKey) (*Report, []byte, error) {
	var env dsse.Envelope
	if err := json.Unmarshal(data, &env); err != nil || env.PayloadType == "" {
		return nil, nil, fmt.Errorf("%w: not a DSSE envelope", ErrBadReport)
	}
	if env.PayloadType != PayloadType {
		return nil, nil, fmt.Errorf("%w: payloadType is %q, want %q", ErrBadReport, env.PayloadType, PayloadType)
	}
	v, err := dsse.NewEnvelopeVerifier(ed25519Key{pub: pub})
	if err != nil {
		return nil, nil, fmt.Errorf("verify drill report: %w", err)
	}
	if _, err := v.Verify(ctx, &env); err != nil {
		return nil, nil, fmt.Errorf("%w with this public key: %v", ErrSignature, err)
	}
	payload, err := env.DecodeB64Payload()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: payload: %v", ErrBadReport, err)
	}
	r, err := ParseReport(payload)
	if err != nil {
		return nil, nil, err
	}
	return r, payload, nil
}

// Open reads a stored report object: a bare report, or the report an
// envelope carries (not verified: Verify does that).
func Open(data []byte) (*Report, error) {
	if !Signed(data) {
		return ParseReport(data)
	}
	var env dsse.Envelope
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadReport, err)
	}
	payload, err := env.DecodeB64Payload()
	if err != nil {
		return nil, fmt.Errorf("%w: payload: %v", ErrBadReport, err)
	}
	return ParseReport(payload)
}

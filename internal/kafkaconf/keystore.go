package kafkaconf

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"
)

// Java key store types, as Kafka names them in ssl.truststore.type and
// ssl.keystore.type.
const (
	StoreJKS    = "JKS"
	StorePKCS12 = "PKCS12"
	StorePEM    = "PEM"
)

// Store is a Java truststore or keystore file, JKS or PKCS12, as a Connect
// worker's ssl.truststore.* or ssl.keystore.* properties name it. The zero
// value (no File) is no store.
type Store struct {
	// File is the store (ssl.*.location).
	File string
	// Type is JKS or PKCS12 (ssl.*.type, case-insensitive); like Java's
	// keystore.type.compat, a store of the other of the two types is read
	// too.
	Type string
	// Password is ssl.*.password. For a PKCS12 keystore it also decrypts
	// the key, as keytool makes them.
	Password Secret
	// KeyPassword is ssl.key.password, the password of a JKS keystore's
	// private key; empty means Password.
	KeyPassword Secret
	// prop is the property prefix errors name: ssl.truststore or
	// ssl.keystore.
	prop string
}

// storeKind is what a file's first bytes say it is.
func storeKind(b []byte) string {
	switch {
	case len(b) >= 4 && binary.BigEndian.Uint32(b) == 0xFEEDFEED:
		return StoreJKS
	case len(b) >= 2 && b[0] == 0x30: // a DER SEQUENCE: the PKCS#12 PFX
		return StorePKCS12
	case isPEM(b):
		return StorePEM
	}
	return "unknown"
}

// read reads the store file and checks its type; the error names the file
// and the properties to check.
func (s Store) read() ([]byte, error) {
	b, err := os.ReadFile(s.File)
	if err != nil {
		return nil, fmt.Errorf("read %s.location %s: %w", s.prop, s.File, err)
	}
	typ := strings.ToUpper(s.Type)
	if typ != StoreJKS && typ != StorePKCS12 {
		return nil, fmt.Errorf("%w: %s.type %q for %s: want JKS, PKCS12 or PEM", ErrInvalidConfig, s.prop, s.Type, s.File)
	}
	if k := storeKind(b); k != StoreJKS && k != StorePKCS12 {
		what := "neither a JKS nor a PKCS12 store"
		if k == StorePEM {
			what = "a PEM file; set " + s.prop + ".type=PEM"
		}
		return nil, fmt.Errorf("%w: %s.location %s is %s (%s.type is %s)", ErrInvalidConfig, s.prop, s.File, what, s.prop, typ)
	}
	if s.Password == "" {
		return nil, fmt.Errorf("%w: %s.location %s is a %s store but %s.password is not set", ErrInvalidConfig, s.prop, s.File, storeKind(b), s.prop)
	}
	return b, nil
}

// passwordError says which password to check.
func (s Store) passwordError(prop string, err error) error {
	return fmt.Errorf("%w: open %s.location %s: wrong password? check %s (%v)", ErrInvalidConfig, s.prop, s.File, prop, err)
}

// certPool returns the trusted certificates of a truststore.
func (s Store) certPool() (*x509.CertPool, error) {
	b, err := s.read()
	if err != nil {
		return nil, err
	}
	var certs []*x509.Certificate
	if storeKind(b) == StoreJKS {
		ks := keystore.New()
		if err := ks.Load(bytes.NewReader(b), []byte(s.Password)); err != nil {
			return nil, s.jksError(err)
		}
		for _, alias := range ks.Aliases() {
			var der []byte
			switch {
			case ks.IsTrustedCertificateEntry(alias):
				e, err := ks.GetTrustedCertificateEntry(alias)
				if err != nil {
					return nil, fmt.Errorf("read %s.location %s entry %q: %w", s.prop, s.File, alias, err)
				}
				der = e.Certificate.Content
			case ks.IsPrivateKeyEntry(alias):
				// Java trusts the certificate of a key entry in a truststore.
				chain, err := ks.GetPrivateKeyEntryCertificateChain(alias)
				if err != nil || len(chain) == 0 {
					continue
				}
				der = chain[0].Content
			}
			c, err := x509.ParseCertificate(der)
			if err != nil {
				return nil, fmt.Errorf("read %s.location %s entry %q: %w", s.prop, s.File, alias, err)
			}
			certs = append(certs, c)
		}
	} else {
		if certs, err = pkcs12.DecodeTrustStore(b, string(s.Password)); err != nil {
			if errors.Is(err, pkcs12.ErrIncorrectPassword) {
				return nil, s.passwordError(s.prop+".password", err)
			}
			return nil, fmt.Errorf("%w: read PKCS12 %s.location %s: %v", ErrInvalidConfig, s.prop, s.File, err)
		}
	}
	if len(certs) == 0 {
		return nil, fmt.Errorf("%w: %s.location %s holds no certificate", ErrInvalidConfig, s.prop, s.File)
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}

// jksError describes a keystore-go Load error: its integrity check fails on a
// wrong password.
func (s Store) jksError(err error) error {
	if strings.Contains(err.Error(), "digest") {
		return s.passwordError(s.prop+".password", err)
	}
	return fmt.Errorf("%w: read JKS %s.location %s: %v", ErrInvalidConfig, s.prop, s.File, err)
}

// certificate returns the client certificate and key of a keystore: its one
// private key entry.
func (s Store) certificate() (tls.Certificate, error) {
	b, err := s.read()
	if err != nil {
		return tls.Certificate{}, err
	}
	var (
		key   any
		chain [][]byte
	)
	if storeKind(b) == StoreJKS {
		key, chain, err = s.jksKey(b)
	} else {
		key, chain, err = s.pkcs12Key(b)
	}
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf, err := x509.ParseCertificate(chain[0])
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("read %s.location %s: %w", s.prop, s.File, err)
	}
	pub, ok := key.(interface{ Public() crypto.PublicKey })
	if !ok {
		return tls.Certificate{}, fmt.Errorf("%w: %s.location %s: unsupported private key type %T", ErrInvalidConfig, s.prop, s.File, key)
	}
	if eq, ok := pub.Public().(interface{ Equal(crypto.PublicKey) bool }); !ok || !eq.Equal(leaf.PublicKey) {
		return tls.Certificate{}, fmt.Errorf("%w: %s.location %s: the private key does not match its certificate", ErrInvalidConfig, s.prop, s.File)
	}
	return tls.Certificate{Certificate: chain, PrivateKey: key, Leaf: leaf}, nil
}

func (s Store) jksKey(b []byte) (any, [][]byte, error) {
	ks := keystore.New()
	if err := ks.Load(bytes.NewReader(b), []byte(s.Password)); err != nil {
		return nil, nil, s.jksError(err)
	}
	var alias string
	for _, a := range ks.Aliases() {
		if ks.IsPrivateKeyEntry(a) {
			if alias != "" {
				return nil, nil, fmt.Errorf("%w: %s.location %s holds more than one private key (%q, %q); keep the client's only",
					ErrInvalidConfig, s.prop, s.File, alias, a)
			}
			alias = a
		}
	}
	if alias == "" {
		return nil, nil, fmt.Errorf("%w: %s.location %s holds no private key entry", ErrInvalidConfig, s.prop, s.File)
	}
	keyPass, prop := s.KeyPassword, "ssl.key.password"
	if keyPass == "" {
		keyPass, prop = s.Password, s.prop+".password (or set ssl.key.password)"
	}
	e, err := ks.GetPrivateKeyEntry(alias, []byte(keyPass))
	if err != nil {
		return nil, nil, s.passwordError(prop, err)
	}
	key, err := x509.ParsePKCS8PrivateKey(e.PrivateKey)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %s.location %s entry %q: %v", ErrInvalidConfig, s.prop, s.File, alias, err)
	}
	var chain [][]byte
	for _, c := range e.CertificateChain {
		chain = append(chain, c.Content)
	}
	if len(chain) == 0 {
		return nil, nil, fmt.Errorf("%w: %s.location %s entry %q has no certificate", ErrInvalidConfig, s.prop, s.File, alias)
	}
	return key, chain, nil
}

func (s Store) pkcs12Key(b []byte) (any, [][]byte, error) {
	key, leaf, cas, err := pkcs12.DecodeChain(b, string(s.Password))
	if errors.Is(err, pkcs12.ErrIncorrectPassword) && s.KeyPassword != "" && s.KeyPassword != s.Password {
		key, leaf, cas, err = pkcs12.DecodeChain(b, string(s.KeyPassword))
	}
	if err != nil {
		if errors.Is(err, pkcs12.ErrIncorrectPassword) || errors.Is(err, pkcs12.ErrDecryption) {
			return nil, nil, s.passwordError(s.prop+".password", err)
		}
		return nil, nil, fmt.Errorf("%w: read PKCS12 %s.location %s: %v", ErrInvalidConfig, s.prop, s.File, err)
	}
	chain := [][]byte{leaf.Raw}
	for _, c := range cas {
		chain = append(chain, c.Raw)
	}
	return key, chain, nil
}

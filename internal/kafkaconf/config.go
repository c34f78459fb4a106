package kafkaconf

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/aws"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// Defaults for the zero values of Config.
const (
	DefaultClientID       = "offsetkeeper"
	DefaultDialTimeout    = 10 * time.Second
	DefaultRequestTimeout = 10 * time.Second
	DefaultRetryTimeout   = 30 * time.Second
	DefaultRequestRetries = 5
)

// SASL mechanisms, as Kafka names them in sasl.mechanism.
const (
	MechanismPlain       = "PLAIN"
	MechanismScramSHA256 = "SCRAM-SHA-256"
	MechanismScramSHA512 = "SCRAM-SHA-512"
	MechanismOAuthBearer = "OAUTHBEARER"
	MechanismAWSMSKIAM   = "AWS_MSK_IAM"
)

// Mechanisms lists the SASL mechanisms Config supports.
var Mechanisms = []string{MechanismPlain, MechanismScramSHA256, MechanismScramSHA512, MechanismOAuthBearer, MechanismAWSMSKIAM}

const redactedText = "[redacted]"

// Secret is a string that does not print: String, GoString, LogValue and
// MarshalText all give "[redacted]" (or "" for an empty Secret), so a Config
// can be logged or formatted with any verb without leaking it. Convert with
// string(s) to use the value.
type Secret string

// String returns "[redacted]", or "" if s is empty.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redactedText
}

// GoString is String, for %#v.
func (s Secret) GoString() string { return strconv.Quote(s.String()) }

// LogValue is String, for log/slog.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalText is String, for encoding/json and friends.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Config says how to reach and authenticate to a Kafka cluster. The zero value
// of every field but Brokers means its default; Opts checks the whole and
// turns it into franz-go client options. Config holds no open resources: files
// are read by Opts and, for password and token files, again on every SASL
// authentication, so that rotated credentials are picked up.
//
// Config prints its secrets as "[redacted]" (see Redacted), and no error from
// this package contains a secret.
type Config struct {
	// Brokers are the seed brokers, each host:port. Required.
	Brokers []string
	// ClientID is sent to the brokers; default DefaultClientID.
	ClientID string
	// TLS configures encryption and, optionally, client certificates.
	TLS TLS
	// SASL configures authentication.
	SASL SASL
	// DialTimeout bounds one connection attempt, TCP and TLS handshake;
	// default DefaultDialTimeout.
	DialTimeout time.Duration
	// RequestTimeout is how long a broker may take to answer a request on
	// top of the request's own timeout (kgo.RequestTimeoutOverhead); default
	// DefaultRequestTimeout. It must be at least 100ms.
	RequestTimeout time.Duration
	// RetryTimeout bounds the total time spent trying and retrying one
	// request, so an unreachable cluster fails a command within about
	// RetryTimeout plus DialTimeout (kgo.RetryTimeout); default
	// DefaultRetryTimeout. Connect also uses it as its deadline.
	RetryTimeout time.Duration
	// RequestRetries is how many times a failed request is retried, within
	// RetryTimeout (kgo.RequestRetries); default DefaultRequestRetries.
	RequestRetries int
	// StillTrying, if set, is called once by Connect when the brokers
	// have refused connections for StillTryingAfter, with the time waited
	// and the last error; Connect goes on trying until RetryTimeout. The
	// CLI prints a line, so an unreachable cluster is not silent.
	StillTrying func(waited time.Duration, err error) `json:"-"`
	// StillTryingAfter is when StillTrying is called; default
	// DefaultStillTryingAfter.
	StillTryingAfter time.Duration
}

// DefaultStillTryingAfter is how long Connect waits on refused
// connections before it calls Config.StillTrying.
const DefaultStillTryingAfter = 3 * time.Second

// TLS configures the connection's encryption. All files are PEM.
type TLS struct {
	// Enabled turns TLS on. Setting any other field turns it on too.
	Enabled bool
	// CAFile holds the certificates that may sign the brokers' certificates;
	// empty means the system roots.
	CAFile string
	// CAPEM is CAFile's content given inline (ssl.truststore.certificates).
	CAPEM string
	// CertFile holds the client certificate chain for mutual TLS, and
	// KeyFile its unencrypted private key. They may be the same file, as a
	// Kafka PEM keystore holds both.
	CertFile string
	KeyFile  string
	// CertPEM and KeyPEM are CertFile's and KeyFile's content given inline
	// (ssl.keystore.certificate.chain, ssl.keystore.key).
	CertPEM string
	KeyPEM  Secret
	// Truststore is a JKS or PKCS12 truststore (ssl.truststore.* of a
	// worker), in place of CAFile; Keystore is a JKS or PKCS12 keystore
	// holding the client certificate and key (ssl.keystore.*,
	// ssl.key.password), in place of CertFile and KeyFile.
	Truststore Store
	Keystore   Store
	// ServerName is the name the brokers' certificates must carry; default
	// the host of the broker address dialed.
	ServerName string
	// SkipHostnameVerification checks that the brokers' certificates chain
	// to a trusted CA, but not that they name the broker; it is what
	// Kafka's ssl.endpoint.identification.algorithm= (empty) means.
	SkipHostnameVerification bool
	// InsecureSkipVerify checks nothing about the brokers' certificates.
	// Testing only.
	InsecureSkipVerify bool
}

// SASL configures authentication; the zero value authenticates nothing.
type SASL struct {
	// Mechanism is one of Mechanisms (case-insensitive), or empty for none.
	Mechanism string
	// Username and one of Password and PasswordFile are the PLAIN and SCRAM
	// credentials. PasswordFile is read on every authentication, with a
	// trailing newline removed.
	Username     string
	Password     Secret
	PasswordFile string
	// ScramToken says the SCRAM credentials are a delegation token
	// (Kafka's tokenauth=true).
	ScramToken bool
	// Token or TokenFile holds the OAUTHBEARER token. TokenFile is read on
	// every authentication, so that an external agent can refresh it.
	Token     Secret
	TokenFile string
}

// AWS_MSK_IAM takes its credentials from these standard AWS environment
// variables, read on every authentication.
const (
	EnvAWSAccessKeyID     = "AWS_ACCESS_KEY_ID"
	EnvAWSSecretAccessKey = "AWS_SECRET_ACCESS_KEY"
	EnvAWSSessionToken    = "AWS_SESSION_TOKEN"
)

// tlsOn reports whether TLS is asked for, explicitly or by any setting.
func (t TLS) tlsOn() bool {
	return t.Enabled || t.CAFile != "" || t.CAPEM != "" || t.CertFile != "" || t.KeyFile != "" ||
		t.CertPEM != "" || t.KeyPEM != "" || t.Truststore.File != "" || t.Keystore.File != "" || t.ServerName != "" || t.SkipHostnameVerification || t.InsecureSkipVerify
}

func (c Config) clientID() string { return cmpOr(c.ClientID, DefaultClientID) }

func (c Config) dialTimeout() time.Duration { return cmpOr(c.DialTimeout, DefaultDialTimeout) }

func (c Config) requestTimeout() time.Duration { return cmpOr(c.RequestTimeout, DefaultRequestTimeout) }

func (c Config) retryTimeout() time.Duration { return cmpOr(c.RetryTimeout, DefaultRetryTimeout) }

func (c Config) requestRetries() int { return cmpOr(c.RequestRetries, DefaultRequestRetries) }

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Opts checks c and returns the franz-go options for it: seed brokers, client
// ID, timeouts, TLS and SASL. It reads the TLS files and, to fail early, the
// password or token file. Pass the options to kgo.NewClient, with any of the
// caller's own after them.
func (c Config) Opts() ([]kgo.Opt, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.Brokers...),
		kgo.ClientID(c.clientID()),
		kgo.DialTimeout(c.dialTimeout()),
		kgo.RequestTimeoutOverhead(c.requestTimeout()),
		kgo.RetryTimeout(c.retryTimeout()),
		kgo.RequestRetries(c.requestRetries()),
	}
	if c.TLS.tlsOn() {
		tc, err := c.TLS.config()
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.DialTLSConfig(tc))
	}
	if c.SASL.Mechanism != "" {
		m, err := c.SASL.mechanism()
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.SASL(m))
	}
	return opts, nil
}

func (c Config) validate() error {
	if len(c.Brokers) == 0 {
		return ErrNoBrokers
	}
	for _, b := range c.Brokers {
		host, port, err := net.SplitHostPort(b)
		if err != nil || host == "" {
			return fmt.Errorf("%w: broker %q is not host:port (check --brokers)", ErrInvalidConfig, b)
		}
		if p, err := strconv.ParseUint(port, 10, 16); err != nil || p == 0 {
			return fmt.Errorf("%w: broker %q has an invalid port (check --brokers)", ErrInvalidConfig, b)
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"dial timeout", c.DialTimeout}, {"request timeout", c.RequestTimeout}, {"retry timeout", c.RetryTimeout}} {
		if d.v < 0 {
			return fmt.Errorf("%w: negative %s %v", ErrInvalidConfig, d.name, d.v)
		}
	}
	if c.RequestTimeout != 0 && c.RequestTimeout < 100*time.Millisecond {
		return fmt.Errorf("%w: request timeout %v is below 100ms", ErrInvalidConfig, c.RequestTimeout)
	}
	if c.RequestRetries < 0 {
		return fmt.Errorf("%w: negative request retries %d", ErrInvalidConfig, c.RequestRetries)
	}
	t := c.TLS
	if (t.CAFile != "") && (t.CAPEM != "") {
		return fmt.Errorf("%w: set only one of --tls-ca and inline CA certificates", ErrInvalidConfig)
	}
	if (t.CertFile != "" || t.KeyFile != "") && (t.CertPEM != "" || t.KeyPEM != "") {
		return fmt.Errorf("%w: set only one of --tls-cert/--tls-key and inline keystore certificates", ErrInvalidConfig)
	}
	if t.Truststore.File != "" && (t.CAFile != "" || t.CAPEM != "") {
		return fmt.Errorf("%w: set only one of --tls-ca and ssl.truststore.location", ErrInvalidConfig)
	}
	if t.Keystore.File != "" && (t.CertFile != "" || t.CertPEM != "") {
		return fmt.Errorf("%w: set only one of --tls-cert/--tls-key and ssl.keystore.location", ErrInvalidConfig)
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		return fmt.Errorf("%w: --tls-cert and --tls-key go together", ErrInvalidConfig)
	}
	if (t.CertPEM == "") != (t.KeyPEM == "") {
		return fmt.Errorf("%w: an inline client certificate needs its key and the other way round", ErrInvalidConfig)
	}
	return c.SASL.validate()
}

func (s SASL) validate() error {
	if s.Mechanism == "" {
		if s.Username != "" || s.Password != "" || s.PasswordFile != "" || s.Token != "" || s.TokenFile != "" {
			return fmt.Errorf("%w: SASL credentials given without --sasl-mechanism (one of %s)", ErrInvalidConfig, strings.Join(Mechanisms, ", "))
		}
		return nil
	}
	switch m := strings.ToUpper(strings.TrimSpace(s.Mechanism)); m {
	case MechanismPlain, MechanismScramSHA256, MechanismScramSHA512:
		if s.Username == "" {
			return fmt.Errorf("%w: SASL %s needs --sasl-username", ErrInvalidConfig, m)
		}
		switch {
		case s.Password != "" && s.PasswordFile != "":
			return fmt.Errorf("%w: set only one of --sasl-password and --sasl-password-file", ErrInvalidConfig)
		case s.Password == "" && s.PasswordFile == "":
			return fmt.Errorf("%w: SASL %s needs --sasl-password or --sasl-password-file", ErrInvalidConfig, m)
		}
		if s.PasswordFile != "" {
			if _, err := readSecretFile(s.PasswordFile, "--sasl-password-file"); err != nil {
				return err
			}
		}
	case MechanismOAuthBearer:
		switch {
		case s.Token != "" && s.TokenFile != "":
			return fmt.Errorf("%w: set only one of --sasl-oauth-token and --sasl-oauth-token-file", ErrInvalidConfig)
		case s.Token == "" && s.TokenFile == "":
			return fmt.Errorf("%w: SASL OAUTHBEARER needs --sasl-oauth-token or --sasl-oauth-token-file", ErrInvalidConfig)
		}
		if s.TokenFile != "" {
			if _, err := readSecretFile(s.TokenFile, "--sasl-oauth-token-file"); err != nil {
				return err
			}
		}
	case MechanismAWSMSKIAM:
		if _, err := awsAuthFromEnv(); err != nil {
			return err
		}
	case "GSSAPI":
		return fmt.Errorf("%w: SASL GSSAPI (Kerberos) is not supported; use one of %s", ErrInvalidConfig, strings.Join(Mechanisms, ", "))
	default:
		return fmt.Errorf("%w: unknown SASL mechanism %q; use one of %s", ErrInvalidConfig, s.Mechanism, strings.Join(Mechanisms, ", "))
	}
	return nil
}

// readSecretFile reads a password or token file and drops its trailing line
// ending. Its errors name the file and the flag, never the content.
func readSecretFile(path, flag string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read %s %s: %w", flag, path, err)
	}
	s := strings.TrimRight(string(b), "\r\n")
	if s == "" {
		return "", fmt.Errorf("%w: %s %s is empty", ErrInvalidConfig, flag, path)
	}
	return s, nil
}

func (s SASL) password() (string, error) {
	if s.PasswordFile != "" {
		return readSecretFile(s.PasswordFile, "--sasl-password-file")
	}
	return string(s.Password), nil
}

func (s SASL) token() (string, error) {
	if s.TokenFile != "" {
		return readSecretFile(s.TokenFile, "--sasl-oauth-token-file")
	}
	return string(s.Token), nil
}

func awsAuthFromEnv() (aws.Auth, error) {
	a := aws.Auth{
		AccessKey:    os.Getenv(EnvAWSAccessKeyID),
		SecretKey:    os.Getenv(EnvAWSSecretAccessKey),
		SessionToken: os.Getenv(EnvAWSSessionToken),
		UserAgent:    DefaultClientID,
	}
	if a.AccessKey == "" || a.SecretKey == "" {
		return aws.Auth{}, fmt.Errorf("%w: SASL AWS_MSK_IAM needs %s and %s (and %s for temporary credentials) in the environment",
			ErrInvalidConfig, EnvAWSAccessKeyID, EnvAWSSecretAccessKey, EnvAWSSessionToken)
	}
	return a, nil
}

// mechanism returns the franz-go mechanism; s is valid.
func (s SASL) mechanism() (sasl.Mechanism, error) {
	switch strings.ToUpper(strings.TrimSpace(s.Mechanism)) {
	case MechanismPlain:
		return plain.Plain(func(context.Context) (plain.Auth, error) {
			p, err := s.password()
			return plain.Auth{User: s.Username, Pass: p}, err
		}), nil
	case MechanismScramSHA256:
		return scram.Sha256(func(context.Context) (scram.Auth, error) {
			p, err := s.password()
			return scram.Auth{User: s.Username, Pass: p, IsToken: s.ScramToken}, err
		}), nil
	case MechanismScramSHA512:
		return scram.Sha512(func(context.Context) (scram.Auth, error) {
			p, err := s.password()
			return scram.Auth{User: s.Username, Pass: p, IsToken: s.ScramToken}, err
		}), nil
	case MechanismOAuthBearer:
		return oauth.Oauth(func(context.Context) (oauth.Auth, error) {
			t, err := s.token()
			return oauth.Auth{Token: t}, err
		}), nil
	case MechanismAWSMSKIAM:
		return aws.ManagedStreamingIAM(func(context.Context) (aws.Auth, error) {
			return awsAuthFromEnv()
		}), nil
	}
	return nil, fmt.Errorf("%w: unknown SASL mechanism %q", ErrInvalidConfig, s.Mechanism)
}

// config builds the crypto/tls configuration.
func (t TLS) config() (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName}
	if t.CAFile != "" || t.CAPEM != "" {
		pem, src := []byte(t.CAPEM), "inline CA certificates"
		if t.CAFile != "" {
			b, err := os.ReadFile(t.CAFile)
			if err != nil {
				return nil, fmt.Errorf("read --tls-ca %s: %w", t.CAFile, err)
			}
			pem, src = b, "--tls-ca "+t.CAFile
		}
		if !isPEM(pem) {
			return nil, fmt.Errorf("%w: %s is not PEM; %s", ErrNotPEM, src, convertTruststoreHelp)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: %s holds no PEM certificate", ErrInvalidConfig, src)
		}
		tc.RootCAs = pool
	}
	if t.Truststore.File != "" {
		ts := t.Truststore
		ts.prop = "ssl.truststore"
		pool, err := ts.certPool()
		if err != nil {
			return nil, err
		}
		tc.RootCAs = pool
	}
	if t.Keystore.File != "" {
		ks := t.Keystore
		ks.prop = "ssl.keystore"
		cert, err := ks.certificate()
		if err != nil {
			return nil, err
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	if t.CertFile != "" || t.CertPEM != "" {
		certPEM, keyPEM, src := []byte(t.CertPEM), []byte(t.KeyPEM), "inline keystore"
		if t.CertFile != "" {
			var err error
			if certPEM, err = os.ReadFile(t.CertFile); err != nil {
				return nil, fmt.Errorf("read --tls-cert %s: %w", t.CertFile, err)
			}
			if keyPEM, err = os.ReadFile(t.KeyFile); err != nil {
				return nil, fmt.Errorf("read --tls-key %s: %w", t.KeyFile, err)
			}
			src = "--tls-cert " + t.CertFile + " / --tls-key " + t.KeyFile
		}
		if !isPEM(certPEM) || !isPEM(keyPEM) {
			return nil, fmt.Errorf("%w: %s is not PEM; %s", ErrNotPEM, src, convertKeystoreHelp)
		}
		if encryptedPEMKey(keyPEM) {
			return nil, fmt.Errorf("%w: the private key of %s; %s", ErrEncryptedKey, src, decryptKeyHelp)
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			// crypto/tls errors describe the PEM structure, not the key.
			return nil, fmt.Errorf("load client certificate %s: %w", src, err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	switch {
	case t.InsecureSkipVerify:
		tc.InsecureSkipVerify = true
	case t.SkipHostnameVerification:
		// Verify the chain as crypto/tls would, minus the name.
		tc.InsecureSkipVerify = true
		roots := tc.RootCAs
		tc.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("tls: broker sent no certificate")
			}
			inter := x509.NewCertPool()
			for _, c := range cs.PeerCertificates[1:] {
				inter.AddCert(c)
			}
			_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
			if err != nil {
				return &tls.CertificateVerificationError{UnverifiedCertificates: cs.PeerCertificates, Err: err}
			}
			return nil
		}
	}
	return tc, nil
}

func isPEM(b []byte) bool {
	blk, _ := pem.Decode(b)
	return blk != nil
}

// encryptedPEMKey reports whether the first private key block in b is
// encrypted, as PKCS#8 "ENCRYPTED PRIVATE KEY" or legacy Proc-Type.
func encryptedPEMKey(b []byte) bool {
	for {
		var blk *pem.Block
		if blk, b = pem.Decode(b); blk == nil {
			return false
		}
		if blk.Type == "ENCRYPTED PRIVATE KEY" {
			return true
		}
		if strings.HasSuffix(blk.Type, "PRIVATE KEY") {
			return strings.Contains(blk.Headers["Proc-Type"], "ENCRYPTED")
		}
	}
}

// Help appended to errors about key stores.
const (
	convertTruststoreHelp = "--tls-ca takes PEM (a worker .properties may name a JKS or PKCS12 ssl.truststore.location with its password); convert a JKS or PKCS12 truststore with " +
		"`keytool -importkeystore -srckeystore truststore.jks -destkeystore truststore.p12 -deststoretype PKCS12` and " +
		"`openssl pkcs12 -in truststore.p12 -nokeys -out ca.pem` (add -legacy for old PKCS12 files), then pass --tls-ca ca.pem " +
		"or set ssl.truststore.type=PEM and ssl.truststore.location=ca.pem"
	convertKeystoreHelp = "--tls-cert and --tls-key take PEM (a worker .properties may name a JKS or PKCS12 ssl.keystore.location with its passwords); convert a JKS or PKCS12 keystore with " +
		"`keytool -importkeystore -srckeystore keystore.jks -destkeystore keystore.p12 -deststoretype PKCS12` and " +
		"`openssl pkcs12 -in keystore.p12 -nodes -out keystore.pem` (add -legacy for old PKCS12 files; chmod 600 the result), " +
		"then pass --tls-cert keystore.pem --tls-key keystore.pem or set ssl.keystore.type=PEM and ssl.keystore.location=keystore.pem"
	decryptKeyHelp = "offsetkeeper reads unencrypted keys only; decrypt it with `openssl pkey -in keystore.pem -out key.pem` " +
		"(it asks for ssl.key.password), chmod 600 key.pem, and pass --tls-key key.pem"
)

// Redacted returns c in one line for logs and --help output, with every secret
// shown as "[redacted]" and empty fields left out.
func (c Config) Redacted() string {
	var b strings.Builder
	fmt.Fprintf(&b, "brokers=%s client_id=%s", strings.Join(c.Brokers, ","), c.clientID())
	if c.TLS.tlsOn() {
		b.WriteString(" tls=on")
		for _, kv := range [][2]string{
			{"tls_ca", c.TLS.CAFile}, {"tls_ca_pem", nonEmpty(c.TLS.CAPEM, "inline")},
			{"tls_cert", c.TLS.CertFile}, {"tls_key", c.TLS.KeyFile},
			{"tls_cert_pem", nonEmpty(c.TLS.CertPEM, "inline")}, {"tls_key_pem", c.TLS.KeyPEM.String()},
			{"ssl_truststore", c.TLS.Truststore.File}, {"ssl_keystore", c.TLS.Keystore.File},
			{"tls_server_name", c.TLS.ServerName},
			{"tls_skip_hostname_verification", nonEmpty(boolStr(c.TLS.SkipHostnameVerification), "true")},
			{"tls_insecure_skip_verify", nonEmpty(boolStr(c.TLS.InsecureSkipVerify), "true")},
		} {
			if kv[1] != "" {
				fmt.Fprintf(&b, " %s=%s", kv[0], kv[1])
			}
		}
	} else {
		b.WriteString(" tls=off")
	}
	if c.SASL.Mechanism == "" {
		b.WriteString(" sasl=none")
	} else {
		fmt.Fprintf(&b, " sasl=%s", strings.ToUpper(c.SASL.Mechanism))
		for _, kv := range [][2]string{
			{"sasl_username", c.SASL.Username}, {"sasl_password", c.SASL.Password.String()},
			{"sasl_password_file", c.SASL.PasswordFile},
			{"sasl_scram_token", nonEmpty(boolStr(c.SASL.ScramToken), "true")},
			{"sasl_oauth_token", c.SASL.Token.String()}, {"sasl_oauth_token_file", c.SASL.TokenFile},
		} {
			if kv[1] != "" {
				fmt.Fprintf(&b, " %s=%s", kv[0], kv[1])
			}
		}
	}
	fmt.Fprintf(&b, " dial_timeout=%v request_timeout=%v retry_timeout=%v request_retries=%d",
		c.dialTimeout(), c.requestTimeout(), c.retryTimeout(), c.requestRetries())
	return b.String()
}

func nonEmpty(s, show string) string {
	if s == "" {
		return ""
	}
	return show
}

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return ""
}

// String is Redacted.
func (c Config) String() string { return c.Redacted() }

// GoString is Redacted, so that %#v does not print secrets either.
func (c Config) GoString() string { return "kafkaconf.Config{" + c.Redacted() + "}" }

// LogValue is Redacted as one string attribute, for log/slog.
func (c Config) LogValue() slog.Value { return slog.StringValue(c.Redacted()) }

// Merge returns c with every field that is set in over replacing c's:
// non-empty strings and slices, non-zero durations and counts, and true
// booleans (so over cannot turn off what c turned on). Setting one of a pair
// of alternatives in over drops the other from c: Password and PasswordFile,
// Token and TokenFile, CAFile and CAPEM, CertFile/KeyFile and CertPEM/KeyPEM.
// It is how flags apply over a worker file: FromWorkerProperties(...).Merge(flags).
func (c Config) Merge(over Config) Config {
	out := c
	out.Brokers = slices.Clone(cmpOrSlice(over.Brokers, c.Brokers))
	out.ClientID = cmpOr(over.ClientID, c.ClientID)
	out.DialTimeout = cmpOr(over.DialTimeout, c.DialTimeout)
	out.RequestTimeout = cmpOr(over.RequestTimeout, c.RequestTimeout)
	out.RetryTimeout = cmpOr(over.RetryTimeout, c.RetryTimeout)
	out.RequestRetries = cmpOr(over.RequestRetries, c.RequestRetries)
	if over.StillTrying != nil {
		out.StillTrying = over.StillTrying
	}
	out.StillTryingAfter = cmpOr(over.StillTryingAfter, c.StillTryingAfter)

	t, o := &out.TLS, over.TLS
	t.Enabled = t.Enabled || o.Enabled
	if o.CAFile != "" || o.CAPEM != "" || o.Truststore.File != "" {
		t.CAFile, t.CAPEM, t.Truststore = o.CAFile, o.CAPEM, o.Truststore
	}
	if o.CertFile != "" || o.KeyFile != "" || o.CertPEM != "" || o.KeyPEM != "" || o.Keystore.File != "" {
		t.CertFile, t.KeyFile, t.CertPEM, t.KeyPEM, t.Keystore = o.CertFile, o.KeyFile, o.CertPEM, o.KeyPEM, o.Keystore
	}
	t.ServerName = cmpOr(o.ServerName, t.ServerName)
	t.SkipHostnameVerification = t.SkipHostnameVerification || o.SkipHostnameVerification
	t.InsecureSkipVerify = t.InsecureSkipVerify || o.InsecureSkipVerify

	s, so := &out.SASL, over.SASL
	s.Mechanism = cmpOr(so.Mechanism, s.Mechanism)
	s.Username = cmpOr(so.Username, s.Username)
	if so.Password != "" || so.PasswordFile != "" {
		s.Password, s.PasswordFile = so.Password, so.PasswordFile
	}
	s.ScramToken = s.ScramToken || so.ScramToken
	if so.Token != "" || so.TokenFile != "" {
		s.Token, s.TokenFile = so.Token, so.TokenFile
	}
	return out
}

func cmpOrSlice[T any](v, def []T) []T {
	if len(v) == 0 {
		return def
	}
	return v
}

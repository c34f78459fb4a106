package kafkaconf

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Errors of this package; test with errors.Is. DescribeError returns errors
// that match the last five as well as the error they describe.
var (
	// ErrNoBrokers: Config.Brokers is empty.
	ErrNoBrokers = errors.New("no Kafka brokers configured: set --brokers (OFFSETKEEPER_BROKERS) or bootstrap.servers in the worker properties")
	// ErrInvalidConfig: a Config or worker properties value is invalid or
	// incomplete; the message says which.
	ErrInvalidConfig = errors.New("invalid Kafka client configuration")
	// ErrNotPEM: a truststore or keystore is not PEM (JKS or PKCS12, say);
	// the message says how to convert it.
	ErrNotPEM = errors.New("key store is not PEM")
	// ErrEncryptedKey: the client private key is encrypted; the message says
	// how to decrypt it.
	ErrEncryptedKey = errors.New("client private key is encrypted")
	// ErrMalformedProperties: a .properties file has a malformed \uXXXX escape.
	ErrMalformedProperties = errors.New("malformed \\uxxxx encoding")

	// ErrUnreachable: no broker could be dialed, or none answered in time.
	ErrUnreachable = errors.New("cannot reach the Kafka brokers")
	// ErrTLS: the TLS handshake failed or a broker certificate was not
	// trusted.
	ErrTLS = errors.New("TLS with the Kafka brokers failed")
	// ErrSASL: SASL authentication failed.
	ErrSASL = errors.New("SASL authentication failed")
	// ErrProtocolMismatch: a broker closed the connection at once, which
	// usually means a TLS or SASL setting does not match its listener.
	ErrProtocolMismatch = errors.New("broker closed the connection")
	// ErrNotAuthorized: the principal lacks an ACL; see ACLError.
	ErrNotAuthorized = errors.New("not authorized by the Kafka ACLs")
)

// ACLError is what DescribeError makes of a Kafka authorization error: the
// resource type the principal lacks an ACL on and the operations offsetkeeper
// needs on it. It matches ErrNotAuthorized and the kerr error it came from.
type ACLError struct {
	// ResourceType is TOPIC, GROUP, CLUSTER or TRANSACTIONAL_ID.
	ResourceType string
	// Operations says which operations each command needs on ResourceType.
	Operations string
	// Err is the error described.
	Err error
}

func (e *ACLError) Error() string {
	return fmt.Sprintf("not authorized: the Kafka principal needs an ALLOW ACL on resource type %s: %s (see docs/security.md): %v",
		e.ResourceType, e.Operations, e.Err)
}

// Unwrap returns ErrNotAuthorized and Err.
func (e *ACLError) Unwrap() []error { return []error{ErrNotAuthorized, e.Err} }

// aclNeeds maps each authorization error to the resource type and operations
// of the ACL table in docs/security.md.
var aclNeeds = []struct {
	err          *kerr.Error
	resourceType string
	operations   string
}{
	{kerr.TopicAuthorizationFailed, "TOPIC",
		"DESCRIBE and READ on the Connect offsets and config topics and DESCRIBE on the sink connectors' topics (snapshot); " +
			"DESCRIBE and READ on the leader topic __offsetkeeper_leader (daemon); " +
			"WRITE and DESCRIBE_CONFIGS on the offsets topic and READ on the sink connectors' topics (restore)"},
	{kerr.GroupAuthorizationFailed, "GROUP",
		"DESCRIBE on the sink connector groups, prefix connect- (snapshot); READ and DESCRIBE on prefix offsetkeeper-leader- (daemon); " +
			"READ, and DELETE to delete offsets, on the sink connector groups (restore)"},
	{kerr.ClusterAuthorizationFailed, "CLUSTER",
		"DESCRIBE (list all groups, describe the cluster); IDEMPOTENT_WRITE for restore on Kafka before 3.0"},
	{kerr.TransactionalIDAuthorizationFailed, "TRANSACTIONAL_ID",
		"WRITE and DESCRIBE on prefix offsetkeeper-restore- (restore)"},
}

// describedError adds a hint naming what to check to an error.
type describedError struct {
	kind error // one of the sentinels
	hint string
	err  error
}

func (e *describedError) Error() string   { return e.hint + ": " + e.err.Error() }
func (e *describedError) Unwrap() []error { return []error{e.kind, e.err} }

func describe(kind error, err error, format string, args ...any) error {
	return &describedError{kind: kind, hint: fmt.Sprintf(format, args...), err: err}
}

// DescribeError returns err with what to do about it, for errors from a
// franz-go client built from Config.Opts, or from kadm over it:
//
//   - SASL authentication failures: check --sasl-username and --sasl-password;
//   - untrusted or wrongly named broker certificates: check --tls-ca or
//     --tls-server-name; a client certificate refused: check --tls-cert;
//   - topic, group, cluster and transactional ID authorization failures: an
//     *ACLError naming the resource type and the operations needed;
//   - dial errors and timeouts: the broker addresses, and check --brokers
//     (but a timeout reached while retrying a Kafka error a broker answered
//     is returned as it is: that error says what failed).
//
// The result matches err and one of ErrSASL, ErrTLS, ErrNotAuthorized,
// ErrUnreachable and ErrProtocolMismatch with errors.Is. Other errors, nil,
// and errors already described come back unchanged. It never adds secrets:
// it only reads err.
func DescribeError(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*describedError](err); ok {
		return err
	}
	if _, ok := errors.AsType[*ACLError](err); ok {
		return err
	}
	switch {
	case errors.Is(err, kerr.SaslAuthenticationFailed):
		return describe(ErrSASL, err, "SASL authentication failed: check --sasl-username and --sasl-password (or --sasl-password-file) and --sasl-mechanism")
	case errors.Is(err, kerr.UnsupportedSaslMechanism), errors.Is(err, kerr.IllegalSaslState):
		return describe(ErrSASL, err, "the broker does not accept this SASL mechanism: check --sasl-mechanism against the listener's sasl.enabled.mechanisms")
	}
	for _, n := range aclNeeds {
		if errors.Is(err, n.err) {
			return &ACLError{ResourceType: n.resourceType, Operations: n.operations, Err: err}
		}
	}
	if d := describeTLS(err); d != nil {
		return d
	}
	if _, ok := errors.AsType[*kgo.ErrFirstReadEOF](err); ok {
		return describe(ErrProtocolMismatch, err, "check --tls and --sasl-mechanism against the listener on the port in --brokers")
	}
	if dnsErr, ok := errors.AsType[*net.DNSError](err); ok {
		return describe(ErrUnreachable, err, "cannot resolve Kafka broker host %q: check --brokers", dnsErr.Name)
	}
	if opErr, ok := errors.AsType[*net.OpError](err); ok && opErr.Op == "dial" {
		if isTimeout(err) {
			return describe(ErrUnreachable, err, "Kafka broker %s did not accept a connection in time: check --brokers and that the address is reachable from here", opAddr(opErr))
		}
		return describe(ErrUnreachable, err, "cannot reach Kafka broker %s: check --brokers", opAddr(opErr))
	}
	if isTimeout(err) {
		if _, ok := errors.AsType[*kerr.Error](err); ok {
			// A broker did answer, with an error, until time ran out
			// (a retry gave up): that error says what failed, and
			// "did not answer" would send the operator to --brokers.
			return err
		}
		if opErr, ok := errors.AsType[*net.OpError](err); ok && opErr.Addr != nil {
			return describe(ErrUnreachable, err, "Kafka broker %s did not answer in time: check --brokers and that the port is a Kafka listener", opAddr(opErr))
		}
		return describe(ErrUnreachable, err, "the Kafka brokers did not answer in time: check --brokers and that the port is a Kafka listener")
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return describe(ErrProtocolMismatch, err, "the broker closed the connection: check --tls and --sasl-mechanism against the listener on the port in --brokers, and the SASL credentials")
	}
	return err
}

func opAddr(e *net.OpError) string {
	if e.Addr != nil {
		return e.Addr.String()
	}
	return "(unknown address)"
}

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	ne, ok := errors.AsType[net.Error](err)
	return ok && ne.Timeout()
}

func describeTLS(err error) error {
	if _, ok := errors.AsType[x509.UnknownAuthorityError](err); ok {
		return describe(ErrTLS, err, "the broker's TLS certificate is signed by an unknown authority: check --tls-ca (ssl.truststore.location)")
	}
	if _, ok := errors.AsType[x509.HostnameError](err); ok {
		return describe(ErrTLS, err, "the broker's TLS certificate does not name the host dialed: check --brokers or --tls-server-name")
	}
	if ce, ok := errors.AsType[x509.CertificateInvalidError](err); ok {
		return describe(ErrTLS, err, "the broker's TLS certificate is not valid (%s): check the broker's certificate and --tls-ca", certInvalidReason(ce.Reason))
	}
	if _, ok := errors.AsType[tls.RecordHeaderError](err); ok {
		return describe(ErrTLS, err, "the broker did not answer in TLS: check --tls and the port in --brokers (is it a plaintext listener?)")
	}
	if _, ok := errors.AsType[*tls.CertificateVerificationError](err); ok {
		return describe(ErrTLS, err, "the broker's TLS certificate was not accepted: check --tls-ca and --tls-server-name")
	}
	if opErr, ok := errors.AsType[*net.OpError](err); ok && opErr.Op == "remote error" {
		msg := opErr.Err.Error()
		if strings.Contains(msg, "certificate") || strings.Contains(msg, "unknown ca") {
			return describe(ErrTLS, err, "the broker refused the client certificate: check --tls-cert and --tls-key, and that the broker trusts their CA")
		}
		return describe(ErrTLS, err, "the broker ended the TLS handshake: check --tls settings against the listener")
	}
	return nil
}

func certInvalidReason(r x509.InvalidReason) string {
	switch r {
	case x509.Expired:
		return "expired or not yet valid"
	case x509.NotAuthorizedToSign:
		return "signed by a certificate that is not a CA"
	case x509.IncompatibleUsage:
		return "not for server authentication"
	}
	return "invalid"
}

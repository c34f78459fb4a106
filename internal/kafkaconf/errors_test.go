package kafkaconf

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestDescribeErrorKafkaErrors covers what kfake does not do: brokers that
// answer bad credentials with SASL_AUTHENTICATION_FAILED instead of closing,
// cluster and transactional ID ACLs, and DNS failures.
func TestDescribeErrorKafkaErrors(t *testing.T) {
	for _, tt := range []struct {
		err  error
		kind error
		want []string
	}{
		{fmt.Errorf("%w: Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512", kerr.SaslAuthenticationFailed),
			ErrSASL, []string{"--sasl-username", "--sasl-password", "invalid credentials"}},
		{kerr.ClusterAuthorizationFailed, ErrNotAuthorized, []string{"CLUSTER", "DESCRIBE"}},
		{kerr.TransactionalIDAuthorizationFailed, ErrNotAuthorized, []string{"TRANSACTIONAL_ID", "WRITE", "offsetkeeper-restore-"}},
		{kerr.GroupAuthorizationFailed, ErrNotAuthorized, []string{"GROUP", "DESCRIBE", "READ"}},
		{kerr.TopicAuthorizationFailed, ErrNotAuthorized, []string{"TOPIC", "DESCRIBE", "WRITE"}},
		{&net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Name: "kafka.invalid", Err: "no such host", IsNotFound: true}},
			ErrUnreachable, []string{"kafka.invalid", "--brokers"}},
	} {
		got := DescribeError(tt.err)
		if !errors.Is(got, tt.kind) || !errors.Is(got, tt.err) {
			t.Errorf("DescribeError(%v) = %v: does not match %v and the original", tt.err, got, tt.kind)
		}
		for _, w := range tt.want {
			if !strings.Contains(got.Error(), w) {
				t.Errorf("DescribeError(%v) = %q: missing %q", tt.err, got, w)
			}
		}
		if again := DescribeError(fmt.Errorf("wrapped: %w", got)); again.Error() != "wrapped: "+got.Error() {
			t.Errorf("describing twice: %q", again)
		}
	}
	if DescribeError(nil) != nil {
		t.Error("DescribeError(nil) != nil")
	}
	plain := errors.New("something else")
	if DescribeError(plain) != plain {
		t.Error("DescribeError changed an unknown error")
	}
}

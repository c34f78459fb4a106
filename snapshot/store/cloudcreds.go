package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store/backend"
)

// openCloudBucket opens the bucket of a store URL that is not a local
// directory, with the backend registered for its scheme (see
// snapshot/store/backend; internal/storedrivers registers s3://, gs://
// and azblob://): for s3:// and gs:// it first finds the credentials the
// cloud SDK would use, so that a missing or broken credential is one error
// wrapping ErrNoCredentials that names what to set. A scheme no backend
// registered opens with blob.OpenBucket.
func openCloudBucket(ctx context.Context, storeURL string) (*blob.Bucket, error) {
	u, err := url.Parse(storeURL)
	if err != nil {
		return blob.OpenBucket(ctx, storeURL) // gocloud says what is wrong with it
	}
	if b, ok := backend.Lookup(u.Scheme); ok && b.Open != nil {
		return b.Open(ctx, u)
	}
	return blob.OpenBucket(ctx, storeURL)
}

// rootCause is backend.RootCause.
func rootCause(err error) string { return backend.RootCause(err) }

// bucketError is an error from a cloud bucket told in one short line; it
// unwraps to the SDK's error.
type bucketError struct {
	msg     string
	err     error
	missing bool // the bucket or container does not exist
}

func (e *bucketError) Error() string { return e.msg }

func (e *bucketError) Unwrap() error { return e.err }

func (e *bucketError) Is(target error) bool {
	return target == ErrStore || (e.missing && target == snapshot.ErrStoreNotFound)
}

// describeBucketError is (&Store{}).describe, for callers without a Store.
func describeBucketError(err error) error { return (&Store{}).describe(err) }

// describe tells a failed call to a cloud bucket in one or two lines: what
// the server said (its status and error code, not its XML or JSON body), or
// the connection that failed, and what to check for this backend. An
// object that is not there, a conditional write refused and a context that
// ended are returned as they are, for the callers to tell.
func (s *Store) describe(err error) error {
	if err == nil || s.dir != "" {
		return err
	}
	var (
		be *bucketError
		st *storeTimeout
		dp *driverPanic
	)
	if errors.As(err, &be) || errors.As(err, &st) || errors.As(err, &dp) {
		return err
	}
	help := s.help()
	status, code, msg := apiError(err)
	var (
		opErr  *net.OpError
		urlErr *url.Error
	)
	switch {
	case missingBucket(code, msg, status, gcerrors.Code(err)) || backend.BucketMissing(err):
		return &bucketError{err: err, missing: true, msg: fmt.Sprintf("store %s: the %s does not exist (%s): %s", s.name(), help.Bucket, summary(status, code, msg), help.Missing)}
	case gcerrors.Code(err) == gcerrors.NotFound || gcerrors.Code(err) == gcerrors.FailedPrecondition || gcerrors.Code(err) == gcerrors.Canceled:
		return err
	case gcerrors.Code(err) == gcerrors.PermissionDenied || status == 401 || status == 403:
		return &bucketError{err: err, msg: fmt.Sprintf("store %s refused the credentials (%s): %s", s.name(), summary(status, code, msg), help.Creds)}
	case errors.As(err, &opErr) && (opErr.Op == "dial" || opErr.Op == "read" || opErr.Op == "write"):
		return &bucketError{err: err, msg: fmt.Sprintf("cannot reach store %s (%s, after the SDK's retries): %s", s.name(), rootCause(opErr), help.Reach)}
	case status == 0 && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &urlErr)):
		return &bucketError{err: err, msg: fmt.Sprintf("cannot reach store %s (the connection broke: %s): %s", s.name(), rootCause(err), help.Reach)}
	case status != 0:
		return &bucketError{err: err, msg: fmt.Sprintf("store %s: %s", s.name(), summary(status, code, msg))}
	}
	return err
}

// bucketMissing is err, a NotFound where no object can be missing, told
// as the missing bucket it is.
func (s *Store) bucketMissing(err error) error {
	b := s.help()
	status, code, msg := apiError(err)
	return &bucketError{err: err, missing: true, msg: fmt.Sprintf("store %s: the %s does not exist (%s): %s", s.name(), b.Bucket, summary(status, code, msg), b.Missing)}
}

// help is what to check when a call to the Store's backend fails.
func (s *Store) help() backend.Help {
	scheme, _, _ := strings.Cut(s.where, "://")
	if b, ok := backend.Lookup(scheme); ok {
		return b.Help
	}
	return backend.Generic
}

// apiError returns what a cloud server answered: its HTTP status, error
// code and message, each cut to one line.
func apiError(err error) (status int, code, msg string) { return backend.Answer(err) }

func missingBucket(code, msg string, status int, c gcerrors.ErrorCode) bool {
	switch code {
	case "NoSuchBucket", "ContainerNotFound":
		return true
	}
	return (status == 404 || c == gcerrors.NotFound) && strings.Contains(strings.ToLower(msg), "bucket") && !strings.Contains(strings.ToLower(msg), "object")
}

func summary(status int, code, msg string) string {
	var parts []string
	if status != 0 {
		parts = append(parts, fmt.Sprintf("HTTP %d", status))
	}
	if code != "" {
		parts = append(parts, code)
	}
	if msg != "" {
		parts = append(parts, msg)
	}
	if len(parts) == 0 {
		return "no details"
	}
	return strings.Join(parts, " ")
}

// notFound reports whether err is an object that is not there (not a
// bucket that is not there).
func notFound(err error) bool {
	return gcerrors.Code(err) == gcerrors.NotFound && !errors.Is(err, snapshot.ErrStoreNotFound)
}

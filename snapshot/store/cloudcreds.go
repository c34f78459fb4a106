package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	gcaws "gocloud.dev/aws"
	"gocloud.dev/blob"
	"gocloud.dev/blob/gcsblob"
	"gocloud.dev/gcerrors"
	"gocloud.dev/gcp"
	"golang.org/x/oauth2/google"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// credentialsTimeout bounds the credential check OpenStore makes for s3://
// and gs:// stores: an instance metadata service that does not answer
// fails the open in this time rather than every request later.
const credentialsTimeout = 20 * time.Second

// openCloudBucket opens the bucket of a store URL that is not a local
// directory. For s3:// and gs:// it first finds the credentials the cloud
// SDK would use, so that a missing or broken credential is one error
// wrapping ErrNoCredentials that names what to set, instead of the SDKs'
// raw retries, fallbacks and printed warnings (gocloud's gs:// opener
// prints "Warning: unable to load GCP Default Credentials" on stdout).
func openCloudBucket(ctx context.Context, storeURL string) (*blob.Bucket, error) {
	u, err := url.Parse(storeURL)
	if err != nil {
		return blob.OpenBucket(ctx, storeURL) // gocloud says what is wrong with it
	}
	switch strings.ToLower(u.Scheme) {
	case "s3":
		if err := checkAWSCredentials(ctx, u); err != nil {
			return nil, err
		}
		// Every object's SHA-256 is checked on reading; the SDK's own
		// check of a response's checksum, on by default, cannot check a
		// multipart object and prints a warning on stderr for each.
		if q := u.Query(); !q.Has("response_checksum_validation") {
			q.Set("response_checksum_validation", "when_required")
			u.RawQuery = q.Encode()
		}
		return blob.OpenBucket(ctx, u.String())
	case gcsblob.Scheme:
		b, err := openGCS(ctx, u)
		if err == nil {
			failFastGCS(b)
		}
		return b, err
	}
	return blob.OpenBucket(ctx, storeURL)
}

// s3blobParams are the s3:// query parameters s3blob reads itself, before
// handing the rest to gocloud.dev/aws.
var s3blobParams = []string{"ssetype", "kmskeyid", "accelerate", "use_path_style", "s3ForcePathStyle", "disable_https"}

const awsCredentialsHelp = "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), or AWS_PROFILE " +
	"with a shared config file, or give the pod or instance an IAM role (IRSA: AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE; " +
	"EC2: an instance profile); for a public bucket add ?anonymous=true to --store"

// checkAWSCredentials resolves the credentials s3blob would use for u, as
// it configures the SDK from u's query.
func checkAWSCredentials(ctx context.Context, u *url.URL) error {
	q := u.Query()
	for _, k := range s3blobParams {
		q.Del(k)
	}
	cfg, err := gcaws.V2ConfigFromURLParams(ctx, q)
	if err != nil || cfg.Credentials == nil {
		return nil // s3blob reports a bad parameter itself
	}
	if anon, _ := strconv.ParseBool(q.Get("anonymous")); anon {
		return nil // unsigned requests: nothing to resolve (AnonymousCredentials refuses Retrieve)
	}
	cctx, cancel := context.WithTimeout(ctx, credentialsTimeout)
	defer cancel()
	if _, err := cfg.Credentials.Retrieve(cctx); err != nil {
		return fmt.Errorf("%w: AWS (environment, shared config, web identity, container and instance role tried): %s; %s",
			snapshot.ErrNoCredentials, rootCause(err), awsCredentialsHelp)
	}
	return nil
}

const gcpCredentialsHelp = "set GOOGLE_APPLICATION_CREDENTIALS to a service account key file, run " +
	"`gcloud auth application-default login`, or run with a service account (GKE: workload identity); " +
	"for a public bucket add ?anonymous=true to --store"

// openGCS opens a gs:// bucket with Application Default Credentials found
// here rather than by gocloud's default opener, which prints its failures.
// An emulator (STORAGE_EMULATOR_HOST) and anonymous URLs need none.
func openGCS(ctx context.Context, u *url.URL) (*blob.Bucket, error) {
	if os.Getenv("STORAGE_EMULATOR_HOST") != "" || os.Getenv("STORAGE_EMULATOR_HOST_GRPC") != "" {
		return blob.OpenBucket(ctx, u.String())
	}
	q := u.Query()
	if q.Get("anonymous") == "true" || q.Get("access_id") == "-" {
		return (&gcsblob.URLOpener{}).OpenBucketURL(ctx, u)
	}
	var (
		creds *google.Credentials
		err   error
	)
	if ud := q.Get("universe_domain"); ud != "" {
		creds, err = gcp.DefaultCredentialsWithParams(ctx, google.CredentialsParams{UniverseDomain: ud})
	} else {
		creds, err = gcp.DefaultCredentials(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: Google Cloud Application Default Credentials: %s; %s", snapshot.ErrNoCredentials, rootCause(err), gcpCredentialsHelp)
	}
	// A token now, so that a metadata server that does not answer, or a key
	// that is revoked, fails here once (the storage client retries it
	// until its context ends).
	tok := make(chan error, 1)
	go func() { _, err := creds.TokenSource.Token(); tok <- err }()
	select {
	case err = <-tok:
	case <-time.After(credentialsTimeout):
		err = fmt.Errorf("no token within %v", credentialsTimeout)
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("%w: Google Cloud access token: %s; check the service account: %s", snapshot.ErrNoCredentials, rootCause(err), gcpCredentialsHelp)
	}
	client, err := gcp.NewHTTPClient(gcp.DefaultTransport(), creds.TokenSource)
	if err != nil {
		return nil, err
	}
	opener := &gcsblob.URLOpener{Client: client, TokenSource: gcp.CredentialsTokenSource(creds)}
	if ud, err := creds.GetUniverseDomain(); err == nil && ud != "" {
		opener.Options.ClientOptions = append(opener.Options.ClientOptions, option.WithUniverseDomain(ud))
	}
	return opener.OpenBucketURL(ctx, u)
}

// rootCause returns the part of err a person can act on, cut to one short
// line: the file or network operation that failed ("open /path: no such
// file or directory", "dial tcp 169.254.169.254:80: connect: connection
// refused") if there is one, else the innermost error of err's chain.
func rootCause(err error) string {
	var pathErr *fs.PathError
	var opErr *net.OpError
	switch {
	case errors.As(err, &pathErr):
		err = pathErr
	case errors.As(err, &opErr):
		err = opErr
	default:
		for next := errors.Unwrap(err); next != nil; next = errors.Unwrap(err) {
			err = next
		}
	}
	msg := strings.Join(strings.Fields(err.Error()), " ")
	if len(msg) > 320 {
		msg = msg[:317] + "..."
	}
	return msg
}

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
	backend := s.backend()
	status, code, msg := apiError(err)
	var (
		opErr  *net.OpError
		urlErr *url.Error
	)
	switch {
	case missingBucket(code, msg, status, gcerrors.Code(err)) || errors.Is(err, storage.ErrBucketNotExist):
		return &bucketError{err: err, missing: true, msg: fmt.Sprintf("store %s: the %s does not exist (%s): %s", s.name(), backend.bucket, summary(status, code, msg), backend.missingHelp)}
	case gcerrors.Code(err) == gcerrors.NotFound || gcerrors.Code(err) == gcerrors.FailedPrecondition || gcerrors.Code(err) == gcerrors.Canceled:
		return err
	case gcerrors.Code(err) == gcerrors.PermissionDenied || status == 401 || status == 403:
		return &bucketError{err: err, msg: fmt.Sprintf("store %s refused the credentials (%s): %s", s.name(), summary(status, code, msg), backend.credsHelp)}
	case errors.As(err, &opErr) && (opErr.Op == "dial" || opErr.Op == "read" || opErr.Op == "write"):
		return &bucketError{err: err, msg: fmt.Sprintf("cannot reach store %s (%s, after the SDK's retries): %s", s.name(), rootCause(opErr), backend.reachHelp)}
	case status == 0 && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &urlErr)):
		return &bucketError{err: err, msg: fmt.Sprintf("cannot reach store %s (the connection broke: %s): %s", s.name(), rootCause(err), backend.reachHelp)}
	case status != 0:
		return &bucketError{err: err, msg: fmt.Sprintf("store %s: %s", s.name(), summary(status, code, msg))}
	}
	return err
}

// bucketMissing is err, a NotFound where no object can be missing, told
// as the missing bucket it is.
func (s *Store) bucketMissing(err error) error {
	b := s.backend()
	status, code, msg := apiError(err)
	return &bucketError{err: err, missing: true, msg: fmt.Sprintf("store %s: the %s does not exist (%s): %s", s.name(), b.bucket, summary(status, code, msg), b.missingHelp)}
}

// backendHelp is what to check, per backend.
type backendHelp struct {
	bucket                            string // what the backend calls a bucket
	credsHelp, missingHelp, reachHelp string
}

func (s *Store) backend() backendHelp {
	scheme, _, _ := strings.Cut(s.where, "://")
	switch strings.ToLower(scheme) {
	case "s3":
		return backendHelp{
			bucket:      "bucket",
			credsHelp:   "check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE, the IAM role) and region= in --store",
			missingHelp: "check the bucket name in --store (s3://BUCKET/...) and region=; an S3-compatible server (MinIO, SeaweedFS, Ceph) needs endpoint=...&use_path_style=true",
			reachHelp:   "check endpoint= and region= in --store (an S3-compatible server also needs use_path_style=true), and the network or proxy",
		}
	case "azblob":
		return backendHelp{
			bucket:      "container",
			credsHelp:   "check AZURE_STORAGE_ACCOUNT with AZURE_STORAGE_KEY or AZURE_STORAGE_SAS_TOKEN (or the managed identity's role on the container)",
			missingHelp: "check the container name in --store (azblob://CONTAINER/...) and AZURE_STORAGE_ACCOUNT; create the container first",
			reachHelp:   "check AZURE_STORAGE_ACCOUNT and domain= / protocol= in --store (a local emulator such as Azurite needs protocol=http&localemu=true), and the network or proxy",
		}
	case "gs":
		return backendHelp{
			bucket:      "bucket",
			credsHelp:   "check the service account and its role on the bucket: " + gcpCredentialsHelp,
			missingHelp: "check the bucket name in --store (gs://BUCKET/...)",
			reachHelp:   "check the network or proxy to storage.googleapis.com (or STORAGE_EMULATOR_HOST for an emulator)",
		}
	}
	return backendHelp{bucket: "bucket", credsHelp: "check the store's credentials", missingHelp: "check --store / OFFSETKEEPER_STORE", reachHelp: "check --store and the network"}
}

// apiError returns what a cloud server answered: its HTTP status, error
// code and message, each cut to one line.
func apiError(err error) (status int, code, msg string) {
	var (
		az   *azcore.ResponseError
		api  smithy.APIError
		rsp  *smithyhttp.ResponseError
		gapi *googleapi.Error
	)
	if errors.As(err, &az) {
		return az.StatusCode, az.ErrorCode, ""
	}
	if errors.As(err, &rsp) {
		status = rsp.HTTPStatusCode()
	}
	if errors.As(err, &api) {
		return status, api.ErrorCode(), oneLine(api.ErrorMessage())
	}
	if errors.As(err, &gapi) {
		return gapi.Code, "", oneLine(gapi.Message)
	}
	return status, "", ""
}

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

func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 200 {
		s = s[:197] + "..."
	}
	return s
}

// notFound reports whether err is an object that is not there (not a
// bucket that is not there).
func notFound(err error) bool {
	return gcerrors.Code(err) == gcerrors.NotFound && !errors.Is(err, snapshot.ErrStoreNotFound)
}

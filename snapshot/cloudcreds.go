package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	gcaws "gocloud.dev/aws"
	"gocloud.dev/blob"
	"gocloud.dev/blob/gcsblob"
	"gocloud.dev/gcp"
	"golang.org/x/oauth2/google"
	"google.golang.org/api/option"
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
	case gcsblob.Scheme:
		return openGCS(ctx, u)
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
	cctx, cancel := context.WithTimeout(ctx, credentialsTimeout)
	defer cancel()
	if _, err := cfg.Credentials.Retrieve(cctx); err != nil {
		return fmt.Errorf("%w: AWS (environment, shared config, web identity, container and instance role tried): %s; %s",
			ErrNoCredentials, rootCause(err), awsCredentialsHelp)
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
		return nil, fmt.Errorf("%w: Google Cloud Application Default Credentials: %s; %s", ErrNoCredentials, rootCause(err), gcpCredentialsHelp)
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
		return nil, fmt.Errorf("%w: Google Cloud access token: %s; check the service account: %s", ErrNoCredentials, rootCause(err), gcpCredentialsHelp)
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
	msg string
	err error
}

func (e *bucketError) Error() string { return e.msg }

func (e *bucketError) Unwrap() error { return e.err }

// describeBucketError shortens what a cloud SDK says after its retries
// when the store's endpoint cannot be reached ("operation error S3:
// ListObjectsV2, exceeded maximum number of attempts, 3, https response
// error StatusCode: 0, ..., dial tcp ...") to the failed connection and
// what to check. Other errors are returned as they are.
func describeBucketError(err error) error {
	var opErr *net.OpError
	if err == nil || !errors.As(err, &opErr) || opErr.Op != "dial" {
		return err
	}
	return &bucketError{err: err, msg: fmt.Sprintf("cannot reach the store (%s, after the SDK's retries): check the bucket's region or endpoint= in --store, and the network or proxy", rootCause(opErr))}
}

// Package storedrivers links the cloud backends of the snapshot store and the
// KMS keys of its encryption: the gocloud drivers for s3://, gs:// and
// azblob:// buckets and for awskms://, gcpkms:// and azurekeyvault://
// keys, and, for each bucket backend, the check of its credentials before
// the first call and the reading of its SDK's errors (see
// snapshot/store/backend, where they register).
//
// Import it for its side effects, in a main package only:
//
//	import _ "github.com/offsetkeeper/offsetkeeper/internal/storedrivers"
//
// The library packages never import it, so they link no cloud SDK; their
// tests that open cloud stores import it too.
package storedrivers

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"time"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	gcaws "gocloud.dev/aws"
	"gocloud.dev/blob"
	"gocloud.dev/blob/gcsblob"
	"golang.org/x/oauth2/google"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"gocloud.dev/gcp"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store/backend"

	// The bucket drivers the backends open.
	_ "gocloud.dev/blob/azureblob"
	_ "gocloud.dev/blob/s3blob"

	// The KMS drivers store.OpenKeeper opens, besides base64key.
	_ "gocloud.dev/secrets/awskms"
	_ "gocloud.dev/secrets/azurekeyvault"
	_ "gocloud.dev/secrets/gcpkms"
)

func init() {
	backend.Register(backend.Backend{
		Scheme: "s3",
		Open:   openS3,
		Answer: awsAnswer,
		Help: backend.Help{
			Bucket:  "bucket",
			Creds:   "check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE, the IAM role) and region= in --store",
			Missing: "check the bucket name in --store (s3://BUCKET/...) and region=; an S3-compatible server (MinIO, SeaweedFS, Ceph) needs endpoint=...&use_path_style=true",
			Reach:   "check endpoint= and region= in --store (an S3-compatible server also needs use_path_style=true), and the network or proxy",
		},
	})
	backend.Register(backend.Backend{
		Scheme: "azblob",
		Answer: azureAnswer,
		Help: backend.Help{
			Bucket:  "container",
			Creds:   "check AZURE_STORAGE_ACCOUNT with AZURE_STORAGE_KEY or AZURE_STORAGE_SAS_TOKEN (or the managed identity's role on the container)",
			Missing: "check the container name in --store (azblob://CONTAINER/...) and AZURE_STORAGE_ACCOUNT; create the container first",
			Reach:   "check AZURE_STORAGE_ACCOUNT and domain= / protocol= in --store (a local emulator such as Azurite needs protocol=http&localemu=true), and the network or proxy",
		},
	})
	backend.Register(backend.Backend{
		Scheme:        gcsblob.Scheme,
		Open:          openGCSFailFast,
		Answer:        googleAnswer,
		BucketMissing: func(err error) bool { return errors.Is(err, storage.ErrBucketNotExist) },
		Help: backend.Help{
			Bucket:  "bucket",
			Creds:   "check the service account and its role on the bucket: " + gcpCredentialsHelp,
			Missing: "check the bucket name in --store (gs://BUCKET/...)",
			Reach:   "check the network or proxy to storage.googleapis.com (or STORAGE_EMULATOR_HOST for an emulator)",
		},
	})
}

// credentialsTimeout bounds the credential check made when opening s3://
// and gs:// stores: an instance metadata service that does not answer
// fails the open in this time rather than every request later.
const credentialsTimeout = 20 * time.Second

// s3blobParams are the s3:// query parameters s3blob reads itself, before
// handing the rest to gocloud.dev/aws.
var s3blobParams = []string{"ssetype", "kmskeyid", "accelerate", "use_path_style", "s3ForcePathStyle", "disable_https"}

const awsCredentialsHelp = "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), or AWS_PROFILE " +
	"with a shared config file, or give the pod or instance an IAM role (IRSA: AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE; " +
	"EC2: an instance profile); for a public bucket add ?anonymous=true to --store"

// openS3 opens an s3:// bucket once the credentials the SDK would use are
// found, so that a missing or broken one is one error naming what to set
// instead of the SDK's raw retries.
func openS3(ctx context.Context, u *url.URL) (*blob.Bucket, error) {
	if err := checkAWSCredentials(ctx, u); err != nil {
		return nil, err
	}
	// Every object's SHA-256 is checked on reading; the SDK's own check
	// of a response's checksum, on by default, cannot check a multipart
	// object and prints a warning on stderr for each.
	if q := u.Query(); !q.Has("response_checksum_validation") {
		q.Set("response_checksum_validation", "when_required")
		u.RawQuery = q.Encode()
	}
	return blob.OpenBucket(ctx, u.String())
}

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
			snapshot.ErrNoCredentials, backend.RootCause(err), awsCredentialsHelp)
	}
	return nil
}

const gcpCredentialsHelp = "set GOOGLE_APPLICATION_CREDENTIALS to a service account key file, run " +
	"`gcloud auth application-default login`, or run with a service account (GKE: workload identity); " +
	"for a public bucket add ?anonymous=true to --store"

// openGCS opens a gs:// bucket with Application Default Credentials found
// here rather than by gocloud's default opener, which prints its failures
// ("Warning: unable to load GCP Default Credentials" on stdout). An
// emulator (STORAGE_EMULATOR_HOST) and anonymous URLs need none.
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
		return nil, fmt.Errorf("%w: Google Cloud Application Default Credentials: %s; %s", snapshot.ErrNoCredentials, backend.RootCause(err), gcpCredentialsHelp)
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
		return nil, fmt.Errorf("%w: Google Cloud access token: %s; check the service account: %s", snapshot.ErrNoCredentials, backend.RootCause(err), gcpCredentialsHelp)
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

// azureAnswer reads an Azure SDK response error.
func azureAnswer(err error) (int, string, string, bool) {
	if az, ok := errors.AsType[*azcore.ResponseError](err); ok {
		return az.StatusCode, az.ErrorCode, "", true
	}
	return 0, "", "", false
}

// awsAnswer reads an AWS SDK (smithy) response and API error.
func awsAnswer(err error) (status int, code, msg string, ok bool) {
	if rsp, isRsp := errors.AsType[*smithyhttp.ResponseError](err); isRsp {
		status, ok = rsp.HTTPStatusCode(), true
	}
	if api, isAPI := errors.AsType[smithy.APIError](err); isAPI {
		return status, api.ErrorCode(), backend.OneLine(api.ErrorMessage()), true
	}
	return status, "", "", ok
}

// googleAnswer reads a Google API error.
func googleAnswer(err error) (int, string, string, bool) {
	if gapi, ok := errors.AsType[*googleapi.Error](err); ok {
		return gapi.Code, "", backend.OneLine(gapi.Message), true
	}
	return 0, "", "", false
}

// openGCSFailFast is openGCS with failFastGCS applied to the bucket.
func openGCSFailFast(ctx context.Context, u *url.URL) (*blob.Bucket, error) {
	b, err := openGCS(ctx, u)
	if err == nil {
		failFastGCS(b)
	}
	return b, err
}

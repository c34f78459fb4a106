// Package s3test starts an in-process S3 server for tests: gofakes3 with its
// memory backend, served over HTTP by httptest. [Start] returns a bucket URL
// that gocloud.dev/blob's s3blob driver (AWS SDK v2) opens like a real one, so
// tests exercise the same driver, signing and HTTP path as production.
package s3test

import (
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Bucket is the name of the bucket Start creates.
const Bucket = "offsetkeeper-test"

// Region is the region the returned URL names; gofakes3 accepts any.
const Region = "us-east-1"

// Start starts a fresh, empty S3 server for the test and returns the URL of
// the bucket Bucket on it, of the form
//
//	s3://offsetkeeper-test?endpoint=http%3A%2F%2F127.0.0.1%3APORT&region=us-east-1&use_path_style=true
//
// which blob.OpenBucket accepts once the s3blob driver is linked in
// (gocloud.dev v0.47, AWS SDK v2). The server is closed when the test ends.
//
// Start sets the AWS_* environment with t.Setenv (static dummy credentials,
// no shared config or credentials files, no EC2 metadata lookups), so no
// real credential chain is ever consulted; like t.Setenv it must not be used
// in parallel tests or tests with parallel ancestors. Each call returns a new
// server, so tests never see each other's objects.
func Start(t testing.TB) (bucketURL string) {
	t.Helper()
	isolateAWSEnv(t)

	backend := s3mem.New()
	if err := backend.CreateBucket(Bucket); err != nil {
		t.Fatalf("create bucket %s: %v", Bucket, err)
	}
	faker := gofakes3.New(backend, gofakes3.WithLogger(gofakes3.DiscardLog()))
	srv := httptest.NewServer(faker.Server())
	t.Cleanup(srv.Close)

	q := url.Values{}
	q.Set("endpoint", srv.URL)
	q.Set("region", Region)
	// gofakes3 serves buckets by path (http://host/bucket/key); without
	// use_path_style the SDK would send virtual-hosted requests to
	// http://bucket.127.0.0.1:PORT, which does not resolve.
	q.Set("use_path_style", "true")
	u := url.URL{Scheme: "s3", Host: Bucket, RawQuery: q.Encode()}
	return u.String()
}

// isolateAWSEnv points the AWS SDK at dummy static credentials and away from
// everything on the developer's machine that could change its behaviour.
func isolateAWSEnv(t testing.TB) {
	t.Helper()
	nowhere := filepath.Join(t.TempDir(), "no-such-aws-file")
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID":                      "offsetkeeper-test",
		"AWS_SECRET_ACCESS_KEY":                  "offsetkeeper-test-secret",
		"AWS_SESSION_TOKEN":                      "",
		"AWS_PROFILE":                            "",
		"AWS_DEFAULT_PROFILE":                    "",
		"AWS_CONFIG_FILE":                        nowhere,
		"AWS_SHARED_CREDENTIALS_FILE":            nowhere,
		"AWS_REGION":                             Region,
		"AWS_DEFAULT_REGION":                     Region,
		"AWS_ENDPOINT_URL":                       "",
		"AWS_ENDPOINT_URL_S3":                    "",
		"AWS_EC2_METADATA_DISABLED":              "true",
		"AWS_ROLE_ARN":                           "",
		"AWS_WEB_IDENTITY_TOKEN_FILE":            "",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI":     "",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "",
	} {
		t.Setenv(k, v)
	}
}

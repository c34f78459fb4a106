package store

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// isolateCloud points every credential source and endpoint the AWS and
// Google SDKs look at to this machine: nothing a test does leaves it.
func isolateCloud(t *testing.T, dead string) {
	t.Helper()
	dir := t.TempDir()
	for k, v := range map[string]string{
		"HOME": dir, "CLOUDSDK_CONFIG": dir,
		"HTTP_PROXY": "http://" + dead, "HTTPS_PROXY": "http://" + dead, "NO_PROXY": "", "http_proxy": "", "https_proxy": "", "no_proxy": "",
		"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "", "AWS_PROFILE": "", "AWS_DEFAULT_PROFILE": "",
		"AWS_CONFIG_FILE": filepath.Join(dir, "aws-config"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "aws-credentials"),
		"AWS_ROLE_ARN": "", "AWS_WEB_IDENTITY_TOKEN_FILE": "",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "", "AWS_CONTAINER_CREDENTIALS_FULL_URI": "",
		"AWS_EC2_METADATA_DISABLED": "", "AWS_EC2_METADATA_SERVICE_ENDPOINT": "http://" + dead,
		"GOOGLE_APPLICATION_CREDENTIALS": "", "GCE_METADATA_HOST": dead, "GCE_METADATA_IP": dead,
		"STORAGE_EMULATOR_HOST": "", "STORAGE_EMULATOR_HOST_GRPC": "",
	} {
		t.Setenv(k, v)
	}
}

// quietly runs fn and returns what it printed on stdout and stderr, where
// gocloud's gs:// opener prints its warnings.
func quietly(t *testing.T, fn func()) string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = f, f
	defer func() { os.Stdout, os.Stderr = stdout, stderr }()
	fn()
	os.Stdout, os.Stderr = stdout, stderr
	f.Seek(0, io.SeekStart)
	b, _ := io.ReadAll(f)
	return string(b)
}

// TestCloudStoreCredentialErrors: a cloud store without usable credentials
// fails to open with one line naming the store, what failed and what to
// set, and the SDKs print nothing.
func TestCloudStoreCredentialErrors(t *testing.T) {
	dead := closedPort(t)
	isolateCloud(t, dead)
	missingKey := filepath.Join(t.TempDir(), "missing-key.json")
	for _, tt := range []struct {
		name  string
		env   map[string]string
		store string
		want  []string
	}{
		{"s3 without credentials", nil, "s3://backups/prod?region=eu-west-1&use_path_style=true&endpoint=http://" + dead,
			[]string{`open store "s3://backups/prod`, "AWS", "AWS_ACCESS_KEY_ID", "AWS_PROFILE", "IAM role", "connection refused"}},
		{"gs with a missing key file", map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": missingKey, "GCE_METADATA_HOST": ""}, "gs://backups",
			[]string{`open store "gs://backups"`, "GOOGLE_APPLICATION_CREDENTIALS", missingKey, "no such file"}},
		{"gs with a metadata server that does not answer", nil, "gs://backups",
			[]string{`open store "gs://backups"`, "access token", "connection refused", "service account", "GOOGLE_APPLICATION_CREDENTIALS"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			var err error
			printed := quietly(t, func() {
				var s *Store
				if s, err = OpenStore(ctx, tt.store); err == nil {
					_, err = s.Snapshots().List(ctx)
					s.Close()
				}
			})
			if !errors.Is(err, snapshot.ErrNoCredentials) {
				t.Fatalf("got %v, want ErrNoCredentials", err)
			}
			msg := err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, "\n") || len(msg) > 700 {
				t.Errorf("error is not one short line (%d bytes): %q", len(msg), msg)
			}
			if printed != "" {
				t.Errorf("the SDK printed %q", printed)
			}
		})
	}
}

// TestCloudStoreUnreachable: with credentials, a store whose endpoint
// refuses connections fails listing with the connection that failed and
// what to check, not the SDK's retry report.
func TestCloudStoreUnreachable(t *testing.T) {
	dead := closedPort(t)
	isolateCloud(t, dead)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAOFFSETKEEPERTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "offsetkeeper-test-secret")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	s, err := OpenStore(ctx, "s3://backups?region=eu-west-1&use_path_style=true&endpoint=http://"+dead)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Snapshots().List(ctx)
	if err == nil {
		t.Fatal("List succeeded")
	}
	msg := err.Error()
	for _, w := range []string{"list snapshots: cannot reach store s3://backups", "use_path_style=true", dead, "connection refused", "endpoint="} {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q lacks %q", msg, w)
		}
	}
	for _, noise := range []string{"exceeded maximum number of attempts", "RequestID", "offsetkeeper-test-secret"} {
		if strings.Contains(msg, noise) {
			t.Errorf("error %q holds %q", msg, noise)
		}
	}
}

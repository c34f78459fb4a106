package s3test_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/s3blob"
	"gocloud.dev/gcerrors"

	"github.com/offsetkeeper/offsetkeeper/internal/s3test"
)

// TestStart checks that the URL opens with s3blob and that the operations
// the snapshot store relies on behave as on S3: metadata round trips,
// IfNotExist is enforced, missing keys are NotFound, listing by prefix works.
func TestStart(t *testing.T) {
	ctx := context.Background()
	u := s3test.Start(t)
	if !strings.HasPrefix(u, "s3://"+s3test.Bucket+"?") {
		t.Fatalf("Start() = %q, want an s3://%s?... URL", u, s3test.Bucket)
	}
	b, err := blob.OpenBucket(ctx, u)
	if err != nil {
		t.Fatalf("OpenBucket(%q): %v", u, err)
	}
	defer b.Close()

	opts := &blob.WriterOptions{IfNotExist: true, ContentType: "text/plain", Metadata: map[string]string{"reason": "manual"}}
	if err := b.WriteAll(ctx, "dir/a.txt", []byte("hello"), opts); err != nil {
		t.Fatalf("WriteAll: %v", err)
	}
	err = b.WriteAll(ctx, "dir/a.txt", []byte("again"), opts)
	if gcerrors.Code(err) != gcerrors.FailedPrecondition {
		t.Errorf("second IfNotExist write: got %v (code %v), want FailedPrecondition", err, gcerrors.Code(err))
	}
	got, err := b.ReadAll(ctx, "dir/a.txt")
	if err != nil || string(got) != "hello" {
		t.Errorf("ReadAll = %q, %v; want \"hello\"", got, err)
	}
	attrs, err := b.Attributes(ctx, "dir/a.txt")
	if err != nil {
		t.Fatalf("Attributes: %v", err)
	}
	if attrs.Metadata["reason"] != "manual" || attrs.Size != 5 || attrs.ContentType != "text/plain" {
		t.Errorf("Attributes = metadata %v, size %d, type %q", attrs.Metadata, attrs.Size, attrs.ContentType)
	}
	if _, err := b.ReadAll(ctx, "dir/missing"); gcerrors.Code(err) != gcerrors.NotFound {
		t.Errorf("ReadAll(missing): got %v, want NotFound", err)
	}
	it := b.List(&blob.ListOptions{Prefix: "dir/"})
	var keys []string
	for {
		obj, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		keys = append(keys, obj.Key)
	}
	if len(keys) != 1 || keys[0] != "dir/a.txt" {
		t.Errorf("List(dir/) = %v, want [dir/a.txt]", keys)
	}
}

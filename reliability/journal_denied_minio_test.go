package reliability

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/storeservers"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// TestJournalSnapshotReadsDeniedMinIO is TestJournalSnapshotReadsDenied on
// MinIO, where the storm was seen (798 full snapshots in 75 s): the daemon's
// credential is anonymous access under a bucket policy that allows every
// write and read except reads of snapshots/ (GetObject denied there, which
// S3 checks for HEAD too), as a policy that forgot s3:GetObject on
// snapshots would.
func TestJournalSnapshotReadsDeniedMinIO(t *testing.T) {
	srv := storeservers.MinIO(t)
	for k, v := range srv.Env {
		t.Setenv(k, v)
	}
	bucket := "arn:aws:s3:::" + storeservers.Bucket
	policy := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[
{"Effect":"Allow","Principal":{"AWS":["*"]},"Action":["s3:GetBucketLocation","s3:ListBucket","s3:ListBucketMultipartUploads"],"Resource":["%[1]s"]},
{"Effect":"Allow","Principal":{"AWS":["*"]},"Action":["s3:PutObject","s3:GetObject","s3:DeleteObject","s3:AbortMultipartUpload","s3:ListMultipartUploadParts"],"Resource":["%[1]s/*"]},
{"Effect":"Deny","Principal":{"AWS":["*"]},"Action":["s3:GetObject"],"Resource":["%[1]s/snapshots/*"]}]}`, bucket)
	if _, err := storeservers.S3Client(srv.Env, srv.Endpoint()).PutBucketPolicy(context.Background(), &s3.PutBucketPolicyInput{
		Bucket: aws.String(storeservers.Bucket), Policy: aws.String(policy)}); err != nil {
		t.Fatalf("set the bucket policy: %v", err)
	}
	denied, err := store.OpenStore(context.Background(), srv.URL+"&anonymous=true")
	if err != nil {
		t.Fatal(err)
	}
	defer denied.Close()
	root, err := store.OpenStore(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	deniedStorm(t, c, denied, func() int {
		infos, err := root.Snapshots().List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return len(infos)
	})
}

package storeservers

import (
	"context"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// S3Client returns a client of the S3 server at endpoint with the
// credentials of env (see Server.Env).
func S3Client(env map[string]string, endpoint string) *s3.Client {
	return s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"], ""),
	})
}

// CreateS3Bucket creates bucket on the S3 server at endpoint.
func CreateS3Bucket(env map[string]string, endpoint, bucket string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := S3Client(env, endpoint).CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)})
	return err
}

// MultipartUploads counts the multipart uploads in progress in bucket
// under prefix.
func MultipartUploads(env map[string]string, endpoint, bucket, prefix string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := S3Client(env, endpoint).ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	if err != nil {
		return 0, err
	}
	return len(out.Uploads), nil
}

// CreateAzureContainer creates container in the account at serviceURL.
func CreateAzureContainer(serviceURL, account, key, container string) error {
	cred, err := azblob.NewSharedKeyCredential(account, key)
	if err != nil {
		return err
	}
	c, err := azblob.NewClientWithSharedKeyCredential(serviceURL, cred, nil)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = c.CreateContainer(ctx, container, nil)
	return err
}

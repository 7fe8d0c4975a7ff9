package storage

import (
	"context"

	"gocloud.dev/blob"
)

// OpenBucket opens the object-store location rawURL names, file:///dir or
// s3://bucket/prefix, with S3 configured from the ROCKSTREAM_OBJECT_STORE_*
// variables as for checkpoints. With create, a missing file:// directory is
// created; without, it is an error. The caller closes the bucket.
func OpenBucket(ctx context.Context, rawURL string, create bool) (*blob.Bucket, error) {
	return openBucket(ctx, rawURL, create)
}

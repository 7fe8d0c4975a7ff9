package control

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/rockstream/rockstream/internal/storage"
)

// Objects is the object storage the hosts use for the epoch input log and
// the checkpoints.
type Objects interface {
	// PutIfAbsent stores data under key unless key exists, and returns what
	// key holds afterwards and whether this call created it.
	PutIfAbsent(ctx context.Context, key string, data []byte) (stored []byte, created bool, err error)
	// Put stores data under key, replacing what was there.
	Put(ctx context.Context, key string, data []byte) error
	// Get reads the object under key.
	Get(ctx context.Context, key string) ([]byte, error)
}

// BlobObjects is Objects over a gocloud.dev bucket (memblob, fileblob,
// s3blob). Its if-absent put is the bucket's conditional write
// (WriterOptions.IfNotExist).
type BlobObjects struct {
	Bucket *blob.Bucket
}

// PutIfAbsent implements Objects.
func (o BlobObjects) PutIfAbsent(ctx context.Context, key string, data []byte) ([]byte, bool, error) {
	// One request: S3 applies If-None-Match to a single PUT only.
	err := o.Bucket.WriteAll(ctx, key, data, &blob.WriterOptions{IfNotExist: true, BufferSize: max(len(data)+1, 5<<20)})
	if err == nil {
		return data, true, nil
	}
	if gcerrors.Code(err) != gcerrors.FailedPrecondition {
		return nil, false, fmt.Errorf("control: put %s if absent: %w", key, err)
	}
	stored, err := o.Get(ctx, key)
	if err != nil {
		return nil, false, err
	}
	return stored, false, nil
}

// Put implements Objects.
func (o BlobObjects) Put(ctx context.Context, key string, data []byte) error {
	if err := o.Bucket.WriteAll(ctx, key, data, nil); err != nil {
		return fmt.Errorf("control: put %s: %w", key, err)
	}
	return nil
}

// Get implements Objects.
func (o BlobObjects) Get(ctx context.Context, key string) ([]byte, error) {
	data, err := o.Bucket.ReadAll(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("control: get %s: %w", key, err)
	}
	return data, nil
}

// Environment variable naming the bucket of the cluster's object store;
// the endpoint, region and credentials are the storage package's
// ROCKSTREAM_OBJECT_STORE_* variables (storage.EnvObjectStoreEndpoint...).
const EnvObjectStoreBucket = "ROCKSTREAM_OBJECT_STORE_BUCKET"

// ObjectStoreLocation is where the cluster named name keeps its input log
// and checkpoints: s3://<bucket>/<name> when ROCKSTREAM_OBJECT_STORE_BUCKET
// is set (read through getenv), else a file:// directory, localDir. Setting
// the endpoint or credentials without a bucket is an error rather than a
// silent fall back to local files.
func ObjectStoreLocation(getenv func(string) string, name, localDir string) (string, error) {
	if b := getenv(EnvObjectStoreBucket); b != "" {
		if strings.ContainsAny(b, "/?#") {
			return "", fmt.Errorf("control: %s=%q is not a bucket name", EnvObjectStoreBucket, b)
		}
		return "s3://" + b + "/" + name, nil
	}
	for _, v := range []string{storage.EnvObjectStoreEndpoint, storage.EnvObjectStoreAccessKeyID, storage.EnvObjectStoreSecretAccessKey} {
		if getenv(v) != "" {
			return "", fmt.Errorf("control: %s is set but %s is not: name the bucket of the cluster's object store", v, EnvObjectStoreBucket)
		}
	}
	abs, err := filepath.Abs(localDir)
	if err != nil {
		return "", fmt.Errorf("control: object store directory %s: %w", localDir, err)
	}
	return "file://" + filepath.ToSlash(abs), nil
}

// OpenObjects opens the object store at location (file:///dir, created if
// missing, or s3://bucket/prefix with the ROCKSTREAM_OBJECT_STORE_*
// configuration). The caller closes the bucket.
func OpenObjects(ctx context.Context, location string) (BlobObjects, error) {
	b, err := storage.OpenBucket(ctx, location, true)
	if err != nil {
		return BlobObjects{}, fmt.Errorf("control: object store %s: %w", location, err)
	}
	return BlobObjects{Bucket: b}, nil
}

// isNotFound reports whether err is an object store's answer that the key
// does not exist.
func isNotFound(err error) bool { return err != nil && gcerrors.Code(err) == gcerrors.NotFound }

package control

import (
	"context"
	"fmt"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
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
	err := o.Bucket.WriteAll(ctx, key, data, &blob.WriterOptions{IfNotExist: true})
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

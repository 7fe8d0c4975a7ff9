package storage

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/s3blob"

	"github.com/rockstream/rockstream/internal/errs"
)

// Environment variables that configure s3:// object storage. Without an
// access key, credentials come from the AWS SDK's default chain
// (AWS_ACCESS_KEY_ID, shared config files, instance roles).
const (
	// EnvObjectStoreEndpoint is the endpoint URL of an S3-compatible store
	// (MinIO, Ceph, R2...), such as http://127.0.0.1:9000. When set,
	// buckets are addressed by path (endpoint/bucket/key), which such
	// stores expect, and request checksums are sent only where required.
	EnvObjectStoreEndpoint = "ROCKSTREAM_OBJECT_STORE_ENDPOINT"
	// EnvObjectStoreRegion is the region; default us-east-1 when neither it
	// nor the AWS configuration names one.
	EnvObjectStoreRegion = "ROCKSTREAM_OBJECT_STORE_REGION"
	// EnvObjectStoreAccessKeyID and EnvObjectStoreSecretAccessKey are
	// static credentials; both or neither.
	EnvObjectStoreAccessKeyID     = "ROCKSTREAM_OBJECT_STORE_ACCESS_KEY_ID"
	EnvObjectStoreSecretAccessKey = "ROCKSTREAM_OBJECT_STORE_SECRET_ACCESS_KEY"
)

// openBucket opens the object-store location a checkpoint URL names:
// file:///absolute/path (a directory) or s3://bucket/prefix. With create,
// a missing file:// directory is created (to write a checkpoint into);
// without, it is an error (nothing to read there), and nothing is created.
func openBucket(ctx context.Context, rawURL string, create bool) (*blob.Bucket, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, errs.Newf(errs.InvalidParameterValue, "checkpoint location %q is not a URL: %v", rawURL, err)
	}
	switch u.Scheme {
	case "file":
		if (u.Host != "" && u.Host != "localhost") || !filepath.IsAbs(u.Path) {
			return nil, errs.Newf(errs.InvalidParameterValue,
				"checkpoint location %q must name an absolute directory, as in file:///var/backups/rockstream", rawURL)
		}
		b, err := fileblob.OpenBucket(filepath.Clean(u.Path), &fileblob.Options{
			CreateDir: create,
			// Temporary files go next to their object, so that the final
			// rename never crosses file systems.
			NoTempDir: true,
			Metadata:  fileblob.MetadataDontWrite,
		})
		if err != nil {
			if !create && errors.Is(err, os.ErrNotExist) {
				return nil, errs.Newf(errs.UndefinedObject, "storage: there is no checkpoint at %s (no such directory)", rawURL)
			}
			return nil, wrapf(errs.IOError, err, "storage: opening checkpoint location %s", rawURL)
		}
		return b, nil
	case "s3":
		if u.Host == "" {
			return nil, errs.Newf(errs.InvalidParameterValue,
				"checkpoint location %q names no bucket; use s3://bucket/prefix", rawURL)
		}
		client, err := s3Client(ctx, os.Getenv)
		if err != nil {
			return nil, err
		}
		b, err := s3blob.OpenBucket(ctx, client, u.Host, nil)
		if err != nil {
			return nil, wrapf(errs.IOError, err, "storage: opening checkpoint location %s", rawURL)
		}
		if prefix := strings.Trim(u.Path, "/"); prefix != "" {
			b = blob.PrefixedBucket(b, prefix+"/")
		}
		return b, nil
	}
	return nil, errs.Newf(errs.InvalidParameterValue,
		"checkpoint location %q: unsupported scheme %q; use file:///path or s3://bucket/prefix", rawURL, u.Scheme)
}

// s3Client builds an S3 client from the ROCKSTREAM_OBJECT_STORE_*
// variables, read through getenv, over the AWS SDK's defaults.
func s3Client(ctx context.Context, getenv func(string) string) (*s3.Client, error) {
	endpoint := getenv(EnvObjectStoreEndpoint)
	region := getenv(EnvObjectStoreRegion)
	keyID, secret := getenv(EnvObjectStoreAccessKeyID), getenv(EnvObjectStoreSecretAccessKey)
	if (keyID == "") != (secret == "") {
		return nil, errs.Newf(errs.InvalidParameterValue, "set both %s and %s, or neither",
			EnvObjectStoreAccessKeyID, EnvObjectStoreSecretAccessKey)
	}
	var loadOpts []func(*awsconfig.LoadOptions) error
	if region != "" {
		loadOpts = append(loadOpts, awsconfig.WithRegion(region))
	}
	if keyID != "" {
		loadOpts = append(loadOpts, awsconfig.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(keyID, secret, "")))
	}
	if endpoint != "" {
		loadOpts = append(loadOpts,
			awsconfig.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenRequired),
			awsconfig.WithResponseChecksumValidation(aws.ResponseChecksumValidationWhenRequired))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, loadOpts...)
	if err != nil {
		return nil, wrapf(errs.IOError, err, "storage: loading the S3 configuration")
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
			o.UsePathStyle = true
		}
	}), nil
}

// Package s3test runs an in-memory S3 server (gofakes3) on loopback for
// tests and points the ROCKSTREAM_OBJECT_STORE_* variables (endpoint and
// credentials; package storage reads them) at it for the rest of the
// test. It imports nothing of RockStream, so package storage's own tests
// can use it too.
package s3test

import (
	"net/http/httptest"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Server is a running in-memory S3 server.
type Server struct {
	URL     string
	backend *s3mem.Backend
}

// Head returns an error unless the bucket holds an object under key.
func (s *Server) Head(bucket, key string) error {
	_, err := s.backend.HeadObject(bucket, key)
	return err
}

// Start serves the buckets, empty, until the test ends.
func Start(t testing.TB, buckets ...string) *Server {
	t.Helper()
	backend := s3mem.New()
	for _, b := range buckets {
		if err := backend.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	t.Setenv("ROCKSTREAM_OBJECT_STORE_ENDPOINT", srv.URL)
	t.Setenv("ROCKSTREAM_OBJECT_STORE_ACCESS_KEY_ID", "test-key")
	t.Setenv("ROCKSTREAM_OBJECT_STORE_SECRET_ACCESS_KEY", "test-secret")
	return &Server{URL: srv.URL, backend: backend}
}

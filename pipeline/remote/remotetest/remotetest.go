// Package remotetest serves an S3 bucket in a test's process, on
// 127.0.0.1 (gofakes3), for tests of the shared remote to reach through
// the real S3 client.
package remotetest

import (
	"fmt"
	"net"
	"net/http/httptest"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// S3 starts an S3 server on 127.0.0.1 holding an empty bucket, stopped
// when the test ends, and returns the remote URL of prefix in that bucket.
// Clients take any credentials, from the AWS environment as in
// production.
func S3(t testing.TB, bucket, prefix string) string {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(gofakes3.New(backend).Server())
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return fmt.Sprintf("s3://%s/%s?endpoint=%s&region=us-east-1&use_path_style=true&disable_https=true", bucket, prefix, srv.URL)
}

// Unreachable returns the URL of a remote on 127.0.0.1 where nothing
// listens: a port that was free a moment ago, as an S3 server that is
// down leaves it.
func Unreachable(t testing.TB, bucket, prefix string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return fmt.Sprintf("s3://%s/%s?endpoint=http://%s&region=us-east-1&use_path_style=true&disable_https=true", bucket, prefix, addr)
}

package devservers

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/pipeline/remoteurl"
)

// The real servers are started by the distributed tests
// (cmd/mlsched, make test-distributed); these need none.

func TestRemoteURLIsARemoteWithoutCredentials(t *testing.T) {
	s := &Servers{S3Endpoint: "http://127.0.0.1:7070", Bucket: "team", AccessKey: "k", SecretKey: "the-secret"}
	u := s.RemoteURL("mlsched")
	if _, err := remoteurl.Parse(u); err != nil {
		t.Fatalf("RemoteURL = %s: %v", u, err)
	}
	const want = "s3://team/mlsched?endpoint=http://127.0.0.1:7070&region=us-east-1&use_path_style=true&disable_https=true"
	if u != want {
		t.Errorf("RemoteURL = %s, want %s", u, want)
	}
	if strings.Contains(u, s.SecretKey) || strings.Contains(u, s.AccessKey+"=") {
		t.Errorf("RemoteURL = %s carries a credential", u)
	}
}

func TestNewCredentialsDiffer(t *testing.T) {
	k1, s1 := NewCredentials()
	k2, s2 := NewCredentials()
	if k1 == k2 || s1 == s2 || len(s1) < 32 {
		t.Errorf("NewCredentials() = %s %s, then %s %s: want new random ones, secrets of 32 characters or more", k1, s1, k2, s2)
	}
}

// fakeServer writes a shell script that stands for a server.
func fakeServer(t *testing.T, script string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "server")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestStartRefusesAPortInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := l.Addr().(*net.TCPAddr).Port
	never := fakeServer(t, "exit 1") // never started: the port is checked first
	_, err = Start(context.Background(), Config{Temporal: never, Versitygw: never, Dir: t.TempDir(),
		Bucket: "b", AccessKey: "k", SecretKey: "s", S3Port: taken})
	if !errors.Is(err, ErrPortInUse) || !strings.Contains(err.Error(), "S3: 127.0.0.1:"+strconv.Itoa(taken)) {
		t.Errorf("Start on a taken S3 port = %v, want ErrPortInUse naming S3 and the port", err)
	}
}

// TestStartNamesAServerThatEnds: a server that ends before it answers is
// named with its log, and the other one is stopped.
func TestStartNamesAServerThatEnds(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "s3.pid")
	// It ends once the other has started.
	temporal := fakeServer(t, "while [ ! -s "+pidFile+" ]; do sleep 0.05; done\n"+
		`echo "listen tcp 127.0.0.1:7233: bind: address already in use" >&2; exit 1`)
	s3 := fakeServer(t, "echo $$ > "+pidFile+"; exec sleep 60")
	_, err := Start(context.Background(), Config{Temporal: temporal, Versitygw: s3, Dir: dir,
		Bucket: "b", AccessKey: "k", SecretKey: "s"})
	if err == nil || !strings.Contains(err.Error(), "temporal ended (exit status 1)") || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("Start with a server that exits = %v, want an error naming it, with its log", err)
	}
	b, rerr := os.ReadFile(pidFile)
	if rerr != nil {
		t.Fatalf("the other server never started: %v", rerr)
	}
	if _, err := os.Stat(filepath.Join("/proc", strings.TrimSpace(string(b)))); err == nil && isLinux() {
		t.Errorf("the other server (pid %s) still runs after Start failed", strings.TrimSpace(string(b)))
	}
	if _, err := os.Stat(filepath.Join(dir, "s3", "b")); err != nil {
		t.Errorf("the bucket's folder was not made: %v", err)
	}
}

func isLinux() bool {
	_, err := os.Stat("/proc/self")
	return err == nil
}

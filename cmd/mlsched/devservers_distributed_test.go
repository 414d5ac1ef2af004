//go:build distributed

package main

import (
	"bufio"
	"bytes"
	"context"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/mlsched/mlsched/pipeline/remote"
)

// devServers is a running mlsched dev-servers and what it printed once
// both servers answered.
type devServers struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	out    string   // stdout, up to its last line
	lines  []string // stdout's lines
	dir    string   // --dir
}

// startDevServers runs mlsched dev-servers on free ports, with env added
// to the test's environment less its AWS credentials, and reads its
// output up to the last line.
func startDevServers(t *testing.T, env ...string) *devServers {
	t.Helper()
	d := &devServers{dir: t.TempDir(), stderr: &bytes.Buffer{}}
	d.cmd = exec.Command(mlschedBin, "dev-servers", "--dir", d.dir, "--tools", filepath.Dir(toolsBin(t, "temporal")),
		"--temporal-port", "0", "--ui-port", "0", "--s3-port", "0")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			d.cmd.Env = append(d.cmd.Env, kv)
		}
	}
	d.cmd.Env = append(d.cmd.Env, env...)
	d.cmd.Stderr = d.stderr
	stdout, err := d.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		d.cmd.Process.Kill()
		d.cmd.Wait()
	})
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	deadline := time.After(2 * time.Minute)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("mlsched dev-servers ended before both servers answered\nstdout:\n%s\nstderr:\n%s", d.out, d.stderr)
			}
			d.lines = append(d.lines, line)
			d.out += line + "\n"
			if line == "# Ctrl-C here stops both servers." {
				go func() { // the rest, so that the program never blocks on a full pipe
					for range lines {
					}
				}()
				return d
			}
		case <-deadline:
			t.Fatalf("mlsched dev-servers printed no last line in 2 minutes\nstdout:\n%s\nstderr:\n%s", d.out, d.stderr)
		}
	}
}

// field returns what follows prefix on the first line that starts with it.
func (d *devServers) field(t *testing.T, prefix string) string {
	t.Helper()
	for _, l := range d.lines {
		if v, ok := strings.CutPrefix(l, prefix); ok {
			return strings.Fields(v)[0]
		}
	}
	t.Fatalf("no line starts with %q:\n%s", prefix, d.out)
	return ""
}

// servers are the pids of the two servers dev-servers started.
func (d *devServers) servers(t *testing.T) []int {
	t.Helper()
	pids := append(children(d.cmd.Process.Pid, toolsBin(t, "temporal")), children(d.cmd.Process.Pid, toolsBin(t, "versitygw"))...)
	if len(pids) != 2 {
		t.Fatalf("dev-servers runs %d servers (%v), want 2", len(pids), pids)
	}
	return pids
}

// waitGone fails unless every pid has ended within 30 s (a zombie, whose
// parent is gone, has ended).
func waitGone(t *testing.T, what string, pids []int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var left []int
		for _, p := range processes() {
			for _, pid := range pids {
				if p.pid == pid && p.state != "Z" {
					left = append(left, pid)
				}
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: servers %v still run 30 s later", what, left)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestDistributedDevServers starts mlsched dev-servers as a newcomer
// would, reaches both servers with what it printed, and stops it with
// Ctrl-C: both servers end, and it exits 0.
func TestDistributedDevServers(t *testing.T) {
	d := startDevServers(t)
	taddr := d.field(t, "Temporal  ")
	remoteURL := d.field(t, "remote: ")
	key, secret := d.field(t, "export AWS_ACCESS_KEY_ID="), d.field(t, "export AWS_SECRET_ACCESS_KEY=")
	t.Logf("mlsched dev-servers printed:\n%s", d.out)

	// Temporal answers at the printed address.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{HostPort: taddr})
	if err != nil {
		t.Fatalf("Temporal at %s: %v", taddr, err)
	}
	if _, err := c.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
		t.Errorf("Temporal at %s: %v", taddr, err)
	}
	c.Close()
	// So does its web UI.
	if m := regexp.MustCompile(`web UI (http://[^ )]+)\)`).FindStringSubmatch(d.out); m == nil {
		t.Errorf("no web UI printed:\n%s", d.out)
	} else if resp, err := http.Get(m[1]); err != nil {
		t.Errorf("Temporal's web UI at %s: %v", m[1], err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusOK {
		t.Errorf("Temporal's web UI at %s: %s, want 200 OK", m[1], resp.Status)
	}

	// The remote takes a blob with the printed credentials, and refuses
	// another secret.
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_ACCESS_KEY_ID", key)
	for _, tt := range []struct {
		secret string
		ok     bool
	}{{secret, true}, {secret + "x", false}} {
		t.Setenv("AWS_SECRET_ACCESS_KEY", tt.secret)
		r, err := remote.Open(ctx, remoteURL)
		if err != nil {
			t.Fatalf("open the printed remote %s: %v", remoteURL, err)
		}
		sha, err := r.PutBlob(ctx, []byte("hello"))
		if tt.ok && err != nil {
			t.Errorf("put a blob into %s with the printed credentials: %v", remoteURL, err)
		} else if tt.ok {
			if b, err := r.GetBlob(ctx, sha, 100); err != nil || string(b) != "hello" {
				t.Errorf("the blob read back: %q, %v", b, err)
			}
			// A push writes a manifest only where none exists: the
			// server honours If-None-Match.
			for i, want := range []bool{true, false} {
				if made, err := r.Create(ctx, "devservers-test", []byte{byte(i)}); err != nil || made != want {
					t.Errorf("Create, time %d: %v, %v; want %v", i+1, made, err, want)
				}
			}
		} else if err == nil {
			t.Errorf("put a blob into %s with another secret: no error, want one", remoteURL)
		}
		r.Close()
	}

	// The secret is in no file of the state folder.
	filepath.WalkDir(d.dir, func(path string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s holds the S3 secret", path)
			}
		}
		return nil
	})

	// Ctrl-C stops both servers; dev-servers exits 0.
	pids := d.servers(t)
	for _, p := range processes() {
		for _, pid := range pids {
			if p.pid == pid && p.pgrp == d.cmd.Process.Pid {
				t.Errorf("server %d is in dev-servers' process group: Ctrl-C in a terminal would reach it first", pid)
			}
		}
	}
	if err := d.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("dev-servers after Ctrl-C: %v, want exit 0\nstderr:\n%s", err, d.stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("dev-servers still runs 30 s after Ctrl-C\nstderr:\n%s", d.stderr)
	}
	waitGone(t, "after Ctrl-C", pids)
	if !strings.Contains(d.stderr.String(), "both stopped") {
		t.Errorf("stderr after Ctrl-C:\n%s\nwant it to say both stopped", d.stderr)
	}
}

// TestDistributedDevServersDieWithIt: dev-servers killed with SIGKILL
// leaves no server running; credentials given in the environment are
// used and never printed.
func TestDistributedDevServersDieWithIt(t *testing.T) {
	const secret = "given-secret-never-shown"
	d := startDevServers(t, "AWS_ACCESS_KEY_ID=given-key", "AWS_SECRET_ACCESS_KEY="+secret)
	if strings.Contains(d.out+d.stderr.String(), secret) {
		t.Errorf("dev-servers printed the secret it was given:\n%s", d.out)
	}
	if strings.Contains(d.out, "export AWS_") || !strings.Contains(d.out, "AWS_ACCESS_KEY_ID (given-key)") {
		t.Errorf("dev-servers given credentials printed:\n%s\nwant no export lines, and the given key named", d.out)
	}
	pids := d.servers(t)
	if err := d.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	d.cmd.Wait()
	waitGone(t, "after SIGKILL of dev-servers", pids)
}

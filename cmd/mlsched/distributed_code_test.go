//go:build distributed

package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// skewedBuild builds mlsched and mlsched-worker from a copy of this
// module with one line of the generate stage changed, as a machine left on
// another commit would hold them, and returns the folder they are in.
func skewedBuild(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	// The module's source (4 MB), its embedded files with it.
	for _, top := range []string{"go.mod", "go.sum", "cmd", "pipeline", "stages"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			if d.IsDir() {
				return os.MkdirAll(filepath.Join(src, rel), 0o755)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(src, rel), b, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	job := filepath.Join(src, "stages", "generate", "job.go")
	b, err := os.ReadFile(job)
	if err != nil {
		t.Fatal(err)
	}
	const line = "interactive:     c.InteractiveFraction,"
	if !bytes.Contains(b, []byte(line)) {
		t.Fatalf("%s has no line %q to change", job, line)
	}
	b = bytes.Replace(b, []byte(line), []byte("interactive:     c.InteractiveFraction * 0.5,"), 1)
	if err := os.WriteFile(job, b, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "bin")
	for _, step := range [][]string{
		{"go", "run", "./cmd/fingerprint", "-root", ".", "-under", "stages", "-o", "stages/codeversion_gen.go", "-pkg", "stages"},
		{"go", "build", "-o", filepath.Join(bin, "mlsched"), "./cmd/mlsched"},
		{"go", "build", "-o", filepath.Join(bin, workerName), "./cmd/mlsched-worker"},
	} {
		cmd := exec.Command(step[0], step[1:]...)
		cmd.Dir = src
		cmd.Env = os.Environ()
		if strings.HasSuffix(step[len(step)-1], "/mlsched") {
			cmd.Env = append(cmd.Env, "CGO_ENABLED=0") // as make build builds it
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(step, " "), err, out)
		}
	}
	return bin
}

// TestDistributedRefusesOtherCode: a worker built from other code than
// the coordinator's never runs its stages. Alone, it polls another task
// queue, and the run says at once that no worker of its build polls, then
// fails; a worker whose stage program (mlsched-worker) was built from
// other code refuses the stage for good, naming both code versions. Both
// failed runs close their workflows and store nothing; and a worker with
// the wrong credentials for the remote refuses to serve.
func TestDistributedRefusesOtherCode(t *testing.T) {
	taddr, remoteURL, aws := startServers(t)
	skewed := skewedBuild(t)

	newRun := func() *project {
		p := newProject(t, "tiny.yaml")
		p.env = append(aws, "MLSCHED_REMOTE="+remoteURL)
		return p
	}
	distRun := func(p *project, extra ...string) (string, string, int) {
		return p.cli(append([]string{"run", "--executor", "temporal", "--temporal", taddr}, extra...)...)
	}
	noVersions := func(p *project, stage string) {
		t.Helper()
		if m, _ := filepath.Glob(filepath.Join(p.dir, "data", stage, "*", "manifest.json")); len(m) != 0 {
			t.Errorf("a refused run stored %v", m)
		}
	}

	t.Run("a worker of another build", func(t *testing.T) {
		daemon(t, "skewed-worker", aws, filepath.Join(skewed, "mlsched"), "worker",
			"--temporal", taddr, "--remote", remoteURL, "--cache", t.TempDir())
		p := newRun()
		start := time.Now()
		out, errs, code := distRun(p, "--wait-for-worker", "15s")
		took := time.Since(start)
		if code == 0 || !strings.Contains(errs, "no worker built from this code polls task queue mlsched.") ||
			!strings.Contains(errs, "no worker built from this code polled task queue mlsched.") {
			t.Errorf("run with only a worker of another build: exit %d after %s\nstdout:\n%s\nstderr:\n%s", code, took, out, errs)
		}
		noVersions(p, "generate")
		t.Logf("run with only a worker of another build, exit %d after %s:\n%s", code, took.Round(time.Second), errs)
	})

	t.Run("a stage program of another build", func(t *testing.T) {
		env := append(append([]string{}, aws...), workerEnv+"="+filepath.Join(skewed, workerName))
		daemon(t, "worker-with-skewed-stages", env, mlschedBin, "worker",
			"--temporal", taddr, "--remote", remoteURL, "--cache", t.TempDir())
		p := newRun()
		start := time.Now()
		out, errs, code := distRun(p)
		took := time.Since(start)
		if code == 0 || !strings.Contains(errs, "needs generate's code version") ||
			!strings.Contains(errs, "but mlsched-worker was built from other code (generate's code version") {
			t.Errorf("run on a worker whose stage program is another build's: exit %d after %s\nstdout:\n%s\nstderr:\n%s", code, took, out, errs)
		}
		if took > time.Minute {
			t.Errorf("the refused stage took %s to fail: it was retried", took)
		}
		noVersions(p, "generate")
		t.Logf("run on a worker with another build's stages, exit %d after %s:\n%s", code, took.Round(time.Second), errs)
	})

	// Neither failed run left its workflow running.
	c, err := client.Dial(client.Options{HostPort: taddr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	waitFor(t, "every run's workflow to close", 30*time.Second, func() error {
		resp, err := c.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Query: "ExecutionStatus = 'Running'"})
		if err != nil {
			return err
		}
		if n := len(resp.GetExecutions()); n > 0 {
			return fmt.Errorf("%d workflow(s) still running, the first %s", n, resp.GetExecutions()[0].GetExecution().GetWorkflowId())
		}
		return nil
	})

	t.Run("wrong credentials", func(t *testing.T) {
		bad := append(append([]string{}, aws...), "AWS_SECRET_ACCESS_KEY=not-the-secret")
		cmd := exec.Command(mlschedBin, "worker", "--temporal", taddr, "--remote", remoteURL, "--cache", t.TempDir())
		cmd.Env = append(os.Environ(), bad...)
		done := make(chan struct{})
		var out []byte
		go func() { out, err = cmd.CombinedOutput(); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			<-done
			t.Fatalf("a worker with wrong credentials still serves after a minute:\n%s", out)
		}
		if err == nil || !strings.Contains(string(out), "mlsched worker will not serve: remote") {
			t.Errorf("worker with wrong credentials: %v\n%s", err, out)
		}
		if strings.Contains(string(out), "not-the-secret") {
			t.Error("the worker shows the secret")
		}
	})
}

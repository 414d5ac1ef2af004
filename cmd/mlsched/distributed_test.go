//go:build distributed

// The distributed integration test (make test-distributed): real servers,
// built from Go modules into .tools/bin by make distributed-tools, on
// 127.0.0.1: the Temporal dev server and versitygw (S3 over a directory).
// Two `mlsched worker` processes run a whole pipeline started with
// `mlsched run --executor temporal`; one is killed with SIGKILL while it
// runs a stage. The run must complete, the store verify, and every
// version's output digest match a local run of the same config.

package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mlsched/mlsched/pipeline/devservers"
)

// toolsBin is where make distributed-tools puts the servers.
func toolsBin(t testing.TB, name string) string {
	t.Helper()
	dir := os.Getenv("DISTRIBUTED_TOOLS_BIN")
	if dir == "" {
		dir = filepath.Join("..", "..", ".tools", "bin")
	}
	p, err := filepath.Abs(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s: %v (run make distributed-tools)", p, err)
	}
	return p
}

// daemon starts a server process that the test stops (SIGTERM) at its end;
// its output goes to a log file named in failures.
func daemon(t testing.TB, name string, env []string, bin string, args ...string) *exec.Cmd {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
		f.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("%s log:\n%s", name, tail(string(b), 3000))
		}
	})
	return cmd
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// waitFor polls ready until it succeeds or the deadline passes.
func waitFor(t testing.TB, what string, within time.Duration, ready func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := ready()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready after %s: %v", what, within, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// children returns the pids of the processes whose parent is pid and
// whose command line starts with prefix.
func children(pid int, prefix string) []int {
	var out []int
	for _, p := range processes() {
		if p.ppid == pid && strings.HasPrefix(p.cmdline, prefix) {
			out = append(out, p.pid)
		}
	}
	return out
}

// The S3 server's credentials, given to clients in the AWS environment.
const testS3Key, testS3Secret = "team-key", "team-secret-never-shown"

// startServers starts the Temporal dev server and versitygw, with a
// bucket, on free ports of 127.0.0.1, as mlsched dev-servers does, waits
// until both answer, and returns Temporal's address, the remote's URL and
// the AWS environment that reaches it. They stop when the test ends.
func startServers(t testing.TB) (taddr, remoteURL string, aws []string) {
	s, err := devservers.Start(context.Background(), devservers.Config{
		Temporal: toolsBin(t, "temporal"), Versitygw: toolsBin(t, "versitygw"),
		Dir: t.TempDir(), Bucket: "team", AccessKey: testS3Key, SecretKey: testS3Secret,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			for _, log := range []string{s.TemporalLog, s.S3Log} {
				b, _ := os.ReadFile(log)
				t.Logf("%s:\n%s", log, tail(string(b), 3000))
			}
		}
	})
	aws = append(s.Env(), "AWS_CONFIG_FILE="+filepath.Join(t.TempDir(), "none"), "AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(t.TempDir(), "none"))
	return s.Temporal, s.RemoteURL("mlsched"), aws
}

func TestDistributedRunSurvivesAKilledWorker(t *testing.T) {
	taddr, remoteURL, aws := startServers(t)
	const secret = testS3Secret

	// Two workers, each with its own cache store.
	var workers []*exec.Cmd
	for i := range 2 {
		workers = append(workers, daemon(t, fmt.Sprintf("worker%d", i+1), aws, mlschedBin, "worker",
			"--temporal", taddr, "--remote", remoteURL, "--cache", t.TempDir(), "--concurrency", "2"))
	}

	// The pipeline: tiny, with a schedule stage long enough to be killed in.
	sets := []string{"--set", "generate.eval.jobs=100000"}
	dist := newProject(t, "tiny.yaml")
	dist.env = append(aws, "MLSCHED_REMOTE="+remoteURL)
	local := newProject(t, "tiny.yaml")

	// The coordinator names its profile by an absolute path, which travels
	// to the workers as well as a relative one and keeps every version.
	abs := []string{"--set", "profile.import=" + filepath.Join(dist.dir, "imported-profile.csv")}
	run := exec.Command(mlschedBin, append(append(abs, sets...), "run", "--executor", "temporal", "--temporal", taddr)...)
	run.Dir, run.Env = dist.dir, append(os.Environ(), dist.env...)
	var out, errLines strings.Builder
	run.Stdout, run.Stderr = &out, &errLines
	start := time.Now()
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	finished := make(chan error, 1)
	go func() { finished <- run.Wait() }()
	// Kill the first worker seen running a stage for more than a second
	// (the schedule stage), with its stage process.
	killed := -1
	seen := map[int]time.Time{}
	var runErr error
	running := true
	for running {
		select {
		case runErr = <-finished:
			running = false
			continue
		case <-time.After(50 * time.Millisecond):
		}
		for i, w := range workers {
			for _, c := range children(w.Process.Pid, filepath.Join(filepath.Dir(mlschedBin), workerName)+" stage") {
				if first, ok := seen[c]; !ok {
					seen[c] = time.Now()
				} else if time.Since(first) > time.Second && killed < 0 {
					if err := w.Process.Signal(syscall.SIGKILL); err != nil {
						t.Fatal(err)
					}
					killed = i
					t.Logf("killed worker %d (pid %d) mid-stage, %s into the run", i+1, w.Process.Pid, time.Since(start).Round(time.Millisecond))
				}
			}
		}
	}
	if runErr != nil {
		t.Fatalf("distributed run: %v\nstdout:\n%s\nstderr:\n%s", runErr, out.String(), errLines.String())
	}
	if killed < 0 {
		t.Fatalf("no worker ran a stage for over a second: nothing was killed\n%s", out.String())
	}
	t.Logf("distributed run with a killed worker: %s\n%s", time.Since(start).Round(time.Millisecond), out.String())
	for stage, o := range outcomes(out.String()) {
		if o != "ran" {
			t.Errorf("%s: %s, want ran", stage, o)
		}
	}
	dist.mustCLI("verify")
	// What the run pushed, what each worker ran, and the retry of the
	// killed worker's activity, as they happened.
	if moved(out.String(), "pushed  ") != "evaluate generate profile schedule train" {
		t.Errorf("the run's output does not say what each stage's push moved:\n%s", out.String())
	}
	where := regexp.MustCompile(`(?m)^(\w+)\s+ran\s+([0-9a-f]{8})\s.*\n  (\w+)@([0-9a-f]{16}) ran on \S+`)
	if n := len(where.FindAllString(out.String(), -1)); n != 5 {
		t.Errorf("the run's output says where %d of the 5 stages ran, under their lines:\n%s", n, out.String())
	}
	if !regexp.MustCompile(`(?m)^  schedule@[0-9a-f]{16} ran on \S+, its \d+ parts on `).MatchString(out.String()) {
		t.Errorf("the run's output does not say where schedule's parts ran:\n%s", out.String())
	}
	t.Logf("the run's stderr:\n%s", errLines.String())
	activity := regexp.MustCompile(`(?m)^mlsched worker \S+: ((\w+)@[0-9a-f]{16}(?: part \d+ of \d+)?): ran in [0-9.]+s \(attempt (\d+), workflow `)
	ran := map[string]bool{}
	retried := 0
	for i, w := range workers {
		b, err := os.ReadFile(w.Stdout.(*os.File).Name())
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range activity.FindAllStringSubmatch(string(b), -1) {
			ran[m[2]] = true
			// The run told of each retry the workers ran.
			if m[3] != "1" {
				retried++
				if told := "mlsched: " + m[1] + ": retried as attempt " + m[3] + " of 10 after attempt "; !strings.Contains(errLines.String(), told) {
					t.Errorf("worker %d ran %s as attempt %s, but the run's stderr lacks %q", i+1, m[1], m[3], told)
				}
			}
		}
		t.Logf("worker %d's log:\n%s", i+1, tail(string(b), 2000))
	}
	if len(ran) != 5 || retried == 0 {
		t.Errorf("the workers' logs name the activities of %v, %d of them retried; want all five stages, and the killed worker's activities retried", slices.Sorted(maps.Keys(ran)), retried)
	}

	localStart := time.Now()
	local.mustCLI(append(sets, "run")...)
	t.Logf("local run: %s", time.Since(localStart).Round(time.Millisecond))
	if got, want := lockOutputs(t, dist), lockOutputs(t, local); got != want {
		t.Errorf("distributed outputs differ from a local run's:\n%s\nwant\n%s", got, want)
	}
	if got, want := lockField(t, dist, "version"), lockField(t, local, "version"); got != want {
		t.Errorf("the versions of a run naming the profile by an absolute path differ from those of one naming it relatively:\n%s\nwant\n%s", got, want)
	}
	if strings.Contains(out.String()+errLines.String(), secret) {
		t.Error("the run's output shows the secret")
	}
}

// BenchmarkDistributed times one stage forced through Temporal, with one
// worker and then two, side by side with the same stage forced locally,
// on the tiny config (schedule: 5 policies, a 2-point load sweep, 1000 jobs
// at a time): the difference per op is the coordination overhead of one
// activity (update, task and result through the remote, inputs pulled,
// output uploaded and downloaded). sims/s counts the schedule stage's
// simulations (runs.parquet's and sweep.parquet's rows) per second.
//
//	make test-distributed-bench
func BenchmarkDistributed(b *testing.B) {
	taddr, remoteURL, aws := startServers(b)
	dir := b.TempDir()
	for _, f := range []string{"tiny.yaml", "imported-profile.csv"} {
		data, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			b.Fatal(err)
		}
		if f == "tiny.yaml" {
			f = "pipeline.yaml"
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	env := append(os.Environ(), append(aws, "MLSCHED_REMOTE="+remoteURL)...)
	cli := func(args ...string) string {
		cmd := exec.Command(mlschedBin, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("mlsched %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	cli("run")
	sims := 0
	for _, line := range strings.Split(cli("show", "schedule"), "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && (f[0] == "runs.parquet" || f[0] == "sweep.parquet") && f[len(f)-1] == "rows" {
			n, _ := strconv.Atoi(f[len(f)-2])
			sims += n
		}
	}
	if sims == 0 {
		b.Fatal("no simulations counted in schedule's files")
	}
	measure := func(b *testing.B, stage string, args ...string) {
		for b.Loop() {
			cli(append([]string{"run", "--force", stage}, args...)...)
		}
		if stage == "schedule" {
			b.ReportMetric(float64(sims)*float64(b.N)/b.Elapsed().Seconds(), "sims/s")
		}
	}
	temporal := []string{"--executor", "temporal", "--temporal", taddr}
	worker := func(i int) {
		daemon(b, fmt.Sprintf("worker%d", i), aws, mlschedBin, "worker", "--temporal", taddr, "--remote", remoteURL,
			"--cache", b.TempDir())
	}
	for _, stage := range []string{"generate", "schedule"} {
		b.Run("local/"+stage, func(b *testing.B) { measure(b, stage, "--no-remote") })
	}
	worker(1)
	for _, stage := range []string{"generate", "schedule"} {
		b.Run("workers=1/"+stage, func(b *testing.B) { measure(b, stage, temporal...) })
	}
	worker(2)
	for _, stage := range []string{"generate", "schedule"} {
		b.Run("workers=2/"+stage, func(b *testing.B) { measure(b, stage, temporal...) })
	}
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cliWithin runs mlsched in the project and fails the test if it has not
// exited within limit: the inputs below used to hang it.
func (p *project) cliWithin(limit time.Duration, args ...string) (string, string, int) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, mlschedBin, args...)
	cmd.Dir = p.dir
	cmd.Env = append(os.Environ(), p.env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		p.t.Fatalf("mlsched %s still running after %v\nstderr:\n%s", strings.Join(args, " "), limit, errb.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		p.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// TestHostileInputsAreRefusedAtOnce: special files given as the config,
// an import or the store are refused before they are opened, naming the
// path and what it is (a FIFO import hung the tool past SIGTERM, a
// symlink to /dev/zero spun at 100% CPU, --config /dev/null wrote the
// store into /dev); a range error for a --set value names the --set
// argument.
func TestHostileInputsAreRefusedAtOnce(t *testing.T) {
	// Only a store this test's runs write counts: an older build run on
	// the same machine may have left one (E2E_MLSCHED_BINS against the
	// commit before the fix did), so a store there must not change.
	devStore := func() string {
		var b strings.Builder
		for _, p := range []string{"/dev/data", "/dev/pipeline.lock", "/dev/models", "/dev/reports"} {
			if fi, err := os.Stat(p); err == nil {
				fmt.Fprintf(&b, "%s %s\n", p, fi.ModTime())
			}
		}
		return b.String()
	}
	devStoreBefore := devStore()
	fifo := func(name string) func(dir string) error {
		return func(dir string) error {
			path := filepath.Join(dir, name)
			os.Remove(path)
			return syscall.Mkfifo(path, 0o644)
		}
	}
	link := func(name, target string) func(dir string) error {
		return func(dir string) error { return os.Symlink(target, filepath.Join(dir, name)) }
	}
	tests := []struct {
		name  string
		setup func(dir string) error
		args  []string
		env   []string
		want  string
	}{
		{"fifo import", fifo("imported-profile.csv"), []string{"run", "profile"}, nil,
			"profile.import: open imported-profile.csv: a named pipe (FIFO), not a regular file"},
		{"fifo parquet import", fifo("p.parquet"), []string{"run", "profile", "--set", "profile.import=p.parquet"}, nil,
			"profile.import: open p.parquet: a named pipe (FIFO), not a regular file"},
		{"import linked to /dev/zero", link("zero.csv", "/dev/zero"), []string{"run", "profile", "--set", "profile.import=zero.csv"}, nil,
			"profile.import: open zero.csv: a symlink to /dev/zero, a character device, not a regular file"},
		{"import linked to /dev/urandom", link("rand.parquet", "/dev/urandom"), []string{"status", "--set", "profile.import=rand.parquet"}, nil,
			"a symlink to /dev/urandom, a character device, not a regular file"},
		{"sparse terabyte import", func(dir string) error { return os.Truncate(filepath.Join(dir, "imported-profile.csv"), 1<<40) }, []string{"run", "profile"}, nil,
			"profile.import: open imported-profile.csv: 1 TiB, more than the 256 MiB this input may hold"},
		{"fifo config", fifo("pipeline.yaml"), []string{"run"}, nil, "pipeline.yaml: read: a named pipe (FIFO), not a regular file"},
		{"config /dev/null", nil, []string{"run", "--config", "/dev/null"}, nil, "/dev/null: read: a character device, not a regular file"},
		{"config /dev/zero", nil, []string{"status", "--config", "/dev/zero"}, nil, "/dev/zero: read: a character device, not a regular file"},
		{"config too large", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "big.yaml"), bytes.Repeat([]byte("#\n"), 1<<20), 0o644)
		}, []string{"run", "--config", "big.yaml"}, nil, "big.yaml: read: 2 MiB, more than the 1 MiB this input may hold"},
		{"store is a file", nil, []string{"status", "--store", "pipeline.yaml"}, nil,
			"--store pipeline.yaml: open pipeline.yaml: a regular file, not a directory"},
		{"store below a file", nil, []string{"run", "--set", "store=pipeline.yaml/data"}, nil,
			"--set store=pipeline.yaml/data: store: open "},
		{"range error from --set", nil, []string{"run", "--set", "schedule.load=1e-300"}, nil,
			"--set schedule.load=1e-300: schedule.load: must be a factor in [0.001, 1000], got 1e-300"},
		{"tiny rate from --set", nil, []string{"run", "--set", "generate.eval.arrival.rate=1e-9"}, nil,
			"--set generate.eval.arrival.rate=1e-9: generate.eval.arrival.rate: must be in [0.001, 1e9] jobs per second, got 1e-09"},
		{"range error from env", nil, []string{"run"}, []string{"MLSCHED_SCHEDULE__LOAD=0"},
			"env MLSCHED_SCHEDULE__LOAD: schedule.load: must be a factor in [0.001, 1000], got 0"},
		{"range error from the file", func(dir string) error {
			path := filepath.Join(dir, "pipeline.yaml")
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			b = bytes.Replace(b, []byte("  sweep:"), []byte("  learned: {cache: {step: 1e-300}}\n  sweep:"), 1)
			return os.WriteFile(path, b, 0o644)
		}, []string{"run"}, nil, "pipeline.yaml: schedule.learned.cache.step: must be in [0.0001, 10] standard deviations, got 1e-300"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProject(t, "tiny.yaml")
			if tt.setup != nil {
				if err := tt.setup(p.dir); err != nil {
					t.Fatal(err)
				}
			}
			p.env = tt.env
			_, errs, code := p.cliWithin(20*time.Second, tt.args...)
			if code != 2 || !strings.Contains(errs, tt.want) {
				t.Errorf("exit %d, want 2 and stderr naming %q:\n%s", code, tt.want, errs)
			}
			for _, gone := range []string{"data", "pipeline.lock", "models"} {
				if _, err := os.Stat(filepath.Join(p.dir, gone)); err == nil {
					t.Errorf("refused input still wrote %s", gone)
				}
			}
		})
	}
	if after := devStore(); after != devStoreBefore {
		t.Error("a store was written into /dev")
	}
}

// TestWarningsNameTheirSource: a device too small for the mix is valid but
// warned of, naming the key and the input that set it.
func TestWarningsNameTheirSource(t *testing.T) {
	p := newProject(t, "tiny.yaml")
	_, errs, code := p.cliWithin(20*time.Second, "config", "--set", "schedule.cluster[1].memory_mib=1")
	want := "mlsched: warning: --set schedule.cluster[1].memory_mib=1: schedule.cluster[1].memory_mib: accel-x2's 1 MiB holds no job of "
	if code != 0 || !strings.Contains(errs, want) {
		t.Errorf("exit %d, want 0 and stderr containing %q:\n%s", code, want, errs)
	}
}

// startRun starts 'mlsched run' on a workload big enough to be running
// when the test interrupts it, and returns once generate writes into its
// staging directory.
func startRun(t *testing.T, p *project) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(mlschedBin, "run", "--set", "generate.train.jobs=200000000")
	cmd.Dir = p.dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); ; time.Sleep(5 * time.Millisecond) {
		if m, _ := filepath.Glob(filepath.Join(p.dir, "data", ".tmp", "run-*", "generate-*")); len(m) > 0 {
			return cmd, &out, &errb
		}
		if time.Since(start) > 20*time.Second {
			cmd.Process.Kill()
			t.Fatal("the run never started writing")
		}
	}
}

// waitWithin waits for cmd, failing the test if it runs past limit.
func waitWithin(t *testing.T, cmd *exec.Cmd, limit time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(limit):
		cmd.Process.Kill()
		t.Fatalf("still running %v after the signal", limit)
	}
	return -1
}

// TestSignalsStopTheRun: SIGTERM and SIGINT stop a running stage, which is
// labelled interrupted, and the process exits 143 or 130 as a shell
// reports those signals.
func TestSignalsStopTheRun(t *testing.T) {
	for _, tt := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGTERM, 143}, {syscall.SIGINT, 130}} {
		t.Run(tt.sig.String(), func(t *testing.T) {
			p := newProject(t, "tiny.yaml")
			cmd, out, errb := startRun(t, p)
			cmd.Process.Signal(tt.sig)
			if code := waitWithin(t, cmd, 15*time.Second); code != tt.code {
				t.Errorf("exit %d after %v, want %d\nstderr:\n%s", code, tt.sig, tt.code, errb)
			}
			if got := outcomes(out.String()); got["generate"] != "interrupted" {
				t.Errorf("generate is %q after %v, want interrupted\nstdout:\n%s", got["generate"], tt.sig, out)
			}
			if !strings.Contains(errb.String(), "interrupted; every stored version is intact") {
				t.Errorf("stderr does not say the store is intact:\n%s", errb)
			}
		})
	}
}

// stuckEnv runs this test binary as a command whose work ignores its
// context, to check that a second signal ends it at once.
const stuckEnv = "MLSCHED_TEST_STUCK"

// runStuck is that command: it catches interrupts as mlsched does once a
// stage runs, and then never returns.
func runStuck() {
	ctx, cancel := context.WithCancel(context.Background())
	in := &interrupts{cancel: cancel, stderr: os.Stderr}
	in.catch()
	fmt.Println("ready")
	<-ctx.Done()
	fmt.Println("cancelled")
	select {} // a stage that does not stop
}

// TestSecondSignalExitsAtOnce: the first signal cancels, the second ends
// the process at once with 128 plus its number, whatever the work does.
func TestSecondSignalExitsAtOnce(t *testing.T) {
	for _, tt := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(tt.sig.String(), func(t *testing.T) {
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), stuckEnv+"=1")
			var errb bytes.Buffer
			cmd.Stderr = &errb
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			lines := bufio.NewScanner(stdout)
			expect := func(want string) {
				t.Helper()
				got := make(chan bool, 1)
				go func() { got <- lines.Scan() && lines.Text() == want }()
				select {
				case ok := <-got:
					if !ok {
						cmd.Process.Kill()
						t.Fatalf("the command did not print %q; stderr:\n%s", want, errb.String())
					}
				case <-time.After(10 * time.Second):
					cmd.Process.Kill()
					t.Fatalf("no %q after 10s", want)
				}
			}
			expect("ready")
			cmd.Process.Signal(tt.sig)
			expect("cancelled")
			time.Sleep(100 * time.Millisecond)
			if syscall.Kill(cmd.Process.Pid, 0) != nil {
				t.Fatal("the first signal ended the process; it should only cancel")
			}
			cmd.Process.Signal(tt.sig)
			if code := waitWithin(t, cmd, 3*time.Second); code != tt.code {
				t.Errorf("exit %d after a second %v, want %d; stderr:\n%s", code, tt.sig, tt.code, errb.String())
			}
			if !strings.Contains(errb.String(), "interrupt again to exit at once") {
				t.Errorf("the first signal did not say how to exit at once:\n%s", errb.String())
			}
		})
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mlsched/mlsched/pipeline"
	"github.com/mlsched/mlsched/stages/lib/ort/orttest"
)

// mlschedBin is the real CLI, built once for the end-to-end tests as make
// build builds it: static, with mlsched-worker beside it.
var mlschedBin string

// leanBin is the lean build (-tags lean), which hands what needs a remote
// or Temporal to mlschedBin beside it.
var leanBin string

// binsEnv names a folder holding another build's mlsched and
// mlsched-worker, which the end-to-end tests then run instead of building
// this package's: E2E_MLSCHED_BINS=/tmp/old go test ./cmd/mlsched runs
// them against, say, the commit before a fix, to see them fail there.
const binsEnv = "E2E_MLSCHED_BINS"

func TestMain(m *testing.M) {
	if os.Getenv(stuckEnv) != "" {
		runStuck()
	}
	dir, err := os.MkdirTemp("", "mlsched-e2e")
	if err != nil {
		panic(err)
	}
	mlschedBin = filepath.Join(dir, "mlsched")
	for _, b := range []struct {
		out, pkg string
		env      []string
	}{
		{mlschedBin, ".", []string{"CGO_ENABLED=0"}},
		{filepath.Join(dir, workerName), "../mlsched-worker", nil},
	} {
		if bins := os.Getenv(binsEnv); bins != "" {
			// Another build's programs, such as the commit before a fix:
			// the end-to-end tests then show what they catch.
			if err := os.Symlink(filepath.Join(bins, filepath.Base(b.out)), b.out); err != nil {
				panic(err)
			}
			continue
		}
		cmd := exec.Command("go", "build", "-o", b.out, b.pkg)
		cmd.Env = append(os.Environ(), b.env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			os.Stderr.Write(out)
			panic(err)
		}
	}
	// The lean build, as make build makes bin/mlsched, with the full one
	// beside it as mlsched-dist and the worker.
	leanDir := filepath.Join(dir, "lean")
	leanBin = filepath.Join(leanDir, "mlsched")
	if err := os.MkdirAll(leanDir, 0o755); err != nil {
		panic(err)
	}
	if os.Getenv(binsEnv) != "" {
		if err := os.Symlink(mlschedBin, leanBin); err != nil {
			panic(err)
		}
	} else {
		cmd := exec.Command("go", "build", "-tags", "lean", "-o", leanBin, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			os.Stderr.Write(out)
			panic(err)
		}
	}
	for name, target := range map[string]string{"mlsched-dist": mlschedBin, workerName: filepath.Join(dir, workerName)} {
		if err := os.Symlink(target, filepath.Join(leanDir, name)); err != nil {
			panic(err)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// project is a throwaway project directory with a pipeline.yaml.
type project struct {
	t   *testing.T
	dir string
	env []string
	// touched says the test changed stored files' mtimes: status may then
	// call a version "damaged?" until a run re-hashes it.
	touched bool
	// as, when set, runs mlsched as another user.
	as *syscall.Credential
	// extra names the files the test put in the project beside a clean
	// run's (another config, its lock file).
	extra []string
}

func newProject(t *testing.T, config string) *project {
	t.Helper()
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join("testdata", config))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pipeline.yaml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	csv, err := os.ReadFile(filepath.Join("testdata", "imported-profile.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "imported-profile.csv"), csv, 0o644); err != nil {
		t.Fatal(err)
	}
	return &project{t: t, dir: dir}
}

// cli runs mlsched in the project and returns stdout, stderr and exit code.
func (p *project) cli(args ...string) (string, string, int) {
	p.t.Helper()
	return p.cliOf(mlschedBin, args...)
}

// cliOf runs the mlsched binary at bin in the project.
func (p *project) cliOf(bin string, args ...string) (string, string, int) {
	p.t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = p.dir
	cmd.Env = append(os.Environ(), p.env...)
	if p.as != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.as}
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		p.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func (p *project) mustCLI(args ...string) string {
	p.t.Helper()
	out, errs, code := p.cli(args...)
	if code != 0 {
		p.t.Fatalf("mlsched %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

// outcomes parses run's "stage outcome version duration" lines (and
// status's "stage state version"), passing over the indented lines below
// them (what a push moved, why a stage is stale).
func outcomes(out string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(line, " ") {
			continue
		}
		if f := strings.Fields(line); len(f) >= 2 {
			m[f[0]] = f[1]
		}
	}
	return m
}

func TestRunThenCached(t *testing.T) {
	p := newProject(t, "tiny.yaml")
	out := p.mustCLI("run")
	if !regexp.MustCompile(`(?m)^generate\s+ran\s+[0-9a-f]{8}\s+\S+`).MatchString(out) {
		t.Fatalf("first run output:\n%s", out)
	}
	if got := outcomes(p.mustCLI("run")); got["generate"] != "cached" {
		t.Errorf("second run: %v, want generate cached", got)
	}
	// Reformatting pipeline.yaml reruns nothing.
	b, _ := os.ReadFile(filepath.Join("testdata", "tiny-reformatted.yaml"))
	os.WriteFile(filepath.Join(p.dir, "pipeline.yaml"), b, 0o644)
	if got := outcomes(p.mustCLI("run")); got["generate"] != "cached" {
		t.Errorf("after reformatting: %v, want generate cached", got)
	}
	// Editing the section reruns it, and status explains why beforehand.
	st := p.mustCLI("status", "--set", "generate.eval.jobs=1500")
	if !strings.Contains(st, "stale") || !strings.Contains(st, "config generate.eval.jobs: 1000 → 1500") {
		t.Errorf("status after an edit:\n%s", st)
	}
	if got := outcomes(p.mustCLI("run", "--set", "generate.eval.jobs=1500")); got["generate"] != "ran" {
		t.Errorf("after an edit: %v, want generate ran", got)
	}
	if _, err := os.Stat(filepath.Join(p.dir, "pipeline.lock")); err != nil {
		t.Errorf("no pipeline.lock after a run: %v", err)
	}
}

func TestStatusJSONAndInspection(t *testing.T) {
	p := newProject(t, "tiny.yaml")
	var before []pipeline.StageStatus
	if err := json.Unmarshal([]byte(p.mustCLI("status", "--json")), &before); err != nil {
		t.Fatal(err)
	}
	if len(before) == 0 || before[0].State != pipeline.Missing {
		t.Fatalf("status before a run = %+v", before)
	}
	p.mustCLI("run")
	var after []map[string]any
	if err := json.Unmarshal([]byte(p.mustCLI("status", "--json")), &after); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"stage", "state", "version", "reasons"} {
		if _, ok := after[0][field]; !ok {
			t.Errorf("status --json lacks field %q: %v", field, after[0])
		}
	}
	if after[0]["state"] != "up-to-date" {
		t.Errorf("status after run = %v", after[0])
	}
	show := p.mustCLI("show", "generate")
	for _, want := range []string{"jobs-eval.parquet", "1000 rows", "jobs-train.parquet", "2000 rows", "generate.eval.jobs = 1000", "seed     3"} {
		if !strings.Contains(show, want) {
			t.Errorf("show lacks %q:\n%s", want, show)
		}
	}
	if ls := p.mustCLI("ls"); !strings.Contains(ls, "generate") || !strings.Contains(ls, "*") {
		t.Errorf("ls:\n%s", ls)
	}
	for format, want := range map[string]string{"text": "generate", "dot": "digraph", "mermaid": "graph LR"} {
		if out := p.mustCLI("dag", "--format", format); !strings.Contains(out, want) {
			t.Errorf("dag --format %s:\n%s", format, out)
		}
	}
}

func TestVerifyNamesDamagedFile(t *testing.T) {
	p := newProject(t, "tiny.yaml")
	p.mustCLI("run")
	if out := p.mustCLI("verify"); !strings.Contains(out, "all intact") {
		t.Fatalf("verify on a clean store:\n%s", out)
	}
	files, _ := filepath.Glob(filepath.Join(p.dir, "data", "generate", "*", "jobs-eval.parquet"))
	if len(files) != 1 {
		t.Fatalf("found %d jobs-eval.parquet files", len(files))
	}
	f, _ := os.OpenFile(files[0], os.O_RDWR, 0)
	f.WriteAt([]byte{0xde, 0xad}, 100)
	f.Close()
	out, _, code := p.cli("verify")
	if code != 1 || !strings.Contains(out, "jobs-eval.parquet") || !strings.Contains(out, "DAMAGED") {
		t.Errorf("verify on a damaged store: exit %d\n%s", code, out)
	}
}

func TestPinLockedAndGC(t *testing.T) {
	p := newProject(t, "tiny.yaml")
	p.mustCLI("run")
	if out := p.mustCLI("pin", "generate"); !strings.HasPrefix(out, "pinned generate@") {
		t.Errorf("pin: %s", out)
	}
	if got := outcomes(p.mustCLI("run", "--set", "generate.eval.jobs=10")); got["generate"] != "pinned" {
		t.Errorf("run of a pinned stage: %v", got)
	}
	if st := p.mustCLI("status", "--set", "generate.eval.jobs=10"); !strings.Contains(st, "config differs from the pinned version") {
		t.Errorf("status of a pinned stage with a new config:\n%s", st)
	}
	p.mustCLI("unpin", "generate")
	_, errs, code := p.cli("run", "--locked", "--set", "generate.eval.jobs=10")
	if code != 1 || !strings.Contains(errs, "pipeline.lock") || !strings.Contains(errs, "generate.eval.jobs: 1000 → 10") {
		t.Errorf("run --locked with a changed config: exit %d\n%s", code, errs)
	}
	if vs, _ := filepath.Glob(filepath.Join(p.dir, "data", "generate", "*")); len(vs) != 1 {
		t.Errorf("--locked wrote something: %v", vs)
	}
	p.mustCLI("run", "--set", "generate.eval.jobs=10")
	p.mustCLI("run", "--locked", "--set", "generate.eval.jobs=10")
	// The schedule and evaluate versions made from the first generate
	// version are no longer in the lock file, nor are the sweep's
	// simulations that only that schedule used: at least 5 policies at 2
	// loads, and the capacity search's. The first generate version stays:
	// train, which reads the train workload alone, was cached, and the
	// train version the lock file names was made from it.
	out := p.mustCLI("gc", "--keep", "0", "--verbose")
	var versions, memos int
	if _, err := fmt.Sscanf(out[strings.LastIndex(out, "Removed"):], "Removed %d version(s) and %d memo entries", &versions, &memos); err != nil ||
		versions != 2 || memos < 10 || strings.Count(out, "removing schedule memo entry") != memos ||
		strings.Contains(out, "removing generate@") || !strings.Contains(out, "removing schedule@") || !strings.Contains(out, "removing evaluate@") {
		t.Errorf("gc:\n%s", out)
	}
	if out := p.mustCLI("gc", "--keep", "0"); !strings.Contains(out, "Removed 0 version(s) and 0 memo entries") {
		t.Errorf("a second gc removed more:\n%s", out)
	}
}

func TestBadInputExitsTwoAndWritesNothing(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  []string
		yaml string
		want string
	}{
		{"unknown key", []string{"run"}, nil, "generate:\n  eval:\n    jbos: 5\n", "generate.eval.jbos"},
		{"did you mean", []string{"run"}, nil, "generate:\n  eval:\n    jbos: 5\n", "generate.eval.jobs"},
		{"wrong type", []string{"run"}, nil, "generate:\n  eval:\n    jobs: many\n", "generate.eval.jobs"},
		{"fraction as int", []string{"run"}, nil, "generate:\n  eval:\n    jobs: 1.5\n", "generate.eval.jobs"},
		{"out of range", []string{"run"}, nil, "generate:\n  eval:\n    jobs: -1\n", "generate.eval.jobs"},
		{"yaml syntax", []string{"run"}, nil, "generate: [\n", "pipeline.yaml"},
		{"bad --set", []string{"run", "--set", "generate.eval.jobs=lots"}, nil, "", "generate.eval.jobs"},
		{"--set without =", []string{"run", "--set", "seed"}, nil, "", "seed"},
		{"bad env", []string{"run"}, []string{"MLSCHED_GENERATE__EVAL__JOBS=x"}, "", "MLSCHED_GENERATE__EVAL__JOBS"},
		{"unknown stage", []string{"run", "nope"}, nil, "", `unknown stage "nope"; the stages are profile, generate, train, schedule, evaluate`},
		{"stage name typo", []string{"run", "schedul"}, nil, "", `unknown stage "schedul" (did you mean schedule?)`},
		{"stage name typo in pin", []string{"pin", "trian"}, nil, "", `unknown stage "trian" (did you mean train?)`},
		{"stage name typo in status", []string{"status", "evalute"}, nil, "", `unknown stage "evalute" (did you mean evaluate?)`},
		{"unknown flag", []string{"run", "--frobnicate"}, nil, "", "frobnicate"},
		{"unknown command", []string{"frobnicate"}, nil, "", "frobnicate"},
		{"bad -j", []string{"run", "-j", "0"}, nil, "", "-j 0"},
		{"missing config", []string{"run", "--config", "nope.yaml"}, nil, "", "nope.yaml"},
		{"bad dag format", []string{"dag", "--format", "svg"}, nil, "", "svg"},
		{"unknown compare_to", []string{"run", "--set", "evaluate.compare_to=ffff"}, nil, "", "evaluate.compare_to: evaluate@ffff: no such version"},
		{"device name with a pipe", []string{"run"}, nil, "schedule:\n  cluster:\n    - {name: 'a|b', kind: measured, profile_device: cpu, threads: 1, lanes: 1, memory_mib: 100, speed: 1}\n",
			`schedule.cluster[0].name: "a|b" is not a valid name: want 1 to 64 ASCII letters`},
		{"device name with HTML", []string{"run"}, nil, "schedule:\n  cluster:\n    - {name: '<script>alert(1)</script>', kind: measured, profile_device: cpu, threads: 1, lanes: 1, memory_mib: 100, speed: 1}\n",
			`schedule.cluster[0].name: "<script>alert(1)</script>" is not a valid name`},
		{"baseline not simulated", []string{"run", "--set", "evaluate.baselines=fifo,round_robin"}, nil, "", `evaluate.baselines[1]: "round_robin" is not among schedule.policies`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProject(t, "tiny.yaml")
			if tt.yaml != "" {
				os.WriteFile(filepath.Join(p.dir, "pipeline.yaml"), []byte(tt.yaml), 0o644)
			}
			p.env = tt.env
			_, errs, code := p.cli(tt.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2; stderr:\n%s", code, errs)
			}
			if !strings.Contains(errs, tt.want) {
				t.Errorf("stderr does not name %q:\n%s", tt.want, errs)
			}
			if strings.Contains(errs, "panic") || strings.Contains(errs, "goroutine") {
				t.Errorf("stderr shows a panic:\n%s", errs)
			}
			if _, err := os.Stat(filepath.Join(p.dir, "data", "generate")); err == nil {
				t.Errorf("bad input still wrote an artifact")
			}
		})
	}
}

// TestReportAndCompareTo runs the pipeline through evaluate, opens the
// published report, then reruns at another load against the first
// evaluate version.
func TestReportAndCompareTo(t *testing.T) {
	p := newProject(t, "tiny.yaml")
	p.mustCLI("run")
	md, err := os.ReadFile(filepath.Join(p.dir, "reports", "report.md"))
	if err != nil || !strings.HasPrefix(string(md), "# mlsched evaluation") {
		t.Fatalf("reports/report.md: %v\n%.200s", err, md)
	}
	page, err := os.ReadFile(filepath.Join(p.dir, "reports", "report.html"))
	if err != nil || !bytes.Contains(page, []byte("<svg")) {
		t.Fatalf("reports/report.html: %v", err)
	}
	// (No policy of tiny.yaml is learned, so no placement network is
	// trained or charted here: TestLearnedReport has its charts.)
	for _, chart := range []string{"latency-cdf.svg", "timeline.svg", "sweep-slo.svg", "profile.svg", "predictor-scatter.svg"} {
		if _, err := os.Stat(filepath.Join(p.dir, "reports", "charts", chart)); err != nil {
			t.Errorf("reports/charts: %v", err)
		}
	}
	vs, _ := filepath.Glob(filepath.Join(p.dir, "data", "evaluate", "*"))
	if len(vs) != 1 {
		t.Fatalf("evaluate versions %v", vs)
	}
	first := filepath.Base(vs[0])
	lockBefore, err := os.ReadFile(filepath.Join(p.dir, "pipeline.lock"))
	if err != nil {
		t.Fatal(err)
	}
	got := outcomes(p.mustCLI("run", "--set", "evaluate.compare_to="+first[:8], "--set", "schedule.utilization=0.9"))
	if got["schedule"] != "ran" || got["evaluate"] != "ran" {
		t.Errorf("run against the first version: %v", got)
	}
	md, _ = os.ReadFile(filepath.Join(p.dir, "reports", "report.md"))
	if !strings.Contains(string(md), "## Since evaluate@"+first) || !strings.Contains(string(md), "| fifo | mean_e2e_s |") {
		t.Errorf("the report has no change section against %s:\n%s", first, md)
	}
	// gc keeps the version the current one compares with, though the lock
	// file no longer names it, and the schedule version it was made from.
	firstSchedule := lockVersions(t, lockBefore)["schedule"]
	out := p.mustCLI("gc", "--keep", "0", "--verbose")
	if strings.Contains(out, "removing evaluate@"+first) || strings.Contains(out, "removing schedule@"+firstSchedule) {
		t.Errorf("gc:\n%s", out)
	}
	for _, f := range []string{"evaluate/" + first + "/metrics.parquet", "schedule/" + firstSchedule + "/" + pipeline.ManifestName} {
		if _, err := os.Stat(filepath.Join(p.dir, "data", filepath.FromSlash(f))); err != nil {
			t.Errorf("the compared version, or what it was made from, is gone: %v", err)
		}
	}
}

// TestLearnedReport runs the tiny pipeline with the learned policy beside
// edf and edf+migrate: schedule serves the placement network train just
// trained through onnxruntime (so the test needs the library, unlike
// tiny.yaml alone), and the report gains its learned section, with the
// wall-clock figures of schedule's manifest, which the worker passes on.
func TestLearnedReport(t *testing.T) {
	lib, _ := orttest.Library(t)
	p := newProject(t, "tiny.yaml")
	p.mustCLI("--ort-lib", lib, "run", "--set", "schedule.policies=fifo,edf,edf+migrate,learned")
	md, err := os.ReadFile(filepath.Join(p.dir, "reports", "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	ms, _ := filepath.Glob(filepath.Join(p.dir, "data", "schedule", "*", "manifest.json"))
	if len(ms) != 1 {
		t.Fatalf("schedule manifests %v", ms)
	}
	b, err := os.ReadFile(ms[0])
	if err != nil {
		t.Fatal(err)
	}
	var m pipeline.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	n := m.Notes["serving:learned:uncached_n"]
	if n == "" {
		t.Fatalf("schedule's manifest notes no uncached decisions: %v", m.Notes)
	}
	for _, want := range []string{"\n## Learned decisions\n", "**learned against learned\\~threshold** (the Threshold rule asked exactly as the network is", "**learned against edf+migrate** (the Threshold rule as +migrate asks it", "**learned against edf** (no migration)",
		"| learned | go (", " | uncached: one decision | " + n + " | ", "### Sensitivity to prediction error", "### The cost of a decision",
		// The imported profile has no timing of the serving path: the
		// report says the decisions were charged the fallback.
		"learned was charged the tight-loop fallback", "| tight-loop mlp (profile) |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	// A learned policy asks for the placement network: train trains it,
	// and the report draws its training and ROC curves.
	for _, chart := range []string{"prediction-error-slo.svg", "prediction-error-mean-e2e.svg", "placement-training.svg", "placement-roc.svg"} {
		if _, err := os.Stat(filepath.Join(p.dir, "reports", "charts", chart)); err != nil {
			t.Errorf("reports/charts: %v", err)
		}
	}
}

// TestCompareToInAnotherStore: a reference to an earlier version is looked
// up in the store the command works on (--store), not the config's.
func TestCompareToInAnotherStore(t *testing.T) {
	p := newProject(t, "tiny.yaml")
	other := filepath.Join(t.TempDir(), "other")
	p.mustCLI("--store", other, "run")
	vs, _ := filepath.Glob(filepath.Join(other, "evaluate", "*"))
	if len(vs) != 1 {
		t.Fatalf("evaluate versions in %s: %v", other, vs)
	}
	v := filepath.Base(vs[0])
	st := p.mustCLI("--store", other, "--set", "evaluate.compare_to="+v, "status")
	if !strings.Contains(st, "evaluate") {
		t.Errorf("status against the other store:\n%s", st)
	}
	show := p.mustCLI("--store", other, "--set", "evaluate.compare_to="+v[:6], "run", "evaluate")
	if got := outcomes(show); got["evaluate"] != "ran" {
		t.Errorf("run against the other store: %v", got)
	}
	if out := p.mustCLI("--store", other, "show", "evaluate"); !strings.Contains(out, "ref      evaluate@"+v+"/metrics.parquet (evaluate.compare_to)") {
		t.Errorf("show does not list the reference:\n%s", out)
	}
	// The config's own store has no such version.
	_, errs, code := p.cli("--set", "evaluate.compare_to="+v, "status")
	if code != 2 || !strings.Contains(errs, "evaluate.compare_to: evaluate@"+v+": no such version in "+filepath.Join(p.dir, "data")) {
		t.Errorf("status against the config's store: exit %d\n%s", code, errs)
	}
}

// TestReportNamesTheVersionsItWasMadeFrom: an upstream that reran with the
// same output leaves schedule cached, but the report, which names the
// upstreams' versions, is made again and names the new one.
func TestReportNamesTheVersionsItWasMadeFrom(t *testing.T) {
	p := newProject(t, "tiny.yaml")
	p.mustCLI("run")
	csv := filepath.Join(p.dir, "imported-profile.csv")
	b, err := os.ReadFile(csv)
	if err != nil {
		t.Fatal(err)
	}
	// The same numbers, written otherwise: the file, and so the profile's
	// version, changes; its data does not.
	if err := os.WriteFile(csv, bytes.Replace(b, []byte(",0.00010\n"), []byte(",1e-4\n"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	got := outcomes(p.mustCLI("run"))
	if got["profile"] != "ran" || got["schedule"] != "cached" || got["evaluate"] != "ran" {
		t.Fatalf("after rewriting the profile's numbers: %v (want profile ran, schedule cached, evaluate ran)", got)
	}
	vs, _ := filepath.Glob(filepath.Join(p.dir, "data", "profile", "*"))
	lock, err := os.ReadFile(filepath.Join(p.dir, "pipeline.lock"))
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(p.dir, "reports", "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		v = filepath.Base(v)
		current := bytes.Contains(lock, []byte(v))
		if named := bytes.Contains(md, []byte("profile@"+v)); named != current {
			t.Errorf("report names profile@%s: %v; it is the current version: %v", v, named, current)
		}
	}
}

func TestEnvironmentAndSetPrecedence(t *testing.T) {
	p := newProject(t, "tiny.yaml")
	// The debugging switch and the full build's path are not config keys,
	// and must not be taken for them.
	p.env = []string{"MLSCHED_GENERATE__EVAL__JOBS=777", "MLSCHED_SEED=9", "MLSCHED_DEBUG_KEY=1", "MLSCHED_DIST=" + filepath.Join(filepath.Dir(mlschedBin), "mlsched-dist")}
	out := p.mustCLI("config", "--set", "seed=11")
	for _, want := range []string{"generate.eval.jobs = 777", "seed = 11", "generate.train.jobs = 2000"} {
		if !strings.Contains(out, want) {
			t.Errorf("config lacks %q:\n%s", want, out)
		}
	}
}

func TestSecondProcessWaitsOrRefuses(t *testing.T) {
	p := newProject(t, "tiny.yaml")
	st, _ := pipeline.OpenStore(filepath.Join(p.dir, "data"))
	unlock, err := st.Lock(t.Context(), "a test holding the store", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, errs, code := p.cli("run", "--no-wait")
	unlock()
	if code != 1 || !strings.Contains(errs, "in use by") || !strings.Contains(errs, "a test holding the store") {
		t.Errorf("run --no-wait on a busy store: exit %d\n%s", code, errs)
	}
}

func TestInterruptLeavesNoPartialVersion(t *testing.T) {
	p := newProject(t, "tiny.yaml")
	cmd := exec.Command(mlschedBin, "run", "--set", "generate.train.jobs=200000000")
	cmd.Dir = p.dir
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once generate, the stage the test asserts about, is
	// writing into its staging directory (named generate-<version>-...).
	for start := time.Now(); ; time.Sleep(5 * time.Millisecond) {
		if m, _ := filepath.Glob(filepath.Join(p.dir, "data", ".tmp", "*", "generate-*")); len(m) > 0 {
			break
		}
		if time.Since(start) > 20*time.Second {
			cmd.Process.Kill()
			t.Fatal("the run never started writing")
		}
	}
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 || !strings.Contains(errb.String(), "interrupted") {
		t.Fatalf("interrupted run: %v\n%s", err, errb.String())
	}
	if vs, _ := filepath.Glob(filepath.Join(p.dir, "data", "generate", "*")); len(vs) != 0 {
		t.Errorf("an interrupted run left versions: %v", vs)
	}
	if ents, _ := os.ReadDir(filepath.Join(p.dir, "data", ".tmp")); len(ents) != 0 {
		t.Errorf("an interrupted run left %d staging directories", len(ents))
	}
}

// TestStagesRunInTheWorker: mlsched runs the stages' code in
// mlsched-worker; a run that finds everything cached needs no worker at
// all, and one that must run a stage without one says what is missing.
func TestStagesRunInTheWorker(t *testing.T) {
	p := newProject(t, "tiny.yaml")
	p.mustCLI("run")
	// mlsched alone, as a go run or a bare copy would leave it.
	alone := filepath.Join(t.TempDir(), "mlsched")
	b, err := os.ReadFile(mlschedBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, errs, code := p.cliOf(alone, "run"); code != 0 || strings.Count(out, "cached") != 5 {
		t.Errorf("a cached run without the worker: exit %d\n%s%s", code, out, errs)
	}
	_, errs, code := p.cliOf(alone, "run", "--set", "generate.eval.jobs=900")
	if code != 1 || !strings.Contains(errs, "mlsched-worker, which runs the stages' code, is not beside "+alone) || !strings.Contains(errs, "MLSCHED_WORKER") {
		t.Errorf("a run that needs the worker, without it: exit %d\n%s", code, errs)
	}
	// MLSCHED_WORKER points at one elsewhere.
	p.env = []string{"MLSCHED_WORKER=" + filepath.Join(filepath.Dir(mlschedBin), workerName)}
	// train reads the train workload alone: a new eval workload does not
	// retrain.
	if got := outcomes(p.mustCLI("run", "--set", "generate.eval.jobs=900")); got["generate"] != "ran" || got["train"] != "cached" || got["schedule"] != "ran" {
		t.Errorf("run with MLSCHED_WORKER and a new eval workload: %v, want generate and schedule ran, train cached", got)
	}
}

// TestRunSaysWhyAStageReran: each stage that runs says why on its line:
// it never ran, the config key that changed (old → new), or the upstream
// that changed; a cached stage says nothing.
func TestRunSaysWhyAStageReran(t *testing.T) {
	p := newProject(t, "tiny.yaml")
	first := p.mustCLI("run")
	second := p.mustCLI("--set", "generate.eval.seed=5", "run")
	for _, c := range []struct {
		out, re string
	}{
		{first, `(?m)^generate\s+ran\s+\S+\s+\S+\s+\(never run\)$`},
		{second, `(?m)^generate\s+ran\s+\S+\s+\S+\s+\(config generate\.eval\.seed: 2 → 5\)$`},
		{second, `(?m)^schedule\s+ran\s+\S+\s+\S+\s+\(upstream generate changed \([0-9a-f]{16} → [0-9a-f]{16}\)\)$`},
		{second, `(?m)^train\s+cached\s+\S+\s+\S+$`},
	} {
		if !regexp.MustCompile(c.re).MatchString(c.out) {
			t.Errorf("run output does not match %s:\n%s", c.re, c.out)
		}
	}
}

// TestPinnedStageSaysItsUpstreamMoved: a pinned stage's status says when
// its upstream has moved since the pinned version was made (the version
// the config would make now, and since when the pin holds an older one),
// and, while the upstream is stale, that the pin may no longer match.
func TestPinnedStageSaysItsUpstreamMoved(t *testing.T) {
	p := newProject(t, "tiny.yaml")
	p.mustCLI("run")
	p.mustCLI("pin", "train")
	if out := p.mustCLI("status"); !regexp.MustCompile(`(?m)^train\s+pinned\s+[0-9a-f]{8}$`).MatchString(out) {
		t.Errorf("status of an unmoved pin says more than pinned:\n%s", out)
	}
	set := []string{"--set", "generate.train.seed=3"}
	if out := p.mustCLI(append(set, "status")...); !strings.Contains(out, "upstream generate is not up to date: once it runs, the pinned version may no longer be what the config makes") {
		t.Errorf("status with generate stale:\n%s", out)
	}
	p.mustCLI(append(set, "run", "generate")...)
	out := p.mustCLI(append(set, "status")...)
	for _, re := range []string{
		`(?m)^    since the pin: upstream generate changed \([0-9a-f]{16} → [0-9a-f]{16}\)$`,
		`(?m)^    the config would make [0-9a-f]{16} now; the pinned version was made \d{4}-\d\d-\d\d \d\d:\d\d UTC \(mlsched unpin train to follow the config\)$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("status after generate moved does not match %s:\n%s", re, out)
		}
	}
}

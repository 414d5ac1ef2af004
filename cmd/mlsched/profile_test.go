package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mlsched/mlsched/pipeline"
)

// requireORT skips a test that needs onnxruntime when it is not installed,
// unless REQUIRE_ONNXRUNTIME=1 (as make test sets).
func requireORT(t *testing.T) {
	t.Helper()
	lib := os.Getenv("ONNXRUNTIME_LIB")
	if _, err := os.Stat(lib); lib == "" || err != nil {
		if os.Getenv("REQUIRE_ONNXRUNTIME") == "1" {
			t.Fatalf("onnxruntime library %q not found: run make setup", lib)
		}
		t.Skip("onnxruntime not installed: run make setup, or set ONNXRUNTIME_LIB")
	}
}

func TestProfileMeasuresThisMachine(t *testing.T) {
	requireORT(t)
	p := newProject(t, "measure.yaml")
	if got := outcomes(p.mustCLI("run", "profile")); got["profile"] != "ran" {
		t.Fatalf("run profile: %v", got)
	}
	show := p.mustCLI("show", "profile")
	for _, want := range []string{"note     onnxruntime: 1.24", "note     cpu:", "samples.parquet", "summary.parquet", "machine.parquet", "resnet18.onnx"} {
		if !strings.Contains(show, want) {
			t.Errorf("show profile lacks %q:\n%s", want, show)
		}
	}
	for _, f := range []string{"mlp.onnx", "resnet18.onnx"} {
		if _, err := os.Stat(filepath.Join(p.dir, "models", f)); err != nil {
			t.Errorf("models/%s not published: %v", f, err)
		}
	}
	if got := outcomes(p.mustCLI("run", "profile")); got["profile"] != "cached" {
		t.Errorf("second run: %v", got)
	}
}

func TestMissingLibraryIsOneClearError(t *testing.T) {
	p := newProject(t, "measure.yaml")
	p.env = []string{"ONNXRUNTIME_LIB=/nonexistent/libonnxruntime.so.1"}
	_, errs, code := p.cli("run", "profile")
	if code != 1 || !strings.Contains(errs, "/nonexistent/libonnxruntime.so.1") || !strings.Contains(errs, "make setup") {
		t.Errorf("exit %d, stderr:\n%s", code, errs)
	}
	if strings.Contains(errs, "panic") || strings.Contains(errs, "SIGSEGV") {
		t.Errorf("a missing library crashed:\n%s", errs)
	}
}

// TestProfileProgressTellsTimeLeft runs the profile with its progress
// printed as a log prints it: each line says how far the stage is and,
// from the work done so far, the time left. Then, with the last run's
// time in its manifest set to 10 ms, a forced rerun of the same config
// says that it runs slower than that run and asks whether the machine is
// busy.
func TestProfileProgressTellsTimeLeft(t *testing.T) {
	requireORT(t)
	p := newProject(t, "measure.yaml")
	if _, errs, code := p.cli("run", "profile", "--progress-every", "0s"); code != 2 || !strings.Contains(errs, "--progress-every 0s: want a positive duration") {
		t.Errorf("--progress-every 0s: exit %d:\n%s", code, errs)
	}
	_, errs, code := p.cli("run", "profile", "--progress-every", "50ms")
	if code != 0 {
		t.Fatalf("run profile: exit %d:\n%s", code, errs)
	}
	line := regexp.MustCompile(`(?m)^mlsched: running profile \S+ +(\d+)%(, about (\S+) left)?(.*)$`)
	ms := line.FindAllStringSubmatch(errs, -1)
	if len(ms) < 3 {
		t.Fatalf("%d progress lines, want several:\n%s", len(ms), errs)
	}
	last, etas := -1, 0
	for _, m := range ms {
		pct, _ := strconv.Atoi(m[1])
		if pct < last || pct > 100 {
			t.Errorf("progress went from %d%% to %d%%:\n%s", last, pct, errs)
		}
		last = pct
		if m[3] != "" {
			if _, err := time.ParseDuration(m[3]); err != nil {
				t.Errorf("time left %q: %v", m[3], err)
			}
			etas++
		}
		if strings.Contains(m[4], "busy") {
			t.Errorf("a first run compared with a last run: %q", m[0])
		}
	}
	if etas == 0 || last == 0 {
		t.Errorf("no line tells the time left (last at %d%%):\n%s", last, errs)
	}

	manifests, err := filepath.Glob(filepath.Join(p.dir, "data", "profile", "*", pipeline.ManifestName))
	if err != nil || len(manifests) != 1 {
		t.Fatalf("profile manifests %v (%v), want one", manifests, err)
	}
	b, err := os.ReadFile(manifests[0])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["duration_s"]; !ok {
		t.Fatalf("manifest has no duration: %s", b)
	}
	m["duration_s"] = 0.01
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(manifests[0], b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, code = p.cli("run", "--force", "profile", "--progress-every", "50ms")
	if code != 0 {
		t.Fatalf("run --force profile: exit %d:\n%s", code, errs)
	}
	if busy := regexp.MustCompile(`(?m)^mlsched: running profile .*, about \S+ left, \d+(\.\d)?× the 10ms its last run with this config took: is the machine busy\?$`); !busy.MatchString(errs) {
		t.Errorf("the rerun never says it is slower than the last run:\n%s", errs)
	}
}

package main

// The end-to-end tests of issue 29's findings on damaged bytes and on
// what gc keeps: each damages a store, a published copy or a project the
// way the finding did, through the real CLI, and holds mlsched to noticing.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/pipeline"
	"github.com/mlsched/mlsched/stages/lib/ort/orttest"
)

// flipByte changes the byte at offset at of path in place and restores the
// file's mtime, so that only its bytes tell: what a disk's fault or a
// careless tool leaves.
func flipByte(t *testing.T, path string, at int64) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, at); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, at); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
}

// only returns the one file pattern matches under the project, failing
// the test otherwise.
func (p *project) only(pattern string) string {
	p.t.Helper()
	m, err := filepath.Glob(filepath.Join(p.dir, filepath.FromSlash(pattern)))
	if err != nil || len(m) != 1 {
		p.t.Fatalf("%s matches %v (%v), want one file", pattern, m, err)
	}
	return m[0]
}

// TestDamagedMemoEntryIsRecomputed (issue 29, item 4): a byte flipped in
// the middle of a sweep point's memo entry, its mtime kept, made every
// later run of schedule fail ("reading page index … unexpected EOF"),
// forced or with another policy list. The run now computes the entry
// again, says so, and makes what a clean run made.
func TestDamagedMemoEntryIsRecomputed(t *testing.T) {
	p := newProject(t, "tiny.yaml")
	p.mustCLI("run")
	clean := stageOutputs(t, p.read("pipeline.lock"))
	entries, _ := filepath.Glob(filepath.Join(p.dir, "data", ".memo", "schedule", "*", "point.parquet"))
	if len(entries) < 2 {
		t.Fatalf("memo entries %v", entries)
	}
	damaged := entries[len(entries)/2]
	fi, err := os.Stat(damaged)
	if err != nil {
		t.Fatal(err)
	}
	flipByte(t, damaged, fi.Size()/2)
	key := filepath.Base(filepath.Dir(damaged))

	for _, args := range [][]string{
		{"run", "--force", "schedule"},
		{"run", "--force", "schedule", "--set", "schedule.policies=fifo,edf,random"},
	} {
		out := p.mustCLI(args...)
		if got := outcomes(out)["schedule"]; got != "ran" {
			t.Errorf("mlsched %s: schedule %s, want ran\n%s", strings.Join(args, " "), got, out)
		}
		if args[len(args)-1] == "schedule" && !strings.Contains(out, "1 damaged memo entry computed again: "+key[:16]+": point.parquet changed since it was written") {
			t.Errorf("mlsched %s does not say it computed the damaged entry %.16s again:\n%s", strings.Join(args, " "), key, out)
		}
	}
	if out := p.mustCLI("verify"); !strings.Contains(out, "all intact") {
		t.Errorf("verify after the rerun:\n%s", out)
	}
	p.mustCLI("run")
	if got := stageOutputs(t, p.read("pipeline.lock")); got["schedule"] != clean["schedule"] {
		t.Errorf("schedule's output %.16s after the entry was computed again, a clean run's %.16s", got["schedule"], clean["schedule"])
	}
	if out := p.mustCLI("run", "--force", "schedule"); strings.Contains(out, "damaged") {
		t.Errorf("the entry computed again is damaged still:\n%s", out)
	}
}

// read returns a file of the project.
func (p *project) read(name string) []byte {
	p.t.Helper()
	b, err := os.ReadFile(filepath.Join(p.dir, filepath.FromSlash(name)))
	if err != nil {
		p.t.Fatal(err)
	}
	return b
}

// stageOutputs returns each stage's output digest in a lock file.
func stageOutputs(t *testing.T, b []byte) map[string]string {
	t.Helper()
	var lf pipeline.LockFile
	if err := json.Unmarshal(b, &lf); err != nil {
		t.Fatalf("lock file: %v", err)
	}
	out := map[string]string{}
	for st, e := range lf.Stages {
		out[st] = e.Output
	}
	return out
}

// sha256Of returns the hex SHA-256 of a file's bytes.
func sha256Of(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestStageRefusesDamagedInputs (issue 29, item 7): with their mtimes and
// sizes kept, "tree_weight": 1 made 3 in train's stored predictor.json,
// and a byte of the stored placement network's weights changed, each
// changed schedule's output with exit 0. A stage now checks the bytes of
// what it reads before it runs: it refuses, naming the file and both
// digests, and the next plain run rebuilds train, and with it what a
// clean run made.
func TestStageRefusesDamagedInputs(t *testing.T) {
	tests := []struct {
		name string
		file string
		// learned asks for the placement network (a learned policy), which
		// train trains only then.
		learned bool
		damage  func(t *testing.T, path string)
	}{
		{"a predictor's weight edited", "predictor.json", false, func(t *testing.T, path string) {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			edited := bytes.Replace(b, []byte(`"tree_weight": 1`), []byte(`"tree_weight": 3`), 1)
			if bytes.Equal(edited, b) {
				t.Fatalf("%s has no \"tree_weight\": 1:\n%s", path, b)
			}
			if err := os.WriteFile(path, edited, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
		}},
		{"a network's weight changed", "placement.onnx", true, func(t *testing.T, path string) {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			flipByte(t, path, fi.Size()/2) // the file is its weights, nearly all of it
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProject(t, "tiny.yaml")
			if tt.learned {
				lib, _ := orttest.Library(t)
				p.env = []string{"MLSCHED_SCHEDULE__POLICIES=fifo,edf,learned", "ONNXRUNTIME_LIB=" + lib}
			}
			p.mustCLI("run")
			clean := stageOutputs(t, p.read("pipeline.lock"))
			path := p.only("data/train/*/" + tt.file)
			recorded := sha256Of(t, path)
			tt.damage(t, path)
			onDisk := sha256Of(t, path)
			version := filepath.Base(filepath.Dir(path))

			out, errs, code := p.cli("run", "--force", "schedule")
			if code != 1 || outcomes(out)["schedule"] != "failed" {
				t.Fatalf("run --force schedule on a damaged %s: exit %d, %v, want 1 and schedule failed\n%s%s", tt.file, code, outcomes(out), out, errs)
			}
			for _, want := range []string{"stage schedule: ", "nothing was run", "input train@" + version + ": ",
				tt.file + " damaged (sha256 " + onDisk + " on disk, " + recorded + " in its manifest)", "next 'mlsched run' rebuilds it"} {
				if !strings.Contains(errs, want) {
					t.Errorf("the refusal does not say %q:\n%s", want, errs)
				}
			}
			out = p.mustCLI("run")
			if got := outcomes(out); got["train"] != "ran" {
				t.Errorf("the run after the refusal: %v, want train rebuilt\n%s", got, out)
			}
			if got := sha256Of(t, path); got != recorded {
				t.Errorf("train's %s after the rebuild: sha256 %s, recorded %s", tt.file, got, recorded)
			}
			if got := stageOutputs(t, p.read("pipeline.lock")); got["schedule"] != clean["schedule"] || got["train"] != clean["train"] {
				t.Errorf("outputs after the rebuild %v, a clean run's %v", got, clean)
			}
			if out := p.mustCLI("verify"); !strings.Contains(out, "all intact") {
				t.Errorf("verify after the rebuild:\n%s", out)
			}
		})
	}
}

// TestTwoConfigsInOneFolder (issue 29, item 2): `mlsched --config
// other.yaml run; mlsched gc` removed pipeline.yaml's current versions,
// its profile included, since both configs wrote one pipeline.lock, and
// `run --locked` then failed. Each config keeps its own lock file now,
// and gc keeps what every config's names, saying so.
func TestTwoConfigsInOneFolder(t *testing.T) {
	p := newProject(t, "tiny.yaml")
	p.mustCLI("run")
	lock := p.read("pipeline.lock")
	other := bytes.Replace(p.read("pipeline.yaml"), []byte("seed: 3"), []byte("seed: 4"), 1)
	if err := os.WriteFile(filepath.Join(p.dir, "other.yaml"), other, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := outcomes(p.mustCLI("--config", "other.yaml", "run")); !allOutcome(got, "ran") {
		t.Fatalf("the other config's run: %v, want every stage ran (another seed)", got)
	}
	if !bytes.Equal(p.read("pipeline.lock"), lock) {
		t.Errorf("the other config's run rewrote pipeline.lock")
	}
	if _, err := os.Stat(filepath.Join(p.dir, "other.lock")); err != nil {
		t.Errorf("the other config's run left no other.lock: %v", err)
	}
	for _, keep := range []string{"1", "0"} {
		out := p.mustCLI("gc", "--keep", keep)
		if !strings.Contains(out, "gc: keeping what pipeline.lock and other.lock name") || !strings.Contains(out, "Removed 0 version(s)") {
			t.Errorf("gc --keep %s:\n%s\nwant it to keep what both lock files name, and remove nothing", keep, out)
		}
	}
	for _, config := range []string{"pipeline.yaml", "other.yaml"} {
		if got := outcomes(p.mustCLI("--config", config, "run", "--locked")); !allOutcome(got, "cached") {
			t.Errorf("run --locked of %s after gc: %v, want every stage cached", config, got)
		}
	}
}

// TestGCKeepsWhatKeptVersionsWereMadeFrom (issue 29, item 15): with train
// pinned, a new generate.train.seed reran generate while schedule stayed
// cached by early cutoff, its manifest naming the generate version before.
// gc --dry-run listed that version for removal, among 213 lines of memo
// entries. gc keeps it now, and says what it removes by stage, not entry
// by entry (--verbose lists them).
func TestGCKeepsWhatKeptVersionsWereMadeFrom(t *testing.T) {
	p := newProject(t, "tiny.yaml")
	p.mustCLI("run")
	p.mustCLI("pin", "train")
	// Another seed's versions and sweep simulations, for gc to remove.
	p.mustCLI("run", "--set", "seed=4")
	sets := []string{"--set", "generate.train.seed=5"}
	if got := outcomes(p.mustCLI(append([]string{"run"}, sets...)...)); got["generate"] != "ran" || got["schedule"] != "cached" {
		t.Fatalf("run with a new train seed: %v, want generate ran and schedule cached", got)
	}
	var m pipeline.Manifest
	if err := json.Unmarshal(p.read("data/schedule/"+lockVersions(t, p.read("pipeline.lock"))["schedule"]+"/manifest.json"), &m); err != nil {
		t.Fatal(err)
	}
	made := map[string]string{}
	for _, u := range m.Inputs.Upstream {
		made[u.Stage] = u.Version
	}
	if lockVersions(t, p.read("pipeline.lock"))["generate"] == made["generate"] {
		t.Fatalf("schedule's manifest names generate@%s, the lock file's: the test shows nothing", made["generate"])
	}

	out := p.mustCLI(append([]string{"gc", "--keep", "0", "--dry-run"}, sets...)...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) > 12 || strings.Contains(out, "memo entry") || !strings.Contains(out, "memo entries, ") || !regexp.MustCompile(`(?m)^  schedule +\d+ entries +\S+ \S+$`).MatchString(out) {
		t.Errorf("gc --dry-run prints %d lines, want a summary by stage:\n%s", len(lines), out)
	}
	verbose := p.mustCLI(append([]string{"gc", "--keep", "0", "--dry-run", "--verbose"}, sets...)...)
	var memos int
	if _, err := fmt.Sscanf(verbose[strings.LastIndex(verbose, "Would remove"):], "Would remove %d version(s) and %d memo entries", new(int), &memos); err != nil || memos == 0 || strings.Count(verbose, "would remove schedule memo entry ") != memos {
		t.Errorf("gc --dry-run --verbose lists %d memo entries (%v), want each of them:\n%s", strings.Count(verbose, "memo entry "), err, verbose)
	}
	for stage, v := range made {
		if strings.Contains(verbose, stage+"@"+v) {
			t.Errorf("gc --dry-run --verbose would remove %s@%s, which the kept schedule version was made from:\n%s", stage, v, verbose)
		}
	}
	p.mustCLI(append([]string{"gc", "--keep", "0"}, sets...)...)
	for stage, v := range made {
		if _, err := os.Stat(filepath.Join(p.dir, "data", stage, v, pipeline.ManifestName)); err != nil {
			t.Errorf("gc removed %s@%s, which the kept schedule version was made from: %v", stage, v, err)
		}
	}
	if out := p.mustCLI("verify"); !strings.Contains(out, "all intact") {
		t.Errorf("verify after gc:\n%s", out)
	}
	if got := outcomes(p.mustCLI(append([]string{"run", "--locked"}, sets...)...)); got["schedule"] != "cached" || got["evaluate"] != "cached" {
		t.Errorf("run --locked after gc: %v, want everything where it was", got)
	}
}

// TestPublishedCopiesAreChecked (issue 29, item 8): a byte flipped in a
// published copy in models/ or reports/, its mtime kept, passed run, run
// --force and verify ("all intact"). verify now names each such copy with
// both digests, and a plain run puts the stored bytes back.
func TestPublishedCopiesAreChecked(t *testing.T) {
	p := newProject(t, "tiny.yaml")
	p.mustCLI("run")
	// (tiny.yaml has no learned policy, so no placement network is
	// trained or published.)
	copies := []string{"models/predictor.json", "reports/report.md"}
	recorded := map[string]string{}
	for _, c := range copies {
		path := filepath.Join(p.dir, filepath.FromSlash(c))
		recorded[c] = sha256Of(t, path)
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		flipByte(t, path, fi.Size()/2)
	}
	out, _, code := p.cli("verify")
	if code != 1 {
		t.Errorf("verify with damaged published copies: exit %d, want 1\n%s", code, out)
	}
	for _, c := range copies {
		want := "DAMAGED .*: " + regexp.QuoteMeta(c) + ": published copy changed: sha256 " + sha256Of(t, filepath.Join(p.dir, filepath.FromSlash(c))) + ", .* records " + recorded[c]
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("verify does not say %q:\n%s", want, out)
		}
	}
	if got := outcomes(p.mustCLI("run")); !allOutcome(got, "cached") {
		t.Errorf("run: %v, want every stage cached", got)
	}
	for _, c := range copies {
		if got := sha256Of(t, filepath.Join(p.dir, filepath.FromSlash(c))); got != recorded[c] {
			t.Errorf("%s after a run: sha256 %s, the stored file's %s", c, got, recorded[c])
		}
	}
	if out := p.mustCLI("verify"); !strings.Contains(out, "all intact") {
		t.Errorf("verify after the run:\n%s", out)
	}
}

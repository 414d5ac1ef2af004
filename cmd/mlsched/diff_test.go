package main

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/stages/evaluate/golden"
)

// TestDiff runs the tiny pipeline twice, the second time with half the
// eval jobs, and sets the two runs side by side with mlsched diff: the
// table and the Markdown against testdata/diff.txt and diff.md (go test
// ./cmd/mlsched -run Diff -update rewrites them), every way of naming the
// runs, the lean build, and the errors. Diff writes nothing.
func TestDiff(t *testing.T) {
	p := newProject(t, "tiny.yaml")
	p.mustCLI("run")
	if _, errs, code := p.cli("diff"); code != exitUsage || !strings.Contains(errs, "the store data holds one evaluate version, and diff without arguments compares the two newest") {
		t.Errorf("mlsched diff after one run: exit %d, stderr %q; want exit 2 saying there is one run", code, errs)
	}
	first := p.read("pipeline.lock")
	p.mustCLI("run", "--set", "generate.eval.jobs=500")
	second := p.read("pipeline.lock")
	va, vb := lockVersions(t, first), lockVersions(t, second)
	mask, maskMarkdown := versionMask(t, va, vb, 8), versionMask(t, va, vb, 0)
	for name, b := range map[string][]byte{"first.lock": first, "other.lock": first, "other.yaml": p.read("pipeline.yaml"), "notes.txt": []byte("not a run\n"),
		"empty.lock": []byte(`{"schema": 1, "stages": {}}`), "bad.lock": []byte("garbage")} {
		if err := os.WriteFile(filepath.Join(p.dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := tree(t, p.dir)

	text := p.mustCLI("diff")
	golden.Check(t, "diff.txt", []byte(mask(text)), "mlsched diff")
	md := p.mustCLI("diff", "--markdown")
	golden.Check(t, "diff.md", []byte(maskMarkdown(md)), "mlsched diff --markdown")

	// However the runs are named, the tables are the same: only the two
	// lines that say how each was found differ.
	tables := func(out string) string {
		_, rest, _ := strings.Cut(out, "\n\n")
		return rest
	}
	for _, args := range [][]string{
		{"evaluate@" + va["evaluate"], vb["evaluate"][:8]},
		{va["evaluate"][:6]}, // B: the current run, pipeline.lock's
		{"first.lock", "pipeline.lock"},
		{"first.lock"},
		{"other.yaml", "pipeline.yaml"}, // a config's last run, in its lock file
	} {
		out := p.mustCLI(append([]string{"diff"}, args...)...)
		if tables(out) != tables(text) {
			t.Errorf("mlsched diff %s gives other tables than mlsched diff:\n%s", strings.Join(args, " "), out)
		}
	}
	if out := p.mustCLI("diff", "first.lock"); !strings.Contains(out, "A  evaluate@"+va["evaluate"][:8]+"  recorded in first.lock\n") ||
		!strings.Contains(out, "B  evaluate@"+vb["evaluate"][:8]+"  the current run, recorded in pipeline.lock\n") {
		t.Errorf("mlsched diff first.lock does not say where A and B come from:\n%s", out)
	}
	if out := p.mustCLI("diff", "other.yaml"); !strings.Contains(out, "the last run of other.yaml, recorded in other.lock") {
		t.Errorf("mlsched diff other.yaml does not say where A comes from:\n%s", out)
	}
	// The lean build hands diff to the full one beside it.
	if out, errs, code := p.cliOf(leanBin, "diff"); code != 0 || out != text {
		t.Errorf("the lean build's mlsched diff: exit %d, stderr %s, output:\n%s", code, errs, out)
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"nosuch"}, "nosuch: no such file, nor an evaluate version"},
		{[]string{"ffffffff"}, "evaluate@ffffffff: no such version"},
		{[]string{"evaluate@xyz"}, "evaluate@xyz: a version is hex digits"},
		{[]string{"schedule@" + va["schedule"]}, "diff compares runs by their evaluate version"},
		{[]string{"notes.txt"}, "notes.txt (10 bytes) is neither a lock file nor a config"},
		{[]string{"missing.lock"}, "missing.lock"},
		{[]string{"data"}, "data: a directory, not a regular file"},
		{[]string{"empty.lock"}, "empty.lock records no evaluate version"},
		{[]string{"bad.lock"}, "bad.lock: not a valid lock file"},
		{[]string{"first.lock", "pipeline.lock", "other.lock"}, "accepts at most 2 arg(s)"},
	} {
		_, errs, code := p.cli(append([]string{"diff"}, tt.args...)...)
		if code != exitUsage || !strings.Contains(errs, tt.want) {
			t.Errorf("mlsched diff %s: exit %d, stderr %q; want exit 2 naming %q", strings.Join(tt.args, " "), code, errs, tt.want)
		}
	}
	if after := tree(t, p.dir); !maps.Equal(after, before) {
		t.Errorf("mlsched diff changed the project: %v", changed(before, after))
	}

	// A run whose metrics.parquet is damaged or missing fails, naming it.
	metrics := func(v string) string { return filepath.Join(p.dir, "data", "evaluate", v, "metrics.parquet") }
	flipByte(t, metrics(va["evaluate"]), 100)
	before = tree(t, p.dir)
	if _, errs, code := p.cli("diff"); code != exitFailed || !strings.Contains(errs, "evaluate@"+va["evaluate"]+": data/evaluate/"+va["evaluate"]+"/metrics.parquet is damaged") {
		t.Errorf("mlsched diff with A's metrics.parquet damaged: exit %d, stderr %q", code, errs)
	}
	if after := tree(t, p.dir); !maps.Equal(after, before) {
		t.Errorf("mlsched diff on a damaged store changed the project: %v", changed(before, after))
	}
	flipByte(t, metrics(va["evaluate"]), 100)
	if err := os.Rename(metrics(vb["evaluate"]), filepath.Join(p.dir, "moved.parquet")); err != nil {
		t.Fatal(err)
	}
	before = tree(t, p.dir)
	if _, errs, code := p.cli("diff"); code != exitFailed || !strings.Contains(errs, "data/evaluate/"+vb["evaluate"]+"/metrics.parquet is missing") {
		t.Errorf("mlsched diff with B's metrics.parquet missing: exit %d, stderr %q", code, errs)
	}
	if after := tree(t, p.dir); !maps.Equal(after, before) {
		t.Errorf("mlsched diff on a damaged store changed the project: %v", changed(before, after))
	}
}

// versionMask replaces, in diff's output, each stage's version in run A
// (as diff shows it, 8 digits) with the stage's first three letters and
// A, and one that differs in run B with them and B, padded to width: the
// code's version is part of every stage's, so the versions change with
// every edit of a stage, and the golden files would with them. A width of
// 8 keeps a table's columns aligned. The mask fails the test if a version
// is left, so a version diff printed that neither run has shows.
func versionMask(t *testing.T, a, b map[string]string, width int) func(string) string {
	var pairs []string
	for _, stage := range slices.Sorted(maps.Keys(a)) {
		pairs = append(pairs, a[stage][:8], fmt.Sprintf("%-*s", width, stage[:3]+"-A"))
		if b[stage] != a[stage] {
			pairs = append(pairs, b[stage][:8], fmt.Sprintf("%-*s", width, stage[:3]+"-B"))
		}
	}
	r := strings.NewReplacer(pairs...)
	version := regexp.MustCompile(`\b[0-9a-f]{8}\b`)
	return func(out string) string {
		masked := r.Replace(out)
		if left := version.FindAllString(masked, -1); left != nil {
			t.Errorf("diff shows versions neither run has: %v", left)
		}
		return masked
	}
}

// tree is every file and folder below dir with its size, mode and
// modification time: what a command that writes nothing leaves as it
// was.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out[path] = fmt.Sprintf("%d %v %d", fi.Size(), fi.Mode(), fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// changed names the paths whose entries differ between two trees.
func changed(before, after map[string]string) []string {
	var out []string
	for p, v := range before {
		if after[p] != v {
			out = append(out, p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

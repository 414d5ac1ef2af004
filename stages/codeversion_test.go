package stages

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mlsched/mlsched/pipeline/codeversion"
)

// TestCodeVersionsUpToDate fails when a stage's code changed but the
// committed fingerprints did not: stale code versions would let old cached
// outputs pass for new ones.
func TestCodeVersionsUpToDate(t *testing.T) {
	want, err := codeversion.Generate("..", "stages", "stages/codeversion_gen.go", "stages")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("codeversion_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("stale code versions in stages/codeversion_gen.go: run 'make build' and commit the result\nhave:\n%s\nwant:\n%s", got, want)
	}
}

// TestEveryStageHasACodeVersion checks that the registry finds a fingerprint
// for every stage it builds.
func TestEveryStageHasACodeVersion(t *testing.T) {
	reg, err := Registry(DefaultConfig(), Runtime{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := reg.Graph()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range g.Names() {
		if s := g.Stage(name); len(s.Code) != 64 {
			t.Errorf("stage %s: code version %q", name, s.Code)
		}
	}
}

// TestCodeVersionsAreNarrow edits a copy of the module and checks that a
// stage's code version moves with the code it runs and no other: a file
// that only the profile stage uses changes profile's version alone, one
// that only evaluate uses evaluate's alone, and the metrics library
// (schedule's sweep and evaluate read it) changes theirs but not train's,
// whose labelling is the pipeline's slowest step.
func TestCodeVersionsAreNarrow(t *testing.T) {
	root := copyModule(t)
	stagePkgs := make([]string, len(Names()))
	for i, s := range Names() {
		stagePkgs[i] = "stages/" + s
	}
	versions := func() map[string]string {
		t.Helper()
		v, err := codeversion.Compute(root, stagePkgs)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := versions()
	for _, tc := range []struct {
		file    string
		changes []string
	}{
		{"stages/profile/measure.go", []string{Profile}},
		{"stages/evaluate/chart/chart.go", []string{Evaluate}},
		{"stages/lib/metrics/summary.go", []string{Evaluate, Schedule}},
		{"stages/lib/zoo/mlp.go", []string{Profile, Schedule, Train}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join(root, filepath.FromSlash(tc.file))
			orig, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			// A declaration the compiler sees, not a comment (which the
			// fingerprint ignores).
			if err := os.WriteFile(path, append(slices.Clip(orig), "\nvar _ = 42\n"...), 0o644); err != nil {
				t.Fatal(err)
			}
			defer os.WriteFile(path, orig, 0o644)
			after := versions()
			var changed []string
			for _, s := range Names() {
				if after["stages/"+s] != before["stages/"+s] {
					changed = append(changed, s)
				}
			}
			if want := slices.Sorted(slices.Values(tc.changes)); !slices.Equal(changed, want) {
				t.Errorf("editing %s changed the code versions of %v, want %v", tc.file, changed, want)
			}
		})
	}
}

// copyModule copies the module's Go sources, embedded files and go.mod and
// go.sum into a temporary directory, leaving out the store, the tools and
// everything else no package builds from.
func copyModule(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	src, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	skip := map[string]bool{".git": true, ".tools": true, "data": true, "bin": true, "models": true, "reports": true, "docs": true, "testdata": true}
	err = filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			if skip[d.Name()] && rel != "." {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

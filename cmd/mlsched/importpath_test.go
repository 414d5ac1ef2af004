package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestImportPathIsNoPartOfTheKey checks, through the real CLI, that where
// an imported file lies, and how the config spells its path, is no part
// of a stage's key: the same profile and eval workload named by relative
// paths, by absolute ones, and from a folder outside the project keep
// profile and generate at their versions, up to date and cached. Renaming
// a file reruns its stage (its name, which says its format, is kept in
// the key), and status says so.
func TestImportPathIsNoPartOfTheKey(t *testing.T) {
	p := newProject(t, "tiny.yaml")
	tiny, err := os.ReadFile(filepath.Join("testdata", "tiny.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	workload, err := os.ReadFile(filepath.Join("..", "..", "docs", "examples", "workload.csv"))
	if err != nil {
		t.Fatal(err)
	}
	profile, err := os.ReadFile(filepath.Join(p.dir, "imported-profile.csv"))
	if err != nil {
		t.Fatal(err)
	}
	put := func(dir string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range map[string][]byte{"imported-profile.csv": profile, "workload.csv": workload} {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	put(filepath.Join(p.dir, "inputs"))
	elsewhere := t.TempDir()
	put(elsewhere)
	// config writes tiny.yaml importing the profile and the eval workload
	// from the paths given, as a user edits the file.
	config := func(profile, workload string) {
		t.Helper()
		s := strings.Replace(string(tiny), "import: imported-profile.csv", "import: "+profile, 1)
		s = strings.Replace(s, "  eval:\n    jobs: 1000\n", "  eval:\n    jobs: 1000\n    import: "+workload+"\n", 1)
		if !strings.Contains(s, "import: "+workload) || !strings.Contains(s, "import: "+profile) {
			t.Fatalf("tiny.yaml changed: its imports could not be set")
		}
		if err := os.WriteFile(filepath.Join(p.dir, "pipeline.yaml"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// versions parses the version of profile and generate from the lines
	// of run or status.
	versions := func(out string) string {
		var v []string
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) >= 3 && (f[0] == "profile" || f[0] == "generate") {
				v = append(v, f[0]+"@"+f[2])
			}
		}
		slices.Sort(v)
		return strings.Join(v, " ")
	}

	config("inputs/imported-profile.csv", "inputs/workload.csv")
	out := p.mustCLI("run", "profile", "generate")
	if got := outcomes(out); got["profile"] != "ran" || got["generate"] != "ran" {
		t.Fatalf("first run:\n%s", out)
	}
	want := versions(out)
	for _, c := range []struct{ name, profile, workload string }{
		{"absolute", filepath.Join(p.dir, "inputs", "imported-profile.csv"), filepath.Join(p.dir, "inputs", "workload.csv")},
		{"relative another way", "./inputs/../inputs/imported-profile.csv", "inputs//workload.csv"},
		{"outside the project", filepath.Join(elsewhere, "imported-profile.csv"), filepath.Join(elsewhere, "workload.csv")},
	} {
		config(c.profile, c.workload)
		st := p.mustCLI("status", "profile", "generate")
		if got := outcomes(st); got["profile"] != "up-to-date" || got["generate"] != "up-to-date" || versions(st) != want {
			t.Errorf("%s paths: status\n%s\nwant profile and generate up to date, at %s", c.name, st, want)
		}
		out := p.mustCLI("run", "profile", "generate")
		if got := outcomes(out); got["profile"] != "cached" || got["generate"] != "cached" || versions(out) != want {
			t.Errorf("%s paths: run\n%s\nwant profile and generate cached, at %s", c.name, out, want)
		}
	}

	if err := os.Rename(filepath.Join(elsewhere, "workload.csv"), filepath.Join(elsewhere, "jobs.csv")); err != nil {
		t.Fatal(err)
	}
	config(filepath.Join(elsewhere, "imported-profile.csv"), filepath.Join(elsewhere, "jobs.csv"))
	st := p.mustCLI("status", "profile", "generate")
	if got := outcomes(st); got["profile"] != "up-to-date" || got["generate"] != "stale" ||
		!strings.Contains(st, `config generate.eval.import: "workload.csv" → "jobs.csv"`) {
		t.Errorf("a renamed workload: status\n%s\nwant generate stale, naming the file's new name", st)
	}
}

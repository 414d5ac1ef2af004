package stages

import (
	"os"
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

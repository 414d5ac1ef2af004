package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestErrorsNameTheInputTheUserSet: a config error names the key the user
// set and where they set it (a --set argument, a variable), even when the
// rule it breaks spans several keys, or is checked where the config's
// files are read.
func TestErrorsNameTheInputTheUserSet(t *testing.T) {
	p := newProject(t, "tiny.yaml")
	for _, tt := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"a joint limit names the key set last", nil, []string{"--set", "generate.eval.jobs=1000000000000"},
			"--set generate.eval.jobs=1000000000000: generate.eval.jobs: 1000000000000 jobs at "},
		{"and the other key when that was set last", nil, []string{"--set", "generate.eval.jobs=2000000", "--set", "generate.eval.arrival.rate=0.001"},
			"--set generate.eval.arrival.rate=0.001: generate.eval.arrival.rate: 2000000 jobs at 0.001 per second"},
		{"a missing import names the --set argument", nil, []string{"--set", "profile.import=fifo.csv"},
			"--set profile.import=fifo.csv: profile.import: "},
		{"and the variable", []string{"MLSCHED_PROFILE__IMPORT=fifo.csv"}, nil,
			"env MLSCHED_PROFILE__IMPORT: profile.import: "},
		{"a bad repeats is one error", nil, []string{"--set", "profile.repeats=9223372036854775807"},
			"--set profile.repeats=9223372036854775807: profile.repeats: must be in [1, 1000000], got 9223372036854775807"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p.env = tt.env
			_, errs, code := p.cli(append([]string{"status"}, tt.args...)...)
			if code != 2 || !strings.Contains(errs, tt.want) {
				t.Errorf("exit %d\n%s\nwant %q", code, errs, tt.want)
			}
			if strings.Contains(errs, "max_repeats") {
				t.Errorf("a bad repeats also blames max_repeats:\n%s", errs)
			}
			if _, err := os.Stat(filepath.Join(p.dir, "data", "generate")); err == nil {
				t.Error("a config error wrote a version")
			}
		})
	}
}

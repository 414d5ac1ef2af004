package config

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad feeds Load random YAML, a random --set argument and a random
// environment value. Under plain go test it runs the seed corpus below and
// the files in testdata; with -fuzz=FuzzLoad it searches for inputs that
// panic or break these properties:
//
//   - a failed Load returns Errors, every one with text and a known cause,
//     and leaves dst as it was;
//   - a successful Load gives a value Canonical can encode, and loading that
//     canonical JSON (which is YAML) back gives the same bytes.
func FuzzLoad(f *testing.F) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b), "seed=7", "3")
	}
	for _, s := range []string{
		"", "~", "- 1", "seed: [", "generate: {eval: {jobs: 1e400}}",
		"tags: {1: a, 2.5: b, null: c, true: d}", "generate: {lanes: {x: ~}}",
		"workers: [~, 1e3, -0x10, 0b1, 0o7]", "a: &a [*a]", "<<: {seed: 3}",
		"extra: {note: !!binary aGk=}", "small: -129", "count: 1.8446744073709552e19",
		"steps: [{note: a}, ~, 3]", "level: 2001-01-01", "generate: {eval: {timeout: -1.5h}}",
	} {
		f.Add(s, "generate.lanes.a.b=1", "x")
	}
	f.Add("seed: 1", "", "")
	f.Add("seed: 1", "=", "1,2")
	f.Add("seed: 1", "tags.=x", "")
	f.Add("seed: 1", "workers=1,,2", "0x7fffffffffffffff")

	f.Fuzz(func(t *testing.T, yaml, set, envValue string) {
		path := filepath.Join(t.TempDir(), "pipeline.yaml")
		if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		opts := Options{
			File:      path,
			Env:       []string{"MLSCHED_SEED=" + envValue, "MLSCHED_GENERATE__MODELS=" + envValue, "MLSCHED_TAGS__K=" + envValue},
			EnvPrefix: "MLSCHED_",
			Sets:      []string{set},
		}
		cfg := defaults()
		err := Load(opts, &cfg)
		if err != nil {
			var errs Errors
			if !errors.As(err, &errs) || len(errs) == 0 {
				t.Fatalf("Load() = %v (%T), want non-empty Errors", err, err)
			}
			for _, e := range errs {
				known := errors.Is(e, ErrUnknownKey) || errors.Is(e, ErrInvalidValue) ||
					errors.Is(e, ErrSyntax) || errors.Is(e, ErrUsage) || errors.As(e, new(*fs.PathError))
				if e.Error() == "" || !known {
					t.Errorf("error %q (cause %v) has no text or no known cause", e, e.Err)
				}
			}
			cmp, _ := Canonical(defaults())
			if got, _ := Canonical(cfg); !bytes.Equal(got, cmp) {
				t.Errorf("failed Load changed dst to %s", got)
			}
			return
		}
		canon, err := Canonical(cfg)
		if err != nil {
			t.Fatalf("Canonical() after a successful Load = %v", err)
		}
		if err := os.WriteFile(path, canon, 0o644); err != nil {
			t.Fatal(err)
		}
		again := defaults()
		if err := Load(Options{File: path}, &again); err != nil {
			if errors.Is(err, ErrSyntax) {
				// JSON string escapes are a superset of what a YAML parser
				// must accept unescaped (some control characters); such a
				// value cannot round-trip through a file, which is fine.
				return
			}
			t.Fatalf("Load(canonical %s) = %v", canon, err)
		}
		if got, _ := Canonical(again); !bytes.Equal(got, canon) {
			t.Errorf("canonical form does not round-trip:\nfirst  %s\nsecond %s", canon, got)
		}
	})
}

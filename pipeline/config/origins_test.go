package config

import (
	"errors"
	"fmt"
	"testing"
)

// TestAttribute checks that the app's validation errors, which name keys,
// are attributed to the input that set the key: a range error for a --set
// value names the --set argument, not the file.
func TestAttribute(t *testing.T) {
	file := writeYAML(t, "seed: 2\nratio: 0.5\ngenerate:\n  weights: {a: 1, b: 2}\n  lanes: {gpu: {count: 2}}\nsteps: [{depth: 1}, {depth: 2}]\n")
	cfg := defaults()
	var origins Origins
	err := Load(Options{
		File: file, EnvPrefix: "MLSCHED_", Env: []string{"MLSCHED_MAX_JOBS=7"},
		Sets:    []string{"ratio=1e-300", "generate.weights.b=0", "steps[1].depth=-1", "generate.lanes.gpu.speed=-2"},
		Origins: &origins,
	}, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	// What an app's Validate returns: keys, no inputs.
	invalid := func(key, msg string) error { return &Error{Key: key, Msg: msg, Err: ErrInvalidValue} }
	verr := errors.Join(
		invalid("ratio", "must be in [0.001, 1], got 1e-300"),
		invalid("seed", "must be odd"),
		invalid("max_jobs", "too many"),
		invalid("generate.weights", "weights sum to 1"), // an entry below was --set last
		invalid("generate.weights.a", "too light"),      // the file set it
		invalid("steps[1].depth", "must be positive"),
		invalid("steps[0].depth", "must be positive"),
		invalid("generate.lanes.gpu.speed", "must be positive"),
		invalid("generate.lanes.gpu", "too few"),
		invalid("name", "must go with seed"), // a default: the fallback
		errors.New("something without a key"),
		// A problem of several keys names the one set last: the
		// environment's max_jobs after the file's seed, the --set ratio
		// after both, and the first key when none was set.
		&Error{Key: "seed", Also: []string{"max_jobs"}, Msg: "seed and max_jobs clash", Err: ErrInvalidValue},
		&Error{Key: "seed", Also: []string{"ratio", "max_jobs"}, Msg: "all three clash", Err: ErrInvalidValue},
		&Error{Key: "name", Also: []string{"other"}, Msg: "neither was set", Err: ErrInvalidValue},
	)
	got := Attribute(verr, &origins, "pipeline.yaml")
	want := []string{
		"--set ratio=1e-300: ratio: must be in [0.001, 1], got 1e-300",
		file + ": seed: must be odd",
		"env MLSCHED_MAX_JOBS: max_jobs: too many",
		"--set generate.weights.b=0: generate.weights: weights sum to 1",
		file + ": generate.weights.a: too light",
		"--set steps[1].depth=-1: steps[1].depth: must be positive",
		file + ": steps[0].depth: must be positive",
		"--set generate.lanes.gpu.speed=-2: generate.lanes.gpu.speed: must be positive",
		"--set generate.lanes.gpu.speed=-2: generate.lanes.gpu: too few",
		"pipeline.yaml: name: must go with seed",
		"pipeline.yaml: something without a key",
		"env MLSCHED_MAX_JOBS: max_jobs: seed and max_jobs clash",
		"--set ratio=1e-300: ratio: all three clash",
		"pipeline.yaml: name: neither was set",
	}
	es, ok := got.(Errors)
	if !ok || len(es) != len(want) {
		t.Fatalf("Attribute() = %v, want %d errors", got, len(want))
	}
	for i, e := range es {
		if e.Error() != want[i] {
			t.Errorf("error %d = %q, want %q", i, e.Error(), want[i])
		}
	}
	if !errors.Is(got, ErrInvalidValue) {
		t.Errorf("Attribute() = %v, want it to wrap ErrInvalidValue", got)
	}
	if Attribute(nil, &origins, "x") != nil {
		t.Error("Attribute(nil) is not nil")
	}
}

// TestOriginsOfManyKeys: looking up the source of every key of a large map
// stays fast (the keys below one are found by binary search).
func TestOriginsOfManyKeys(t *testing.T) {
	var o Origins
	for i := range 100_000 {
		o.record(fmt.Sprintf("generate.weights.m%d", i), "file")
	}
	o.record("generate.weights.m5", "--set")
	for i := range 100_000 {
		if got := o.Source(fmt.Sprintf("generate.weights.m%d", i)); got == "" {
			t.Fatal("no source")
		}
	}
	if got := o.Source("generate.weights"); got != "--set" {
		t.Errorf("Source(generate.weights) = %q, want the last input below it, --set", got)
	}
	if got := o.Source("seed"); got != "" {
		t.Errorf("Source(seed) = %q, want none", got)
	}
}

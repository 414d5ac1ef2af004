package config

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestLoadFile(t *testing.T) {
	want := defaults()
	want.Seed = 42
	want.Name = "trial"
	want.Verbose = true
	want.Ratio = 2
	want.Small = -128
	want.Count = 65535
	want.MaxJobs = 1000
	want.Level = 1
	want.Limit = intPtr(7)
	want.Extra = &extraConfig{Note: "hi"}
	want.Workers = []int{4, 8}
	want.Tags = map[string]string{"team": "sched"}
	want.Generate = generateConfig{
		Eval:    evalConfig{Jobs: 2000, Timeout: 90 * time.Second},
		Models:  []string{"a", "b", "c"},
		Weights: map[string]float64{"x.y": 0.5},
		Lanes:   map[string]laneConfig{"gpu": {Count: 2}},
	}

	tests := []struct {
		file string
		want testConfig
	}{
		{"testdata/full.yaml", want},
		{"testdata/empty.yaml", defaults()},
		{"testdata/comments.yaml", defaults()},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got := defaults()
			if err := Load(Options{File: tt.file}, &got); err != nil {
				t.Fatalf("Load(%s) = %v, want nil", tt.file, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Load(%s) =\n%+v\nwant\n%+v", tt.file, got, tt.want)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		env  []string
		sets []string
		want []string // the lines of the error, exactly
		is   error    // a sentinel every reported error wraps
	}{
		// Unknown keys and suggestions.
		{
			name: "typo",
			yaml: "generate:\n  eval:\n    jobz: 5\n",
			want: []string{"pipeline.yaml: generate.eval.jobz: unknown key (did you mean generate.eval.jobs?)"},
			is:   ErrUnknownKey,
		},
		{
			name: "key one level too high",
			yaml: "generate:\n  jobs: 5\n",
			want: []string{"pipeline.yaml: generate.jobs: unknown key (did you mean generate.eval.jobs?)"},
			is:   ErrUnknownKey,
		},
		{
			name: "key at top level that belongs deeper",
			yaml: "timeout: 5s\n",
			want: []string{"pipeline.yaml: timeout: unknown key (did you mean generate.eval.timeout?)"},
			is:   ErrUnknownKey,
		},
		{
			name: "wrong case",
			yaml: "Seed: 3\n",
			want: []string{"pipeline.yaml: Seed: unknown key (did you mean seed?)"},
			is:   ErrUnknownKey,
		},
		{
			name: "unknown section",
			yaml: "generat:\n  eval: {jobs: 1}\n",
			want: []string{"pipeline.yaml: generat: unknown key (did you mean generate?)"},
			is:   ErrUnknownKey,
		},
		{
			name: "nothing close",
			yaml: "zzzzzzzz: 1\n",
			want: []string{"pipeline.yaml: zzzzzzzz: unknown key"},
			is:   ErrUnknownKey,
		},
		{
			name: "untagged field is not a key",
			yaml: "Runtime: x\n",
			want: []string{"pipeline.yaml: Runtime: unknown key"},
			is:   ErrUnknownKey,
		},
		{
			name: "unknown key inside a map value",
			yaml: "generate:\n  lanes:\n    gpu: {cuont: 1}\n",
			want: []string{"pipeline.yaml: generate.lanes.gpu.cuont: unknown key (did you mean generate.lanes.gpu.count?)"},
			is:   ErrUnknownKey,
		},
		{
			name: "unknown key inside a list element",
			yaml: "steps:\n  - {note: a}\n  - {nots: b}\n",
			want: []string{"pipeline.yaml: steps[1].nots: unknown key (did you mean steps[1].note?)"},
			is:   ErrUnknownKey,
		},

		// Wrong types in the file.
		{
			name: "string for integer",
			yaml: "generate:\n  eval:\n    jobs: abc\n",
			want: []string{`pipeline.yaml: generate.eval.jobs: want an integer, got "abc"`},
			is:   ErrInvalidValue,
		},
		{
			name: "fraction for integer",
			yaml: "generate: {eval: {jobs: 1.5}}",
			want: []string{"pipeline.yaml: generate.eval.jobs: want an integer, got 1.5"},
			is:   ErrInvalidValue,
		},
		{
			name: "bool for integer",
			yaml: "seed: true",
			want: []string{"pipeline.yaml: seed: want an integer, got true"},
			is:   ErrInvalidValue,
		},
		{
			name: "int8 out of range",
			yaml: "small: 300",
			want: []string{"pipeline.yaml: small: want an integer in [-128, 127], got 300"},
			is:   ErrInvalidValue,
		},
		{
			name: "negative for uint16",
			yaml: "count: -1",
			want: []string{"pipeline.yaml: count: want an integer in [0, 65535], got -1"},
			is:   ErrInvalidValue,
		},
		{
			name: "beyond int64",
			yaml: "seed: 9223372036854775808",
			want: []string{"pipeline.yaml: seed: want an integer in [-9223372036854775808, 9223372036854775807], got 9223372036854775808"},
			is:   ErrInvalidValue,
		},
		{
			name: "float beyond int64 after rounding",
			yaml: "seed: -9223372036854775809",
			want: []string{"pipeline.yaml: seed: want an integer in [-9223372036854775808, 9223372036854775807], got -9223372036854775808"},
			is:   ErrInvalidValue,
		},
		{
			name: "string for float",
			yaml: `ratio: "0.5"`,
			want: []string{`pipeline.yaml: ratio: want a number, got "0.5"`},
			is:   ErrInvalidValue,
		},
		{
			name: "nan for float",
			yaml: "ratio: .nan",
			want: []string{"pipeline.yaml: ratio: want a finite number, got NaN"},
			is:   ErrInvalidValue,
		},
		{
			name: "yes for bool",
			yaml: "verbose: yes",
			want: []string{`pipeline.yaml: verbose: want true or false, got "yes"`},
			is:   ErrInvalidValue,
		},
		{
			name: "number for string",
			yaml: "name: 1.0",
			want: []string{"pipeline.yaml: name: want a string, got 1 (quote it to make it a string)"},
			is:   ErrInvalidValue,
		},
		{
			name: "timestamp for string",
			yaml: "name: 2024-01-02",
			want: []string{"pipeline.yaml: name: want a string, got 2024-01-02T00:00:00Z (a timestamp) (quote it to make it a string)"},
			is:   ErrInvalidValue,
		},
		{
			name: "bare number for duration",
			yaml: "generate: {eval: {timeout: 10}}",
			want: []string{`pipeline.yaml: generate.eval.timeout: want a duration with a unit such as "10ms", got 10`},
			is:   ErrInvalidValue,
		},
		{
			name: "quoted bare number for duration",
			yaml: `generate: {eval: {timeout: "10"}}`,
			want: []string{`pipeline.yaml: generate.eval.timeout: want a duration with a unit such as "10ms", got "10"`},
			is:   ErrInvalidValue,
		},
		{
			name: "not a duration",
			yaml: "generate: {eval: {timeout: soon}}",
			want: []string{`pipeline.yaml: generate.eval.timeout: want a duration such as "10ms", got "soon"`},
			is:   ErrInvalidValue,
		},
		{
			name: "text type rejects value",
			yaml: "level: extreme",
			want: []string{`pipeline.yaml: level: cannot use "extreme": unknown level "extreme"`},
			is:   ErrInvalidValue,
		},
		{
			name: "null for scalar",
			yaml: "seed: null",
			want: []string{"pipeline.yaml: seed: want an integer, got null (delete the key to keep the default)"},
			is:   ErrInvalidValue,
		},
		{
			name: "empty section is null",
			yaml: "generate:\n",
			want: []string{"pipeline.yaml: generate: want a mapping, got null (delete the key to keep the default)"},
			is:   ErrInvalidValue,
		},
		{
			name: "scalar for section",
			yaml: "generate: 5",
			want: []string{"pipeline.yaml: generate: want a mapping, got 5"},
			is:   ErrInvalidValue,
		},
		{
			name: "scalar for list",
			yaml: "workers: 5",
			want: []string{"pipeline.yaml: workers: want a list, got 5"},
			is:   ErrInvalidValue,
		},
		{
			name: "bad list element",
			yaml: "workers: [1, x]",
			want: []string{`pipeline.yaml: workers[1]: want an integer, got "x"`},
			is:   ErrInvalidValue,
		},
		{
			name: "null list element",
			yaml: "workers: [1, ~]",
			want: []string{"pipeline.yaml: workers[1]: want an integer, got null"},
			is:   ErrInvalidValue,
		},
		{
			name: "list for map",
			yaml: "tags: [a]",
			want: []string{"pipeline.yaml: tags: want a mapping, got a list"},
			is:   ErrInvalidValue,
		},
		{
			name: "bad map value",
			yaml: "tags: {a: 1}",
			want: []string{"pipeline.yaml: tags.a: want a string, got 1 (quote it to make it a string)"},
			is:   ErrInvalidValue,
		},
		{
			name: "float map key",
			yaml: "tags: {1.5: x}",
			want: []string{"pipeline.yaml: tags: want string keys, got key 1.5"},
			is:   ErrInvalidValue,
		},
		{
			name: "all errors at once, sorted by key",
			yaml: "verbose: 1\nseed: x\ngenerate: {eval: {jobz: 1, timeout: 3}}\n",
			want: []string{
				`pipeline.yaml: generate.eval.jobz: unknown key (did you mean generate.eval.jobs?)`,
				`pipeline.yaml: generate.eval.timeout: want a duration with a unit such as "10ms", got 3`,
				`pipeline.yaml: seed: want an integer, got "x"`,
				`pipeline.yaml: verbose: want true or false, got 1`,
			},
		},

		// YAML that does not parse.
		{
			name: "syntax error with line",
			yaml: "seed: 1\nname: x\n  verbose: true\n",
			want: []string{"pipeline.yaml: line 3: mapping values are not allowed in this context"},
			is:   ErrSyntax,
		},
		{
			name: "top level is a list",
			yaml: "- 1\n",
			want: []string{"pipeline.yaml: line 1: cannot unmarshal !!seq into a mapping of keys"},
			is:   ErrSyntax,
		},
		{
			name: "duplicate key",
			yaml: "seed: 1\nseed: 2\n",
			want: []string{`pipeline.yaml: line 2: mapping key "seed" already defined at line 1`},
			is:   ErrSyntax,
		},

		// --set.
		{
			name: "set without equals",
			sets: []string{"seed"},
			want: []string{"--set seed: want key.path=value"},
			is:   ErrUsage,
		},
		{
			name: "set with empty key",
			sets: []string{"=5"},
			want: []string{"--set =5: empty key; want key.path=value"},
			is:   ErrUsage,
		},
		{
			name: "set with empty segment",
			sets: []string{"generate..jobs=1"},
			want: []string{"--set generate..jobs=1: generate..jobs: empty key segment; want key.path=value"},
			is:   ErrUsage,
		},
		{
			name: "set unknown key",
			sets: []string{"generate.eval.jobz=5"},
			want: []string{"--set generate.eval.jobz=5: generate.eval.jobz: unknown key (did you mean generate.eval.jobs?)"},
			is:   ErrUnknownKey,
		},
		{
			name: "set unknown section keeps the rest in the suggestion",
			sets: []string{"generat.eval.jobs=5"},
			want: []string{"--set generat.eval.jobs=5: generat.eval.jobs: unknown key (did you mean generate.eval.jobs?)"},
			is:   ErrUnknownKey,
		},
		{
			name: "set misplaced key",
			sets: []string{"generate.jobs=5"},
			want: []string{"--set generate.jobs=5: generate.jobs: unknown key (did you mean generate.eval.jobs?)"},
			is:   ErrUnknownKey,
		},
		{
			name: "set below a leaf",
			sets: []string{"seed.x=1"},
			want: []string{"--set seed.x=1: seed.x: unknown key (seed is an integer, not a section)"},
			is:   ErrUnknownKey,
		},
		{
			name: "set unknown key in map value",
			sets: []string{"generate.lanes.gpu.cuont=1"},
			want: []string{"--set generate.lanes.gpu.cuont=1: generate.lanes.gpu.cuont: unknown key (did you mean generate.lanes.gpu.count?)"},
			is:   ErrUnknownKey,
		},
		{
			name: "set wrong type",
			sets: []string{"generate.eval.jobs=abc"},
			want: []string{`--set generate.eval.jobs=abc: generate.eval.jobs: want an integer, got "abc"`},
			is:   ErrInvalidValue,
		},
		{
			name: "set fraction for integer",
			sets: []string{"seed=1.5"},
			want: []string{`--set seed=1.5: seed: want an integer, got "1.5"`},
			is:   ErrInvalidValue,
		},
		{
			name: "set out of range",
			sets: []string{"small=128"},
			want: []string{`--set small=128: small: want an integer in [-128, 127], got "128"`},
			is:   ErrInvalidValue,
		},
		{
			name: "set negative for unsigned",
			sets: []string{"count=-1"},
			want: []string{`--set count=-1: count: want an integer in [0, 65535], got "-1"`},
			is:   ErrInvalidValue,
		},
		{
			name: "set not a number for unsigned",
			sets: []string{"count=lots"},
			want: []string{`--set count=lots: count: want a non-negative integer, got "lots"`},
			is:   ErrInvalidValue,
		},
		{
			name: "set bool",
			sets: []string{"verbose=yes"},
			want: []string{`--set verbose=yes: verbose: want true or false, got "yes"`},
			is:   ErrInvalidValue,
		},
		{
			name: "set duration without unit",
			sets: []string{"generate.eval.timeout=10"},
			want: []string{`--set generate.eval.timeout=10: generate.eval.timeout: want a duration with a unit such as "10ms", got "10"`},
			is:   ErrInvalidValue,
		},
		{
			name: "set infinite float",
			sets: []string{"ratio=inf"},
			want: []string{`--set ratio=inf: ratio: want a finite number, got "inf"`},
			is:   ErrInvalidValue,
		},
		{
			name: "set bad list element",
			sets: []string{"workers=1,x,3"},
			want: []string{`--set workers=1,x,3: workers[1]: want an integer, got "x"`},
			is:   ErrInvalidValue,
		},
		{
			name: "set list of sections",
			sets: []string{"steps=a"},
			want: []string{"--set steps=a: steps: want a list of mappings, which cannot be written as a string; set it in the file"},
			is:   ErrInvalidValue,
		},
		{
			name: "set map value of wrong type",
			sets: []string{"generate.weights.a=abc"},
			want: []string{`--set generate.weights.a=abc: generate.weights.a: want a number, got "abc"`},
			is:   ErrInvalidValue,
		},
		{
			name: "set field of map-of-sections value of wrong type",
			sets: []string{"generate.lanes.gpu.count=many"},
			want: []string{`--set generate.lanes.gpu.count=many: generate.lanes.gpu.count: want an integer, got "many"`},
			is:   ErrInvalidValue,
		},
		{
			name: "set a section",
			sets: []string{"generate.eval=5"},
			want: []string{"--set generate.eval=5: generate.eval: a section cannot be set; set one of its keys, such as generate.eval.jobs"},
			is:   ErrInvalidValue,
		},
		{
			name: "set an optional section",
			sets: []string{"extra=5"},
			want: []string{"--set extra=5: extra: a section cannot be set; set one of its keys, such as extra.note"},
			is:   ErrInvalidValue,
		},
		{
			name: "set a whole map",
			sets: []string{"tags=a"},
			want: []string{"--set tags=a: tags: a map cannot be set as a whole here; set one entry, as in tags.<name>"},
			is:   ErrInvalidValue,
		},

		// Environment.
		{
			name: "env unknown key",
			env:  []string{"MLSCHED_GENERATE__EVAL__JOBZ=5"},
			want: []string{"env MLSCHED_GENERATE__EVAL__JOBZ: generate.eval.jobz: unknown key (did you mean MLSCHED_GENERATE__EVAL__JOBS?)"},
			is:   ErrUnknownKey,
		},
		{
			name: "env wrong type",
			env:  []string{"MLSCHED_SEED=abc"},
			want: []string{`env MLSCHED_SEED: seed: want an integer, got "abc"`},
			is:   ErrInvalidValue,
		},
		{
			name: "env empty segment",
			env:  []string{"MLSCHED_GENERATE____JOBS=1"},
			want: []string{"env MLSCHED_GENERATE____JOBS: want MLSCHED_SECTION__KEY: empty key segment in the variable name"},
			is:   ErrUsage,
		},
		{
			name: "env whole map",
			env:  []string{"MLSCHED_TAGS=x"},
			want: []string{"env MLSCHED_TAGS: tags: a map cannot be set as a whole here; set one entry, as in MLSCHED_TAGS__<NAME>"},
			is:   ErrInvalidValue,
		},

		// All three inputs at once: file, then env by name, then --set in order.
		{
			name: "errors from every input",
			yaml: "seed: x\n",
			env:  []string{"MLSCHED_VERBOSE=2", "MLSCHED_RATIO=x"},
			sets: []string{"name", "small=-129"},
			want: []string{
				`pipeline.yaml: seed: want an integer, got "x"`,
				`env MLSCHED_RATIO: ratio: want a number, got "x"`,
				`env MLSCHED_VERBOSE: verbose: want true or false, got "2"`,
				`--set name: want key.path=value`,
				`--set small=-129: small: want an integer in [-128, 127], got "-129"`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := writeYAML(t, tt.yaml)
			cfg := defaults()
			err := Load(Options{File: file, Env: tt.env, EnvPrefix: "MLSCHED_", Sets: tt.sets}, &cfg)
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("Load() = %v (%T), want Errors", err, err)
			}
			if got := strings.Split(err.Error(), "\n"); !slices.Equal(got, tt.want) {
				t.Errorf("Load() errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if tt.is != nil {
				for _, e := range errs {
					if !errors.Is(e, tt.is) {
						t.Errorf("error %q does not wrap %v", e, tt.is)
					}
				}
			}
			if !reflect.DeepEqual(cfg, defaults()) {
				t.Errorf("Load() failed but changed dst to %+v", cfg)
			}
		})
	}
}

func TestLoadFileErrors(t *testing.T) {
	t.Run("missing file", func(t *testing.T) {
		cfg := defaults()
		err := Load(Options{File: "testdata/nope.yaml"}, &cfg)
		if err == nil || err.Error() != "testdata/nope.yaml: read: no such file or directory" {
			t.Errorf("Load() = %v, want the missing file named", err)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Load() = %v, want it to wrap fs.ErrNotExist", err)
		}
	})
	t.Run("not a regular file", func(t *testing.T) {
		dir := t.TempDir()
		fifo := filepath.Join(dir, "pipeline.yaml")
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Fatal(err)
		}
		zero := filepath.Join(dir, "zero.yaml")
		if err := os.Symlink("/dev/zero", zero); err != nil {
			t.Fatal(err)
		}
		big := filepath.Join(dir, "big.yaml")
		if err := os.WriteFile(big, bytes.Repeat([]byte("# padding\n"), MaxFileSize/10+1), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct{ path, want string }{
			{fifo, fifo + ": read: a named pipe (FIFO), not a regular file"},
			{zero, zero + ": read: a symlink to /dev/zero, a character device, not a regular file"},
			{"/dev/null", "/dev/null: read: a character device, not a regular file"},
			{dir, dir + ": read: a directory, not a regular file"},
			{big, big + ": read: 1048580 bytes, more than the 1 MiB this input may hold"},
		} {
			done := make(chan error, 1)
			go func() {
				cfg := defaults()
				done <- Load(Options{File: tt.path}, &cfg)
			}()
			select {
			case err := <-done:
				if err == nil || err.Error() != tt.want {
					t.Errorf("Load(%s) = %v, want %q", tt.path, err, tt.want)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("Load(%s) still blocked after 5s", tt.path)
			}
		}
	})
	t.Run("no file", func(t *testing.T) {
		cfg := defaults()
		err := Load(Options{}, &cfg)
		if err == nil || err.Error() != "no config file given" || !errors.Is(err, ErrUsage) {
			t.Errorf("Load() = %v, want ErrUsage \"no config file given\"", err)
		}
	})
	t.Run("missing file and a bad set are reported together", func(t *testing.T) {
		cfg := defaults()
		err := Load(Options{File: "testdata/nope.yaml", Sets: []string{"sed=1"}}, &cfg)
		want := "testdata/nope.yaml: read: no such file or directory\n--set sed=1: sed: unknown key (did you mean seed?)"
		if err == nil || err.Error() != want {
			t.Errorf("Load() = %v, want\n%s", err, want)
		}
	})
}

func TestPrecedence(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		env  []string
		sets []string
		want int64
	}{
		{"default", "", nil, nil, 1},
		{"file over default", "seed: 2", nil, nil, 2},
		{"env over file", "seed: 2", []string{"MLSCHED_SEED=3"}, nil, 3},
		{"set over env", "seed: 2", []string{"MLSCHED_SEED=3"}, []string{"seed=4"}, 4},
		{"set over file", "seed: 2", nil, []string{"seed=4"}, 4},
		{"last set wins", "", nil, []string{"seed=4", "seed=5"}, 5},
		{"last duplicate env wins", "", []string{"MLSCHED_SEED=3", "MLSCHED_SEED=6"}, nil, 6},
		{"other prefixes ignored", "", []string{"SEED=9", "OTHER_SEED=9", "MLSCHEDSEED=9"}, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := writeYAML(t, tt.yaml)
			cfg := defaults()
			if err := Load(Options{File: file, Env: tt.env, EnvPrefix: "MLSCHED_", Sets: tt.sets}, &cfg); err != nil {
				t.Fatalf("Load() = %v", err)
			}
			if cfg.Seed != tt.want {
				t.Errorf("seed = %d, want %d", cfg.Seed, tt.want)
			}
		})
	}

	t.Run("empty prefix turns env off", func(t *testing.T) {
		file := writeYAML(t, "")
		cfg := defaults()
		if err := Load(Options{File: file, Env: []string{"SEED=9", "HOME=/root"}}, &cfg); err != nil {
			t.Fatalf("Load() = %v", err)
		}
		if cfg.Seed != 1 {
			t.Errorf("seed = %d, want the default 1", cfg.Seed)
		}
	})
}

// TestOverrides checks that env and --set strings are parsed by the type of
// the field they reach.
func TestOverrides(t *testing.T) {
	tests := []struct {
		name  string
		env   []string
		sets  []string
		check func(testConfig) bool
	}{
		{"int", nil, []string{"seed=7"}, func(c testConfig) bool { return c.Seed == 7 }},
		{"int spelled 1e3", nil, []string{"seed=1e3"}, func(c testConfig) bool { return c.Seed == 1000 }},
		{"int spelled 1_000", nil, []string{"seed=1_000"}, func(c testConfig) bool { return c.Seed == 1000 }},
		{"int spelled 0x10", nil, []string{"seed=0x10"}, func(c testConfig) bool { return c.Seed == 16 }},
		{"negative int", nil, []string{"seed=-3"}, func(c testConfig) bool { return c.Seed == -3 }},
		{"leading zero is decimal", nil, []string{"seed=010"}, func(c testConfig) bool { return c.Seed == 10 }},
		{"max uint16", nil, []string{"count=65535"}, func(c testConfig) bool { return c.Count == 65535 }},
		{"float", nil, []string{"ratio=0.25"}, func(c testConfig) bool { return c.Ratio == 0.25 }},
		{"bool", nil, []string{"verbose=TRUE"}, func(c testConfig) bool { return c.Verbose }},
		{"string keeps spaces", nil, []string{"name= a b "}, func(c testConfig) bool { return c.Name == " a b " }},
		{"string with equals", nil, []string{"name=a=b"}, func(c testConfig) bool { return c.Name == "a=b" }},
		{"empty string", nil, []string{"name="}, func(c testConfig) bool { return c.Name == "" }},
		{"duration", nil, []string{"generate.eval.timeout=1m30s"}, func(c testConfig) bool { return c.Generate.Eval.Timeout == 90*time.Second }},
		{"text type", nil, []string{"level=high"}, func(c testConfig) bool { return c.Level == 1 }},
		{"optional scalar", nil, []string{"limit=3"}, func(c testConfig) bool { return c.Limit != nil && *c.Limit == 3 }},
		{"optional section allocated", nil, []string{"extra.depth=2"}, func(c testConfig) bool { return c.Extra != nil && *c.Extra == extraConfig{Depth: 2} }},
		{"list", nil, []string{"generate.models=a, b ,c"}, func(c testConfig) bool { return slices.Equal(c.Generate.Models, []string{"a", "b", "c"}) }},
		{"int list", nil, []string{"workers=2,4"}, func(c testConfig) bool { return slices.Equal(c.Workers, []int{2, 4}) }},
		{"empty list", nil, []string{"workers="}, func(c testConfig) bool { return c.Workers != nil && len(c.Workers) == 0 }},
		{"env nested", []string{"MLSCHED_GENERATE__EVAL__JOBS=2000"}, nil, func(c testConfig) bool { return c.Generate.Eval.Jobs == 2000 }},
		{"env key with underscore", []string{"MLSCHED_MAX_JOBS=5"}, nil, func(c testConfig) bool { return c.MaxJobs == 5 }},
		{"env case-insensitive", []string{"MLSCHED_generate__Eval__JOBS=3"}, nil, func(c testConfig) bool { return c.Generate.Eval.Jobs == 3 }},
		{"env list", []string{"MLSCHED_WORKERS=8,9"}, nil, func(c testConfig) bool { return slices.Equal(c.Workers, []int{8, 9}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := writeYAML(t, "")
			cfg := defaults()
			if err := Load(Options{File: file, Env: tt.env, EnvPrefix: "MLSCHED_", Sets: tt.sets}, &cfg); err != nil {
				t.Fatalf("Load() = %v", err)
			}
			if !tt.check(cfg) {
				t.Errorf("Load(env %q, sets %q) = %+v", tt.env, tt.sets, cfg)
			}
		})
	}
}

// TestMaps checks the one place where the file and the overrides differ: the
// file replaces a map, an override edits one entry.
func TestMaps(t *testing.T) {
	tests := []struct {
		name      string
		yaml      string
		env       []string
		sets      []string
		wantTags  map[string]string
		wantLanes map[string]laneConfig
	}{
		{
			name:      "defaults",
			wantTags:  map[string]string{"owner": "ml"},
			wantLanes: map[string]laneConfig{"cpu": {Count: 8, Speed: 1}},
		},
		{
			name:      "file replaces and drops default entries",
			yaml:      "tags: {team: sched}\ngenerate: {lanes: {gpu: {count: 2}}}\n",
			wantTags:  map[string]string{"team": "sched"},
			wantLanes: map[string]laneConfig{"gpu": {Count: 2}},
		},
		{
			name:      "file empties a map",
			yaml:      "tags: {}\n",
			wantTags:  map[string]string{},
			wantLanes: map[string]laneConfig{"cpu": {Count: 8, Speed: 1}},
		},
		{
			name:      "set adds an entry and keeps the others",
			sets:      []string{"tags.team=sched", "generate.lanes.gpu.count=2"},
			wantTags:  map[string]string{"owner": "ml", "team": "sched"},
			wantLanes: map[string]laneConfig{"cpu": {Count: 8, Speed: 1}, "gpu": {Count: 2}},
		},
		{
			name:      "set edits one field of an entry",
			sets:      []string{"tags.owner=me", "generate.lanes.cpu.count=2"},
			wantTags:  map[string]string{"owner": "me"},
			wantLanes: map[string]laneConfig{"cpu": {Count: 2, Speed: 1}},
		},
		{
			name:      "set on top of a replaced map",
			yaml:      "tags: {team: sched}\n",
			sets:      []string{"tags.extra=x"},
			wantTags:  map[string]string{"team": "sched", "extra": "x"},
			wantLanes: map[string]laneConfig{"cpu": {Count: 8, Speed: 1}},
		},
		{
			name:      "set map key with dots",
			sets:      []string{"tags.a.b=c"},
			wantTags:  map[string]string{"owner": "ml", "a.b": "c"},
			wantLanes: map[string]laneConfig{"cpu": {Count: 8, Speed: 1}},
		},
		{
			name:      "env edits one entry",
			env:       []string{"MLSCHED_TAGS__TEAM=sched", "MLSCHED_GENERATE__LANES__CPU__SPEED=2.5"},
			wantTags:  map[string]string{"owner": "ml", "team": "sched"},
			wantLanes: map[string]laneConfig{"cpu": {Count: 8, Speed: 2.5}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := writeYAML(t, tt.yaml)
			cfg := defaults()
			if err := Load(Options{File: file, Env: tt.env, EnvPrefix: "MLSCHED_", Sets: tt.sets}, &cfg); err != nil {
				t.Fatalf("Load() = %v", err)
			}
			if !reflect.DeepEqual(cfg.Tags, tt.wantTags) {
				t.Errorf("tags = %v, want %v", cfg.Tags, tt.wantTags)
			}
			if !reflect.DeepEqual(cfg.Generate.Lanes, tt.wantLanes) {
				t.Errorf("lanes = %v, want %v", cfg.Generate.Lanes, tt.wantLanes)
			}
		})
	}
}

func TestLoadOptional(t *testing.T) {
	tests := []struct {
		name  string
		yaml  string
		start func(*testConfig)
		want  func(testConfig) bool
	}{
		{"absent stays nil", "", nil, func(c testConfig) bool { return c.Limit == nil && c.Extra == nil }},
		{"null is nil", "limit: null\nextra: ~\n", nil, func(c testConfig) bool { return c.Limit == nil && c.Extra == nil }},
		{"null clears a default", "limit: null\n", func(c *testConfig) { c.Limit = intPtr(5) }, func(c testConfig) bool { return c.Limit == nil }},
		{"given is set", "limit: 0\nextra: {note: x}\n", nil, func(c testConfig) bool {
			return c.Limit != nil && *c.Limit == 0 && c.Extra != nil && *c.Extra == extraConfig{Note: "x"}
		}},
		{"merges into a default section", "extra: {note: x}\n", func(c *testConfig) { c.Extra = &extraConfig{Depth: 3} }, func(c testConfig) bool {
			return *c.Extra == extraConfig{Note: "x", Depth: 3}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := writeYAML(t, tt.yaml)
			cfg := defaults()
			if tt.start != nil {
				tt.start(&cfg)
			}
			if err := Load(Options{File: file}, &cfg); err != nil {
				t.Fatalf("Load() = %v", err)
			}
			if !tt.want(cfg) {
				t.Errorf("Load(%q) = %+v", tt.yaml, cfg)
			}
		})
	}
}

// TestLoadDoesNotTouchSharedDefaults checks copy-on-write: an app whose
// defaults share maps and pointers between calls must not see them change.
func TestLoadDoesNotTouchSharedDefaults(t *testing.T) {
	shared := defaults()
	shared.Extra = &extraConfig{Note: "default"}
	file := writeYAML(t, "extra: {depth: 1}\n")
	cfg := shared // shallow copy: Tags, Lanes and Extra are shared
	sets := []string{"tags.team=x", "generate.lanes.cpu.count=99", "extra.note=changed"}
	if err := Load(Options{File: file, Sets: sets}, &cfg); err != nil {
		t.Fatalf("Load() = %v", err)
	}
	if cfg.Tags["team"] != "x" || cfg.Generate.Lanes["cpu"].Count != 99 || *cfg.Extra != (extraConfig{Note: "changed", Depth: 1}) {
		t.Fatalf("overrides not applied: %+v", cfg)
	}
	if _, ok := shared.Tags["team"]; ok || shared.Generate.Lanes["cpu"].Count != 8 || *shared.Extra != (extraConfig{Note: "default"}) {
		t.Errorf("Load changed the shared defaults: tags %v, lanes %v, extra %+v", shared.Tags, shared.Generate.Lanes, *shared.Extra)
	}
}

func TestLoadRejectsBadTypes(t *testing.T) {
	type withChan struct {
		C chan int `koanf:"c"`
	}
	type withIntKeys struct {
		M map[int]string `koanf:"m"`
	}
	type recursive struct {
		Next *recursive `koanf:"next"`
	}
	type unexported struct {
		x int `koanf:"x"`
	}
	type duplicate struct {
		A int `koanf:"a"`
		B int `koanf:"a"`
	}
	type deep struct {
		Inner struct {
			F func() `koanf:"f"`
		} `koanf:"inner"`
	}
	_ = unexported{}.x

	file := writeYAML(t, "")
	tests := []struct {
		name string
		dst  any
		want string // the error, exactly
		is   error
	}{
		{"nil", nil, "config: load: want a non-nil pointer to a struct, got <nil>", nil},
		{"not a pointer", testConfig{}, "config: load: want a non-nil pointer to a struct, got config.testConfig", nil},
		{"nil pointer", (*testConfig)(nil), "config: load: want a non-nil pointer to a struct, got *config.testConfig", nil},
		{"pointer to int", new(int), "config: load: want a non-nil pointer to a struct, got *int", nil},
		{"chan field", &withChan{}, "config: load: config.withChan.c: unsupported config field type chan int", ErrUnsupportedType},
		{"int map keys", &withIntKeys{}, "config: load: config.withIntKeys.m: unsupported config field type map[int]string: map keys must be strings", ErrUnsupportedType},
		{"recursive", &recursive{}, "config: load: config.recursive.next: unsupported config field type config.recursive: recursive type", ErrUnsupportedType},
		{"unexported", &unexported{}, "config: load: config.unexported.x: unsupported config field type: unexported field x has a koanf tag", ErrUnsupportedType},
		{"duplicate", &duplicate{}, "config: load: config.duplicate.a: unsupported config field type: two fields of config.duplicate have this key", ErrUnsupportedType},
		{"deep", &deep{}, "config: load: config.deep.inner.f: unsupported config field type func()", ErrUnsupportedType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Load(Options{File: file}, tt.dst)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("Load() = %v, want %q", err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("Load() = %v, want it to wrap %v", err, tt.is)
			}
		})
	}
}

func TestKeys(t *testing.T) {
	want := []string{
		"seed", "name", "verbose", "ratio", "small", "count", "max_jobs", "level", "limit",
		"extra.note", "extra.depth",
		"workers", "steps", "tags.<name>",
		"generate.eval.jobs", "generate.eval.timeout", "generate.models",
		"generate.weights.<name>", "generate.lanes.<name>.count", "generate.lanes.<name>.speed",
	}
	for _, v := range []any{testConfig{}, &testConfig{}} {
		if got := Keys(v); !slices.Equal(got, want) {
			t.Errorf("Keys(%T) =\n%q\nwant\n%q", v, got, want)
		}
	}
	for _, v := range []any{nil, 3, new(int), time.Time{}} {
		if got := Keys(v); got != nil {
			t.Errorf("Keys(%T) = %q, want nil", v, got)
		}
	}
}

func TestSuggestions(t *testing.T) {
	names := []string{"seed", "name", "verbose", "count", "generate"}
	tests := []struct{ bad, want string }{
		{"sed", "seed"},
		{"SEED", "seed"},
		{"cuont", "count"}, // transposition is one edit
		{"genrate", "generate"},
		{"verbos", "verbose"},
		{"x", ""}, // a single rune is never a typo of another
		{"workers", ""},
	}
	for _, tt := range tests {
		if got := closest(tt.bad, names); got != tt.want {
			t.Errorf("closest(%q) = %q, want %q", tt.bad, got, tt.want)
		}
	}
	keys := Keys(testConfig{})
	paths := []struct{ bad, want string }{
		{"generate.jobs", "generate.eval.jobs"},
		{"eval.timeout", "generate.eval.timeout"},
		{"zzz.qqq", ""},
		{"generate.model", "generate.models"},
		{"count", "count"}, // skips generate.lanes.<name>.count
	}
	for _, tt := range paths {
		if got := suggestPath(tt.bad, keys); got != tt.want {
			t.Errorf("suggestPath(%q) = %q, want %q", tt.bad, got, tt.want)
		}
	}
}

func TestSetSourceHidesCredentials(t *testing.T) {
	for in, want := range map[string]string{
		"remote=s3://AKIA:secret@bucket/x": "remote=s3://…@bucket/x",
		"remote=s3://bucket/x?a=b":         "remote=s3://bucket/x?a=b",
		"a=https://u@h/p and ftp://x:y@z":  "a=https://…@h/p and ftp://…@z",
		"schedule.load=0.5":                "schedule.load=0.5",
	} {
		if got := redactUserinfo(in); got != want {
			t.Errorf("redactUserinfo(%q) = %q, want %q", in, got, want)
		}
	}
}

package config

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

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

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

func TestSetSourceHidesCredentials(t *testing.T) {
	for in, want := range map[string]string{
		"remote=s3://AKIA:secret@bucket/x": "remote=s3://…@bucket/x",
		"remote=s3://bucket/x?a=b":         "remote=s3://bucket/x?a=b",
		"a=https://u@h/p and ftp://x:y@z":  "a=https://…@h/p and ftp://…@z",
		"schedule.load=0.5":                "schedule.load=0.5",
		"remote=s3://b/x?region=r&secret_access_key=SECRET&X-Amz-Security-Token=T": "remote=s3://b/x?region=r&secret_access_key=…&X-Amz-Security-Token=…",
		"remote=s3://b/x?password=p&endpoint=http://u:p@h":                         "remote=s3://b/x?password=…&endpoint=http://…@h",
	} {
		if got := redactUserinfo(in); got != want {
			t.Errorf("redactUserinfo(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRetiredKeys: a key the config once had (or one below it) gets the
// reason and what to do instead, from the file or from --set.
func TestRetiredKeys(t *testing.T) {
	type section struct {
		Confidence float64 `koanf:"confidence"`
	}
	type cfg struct {
		Evaluate section `koanf:"evaluate"`
	}
	retired := map[string]string{"evaluate.bootstrap": "set evaluate.confidence"}
	dir := t.TempDir()
	old, empty := filepath.Join(dir, "old.yaml"), filepath.Join(dir, "empty.yaml")
	if err := os.WriteFile(old, []byte("evaluate:\n  bootstrap: {resamples: 500}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, opts := range []Options{
		{File: old, Retired: retired},
		{File: empty, Retired: retired, Sets: []string{"evaluate.bootstrap.confidence=0.9"}},
	} {
		var c cfg
		err := Load(opts, &c)
		if err == nil || !strings.Contains(err.Error(), "evaluate.bootstrap was removed: set evaluate.confidence") || !errors.Is(err, ErrUnknownKey) {
			t.Errorf("Load(%s %v) = %v, want the retired key's reason", opts.File, opts.Sets, err)
		}
	}
	// Without Retired, the same file is a plain unknown key.
	var c cfg
	if err := Load(Options{File: old}, &c); err == nil || strings.Contains(err.Error(), "was removed") {
		t.Errorf("Load without Retired = %v", err)
	}
}

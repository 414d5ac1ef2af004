package stages

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/stages/spec/profilespec"

	"github.com/mlsched/mlsched/pipeline/config"
)

// TestRepoPipelineYAML keeps the committed pipeline.yaml loadable, valid and
// an honest reference: it states exactly the defaults.
func TestRepoPipelineYAML(t *testing.T) {
	cfg := DefaultConfig()
	if err := config.Load(config.Options{File: "../pipeline.yaml"}, &cfg); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	got, _ := config.Canonical(cfg)
	want, _ := config.Canonical(DefaultConfig())
	if diff := config.Diff(want, got); len(diff) > 0 {
		t.Errorf("pipeline.yaml differs from DefaultConfig:\n%v", diff)
	}
}

func TestValidateNamesKeyPaths(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"empty store", func(c *Config) { c.Store = "" }, "store:"},
		{"no jobs", func(c *Config) { c.Generate.Eval.Jobs = 0 }, "generate.eval.jobs"},
		{"negative rate", func(c *Config) { c.Generate.Train.Arrival.Rate = -1 }, "generate.train.arrival.rate"},
		{"fraction", func(c *Config) { c.Generate.InteractiveFraction = 1.5 }, "generate.interactive_fraction"},
		{"empty models", func(c *Config) { c.Generate.Models = nil }, "generate.models"},
		{"no lanes", func(c *Config) { c.Schedule.Cluster[1].Lanes = 0 }, "schedule.cluster[1].lanes"},
		{"unknown model", func(c *Config) { c.Generate.Models = map[string]float64{"resnet101": 1} },
			"generate.models.resnet101: unknown model; the catalog has mlp, resnet18, resnet50, vit"},
		{"memory of an unknown model", func(c *Config) { c.Schedule.Memory.BaseMiB = map[string]float64{"gpt": 1} },
			"schedule.memory.base_mib.gpt: unknown model; the catalog has mlp, resnet18, resnet50, vit"},
		{"a file's model unlisted", func(c *Config) {
			c.Profile.Models = profilespec.ZooModels("mlp")
			c.Generate.Models = map[string]float64{"mine": 1}
		}, "generate.models.mine: unknown model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.mutate(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate() = %v, want an error naming %s", err, tt.want)
			}
		})
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Errorf("default config invalid: %v", err)
	}
	// A model of the user's, named in profile.models with its file, is
	// one the other sections may name.
	c := DefaultConfig()
	c.Profile.Models = append(c.Profile.Models, profilespec.Model{Name: "mine", File: "mine.onnx"})
	c.Generate.Models = map[string]float64{"mine": 1, "mlp": 1}
	c.Schedule.Memory.PerSampleMiB = map[string]float64{"mine": 2}
	if err := c.Validate(); err != nil {
		t.Errorf("a config naming a file's model: %v", err)
	}
}

// TestValidateSpan: schedule.load stretches the workloads' arrivals, and
// far enough, times no longer resolve a latency (a load of 1e-300 made
// every latency 0).
func TestValidateSpan(t *testing.T) {
	c := DefaultConfig()
	c.Generate.Eval.Arrival.Rate, c.Generate.Eval.Jobs = 1, 200_000
	c.Schedule.Utilization = 0 // schedule.load offers the workloads
	c.Schedule.Load = 0.001
	want := "schedule.load: 0.001 stretches the eval workload's 2e+05 s of arrivals to 2e+08 s, more than the 1e8 s (about 3 years) within which times resolve a latency; raise it or generate.eval.arrival.rate"
	if err := c.Validate(); err == nil || err.Error() != want {
		t.Errorf("Validate() = %v, want %q", err, want)
	}
	c.Schedule.Load = 1e-300
	// Where schedule.utilization sets the load, it is checked at run time
	// (cluster.Scan.LoadOf), against the workload's capacity.
	u := DefaultConfig()
	u.Generate.Eval.Arrival.Rate, u.Generate.Eval.Jobs, u.Schedule.Load = 1, 200_000, 0.001
	if err := u.Validate(); err != nil {
		t.Errorf("Validate() with schedule.utilization set = %v, want schedule.load's span left to run time", err)
	}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "schedule.load: must be a factor in [0.001, 1000], got 1e-300") {
		t.Errorf("Validate() = %v, want the range of schedule.load", err)
	}
}

// TestValidateErrorsNameKeys: every error Validate returns is a
// *config.Error with its key, for config.Attribute to name the input.
func TestValidateErrorsNameKeys(t *testing.T) {
	c := DefaultConfig()
	c.Store = ""
	c.Schedule.Load = 0
	c.Generate.Eval.Jobs = 0
	c.Train.Placement.Tie = 2
	c.Evaluate.Confidence = 0
	c.Profile.Threads = nil
	c.Evaluate.Baselines = []string{"edf+batch+split"}
	c.Schedule.Policies = []string{"fifo"}
	err := config.Attribute(c.Validate(), &config.Origins{}, "pipeline.yaml")
	es, ok := err.(config.Errors)
	if !ok || len(es) < 7 {
		t.Fatalf("Validate() = %v, want at least 7 errors", err)
	}
	for _, e := range es {
		if e.Key == "" || e.Source != "pipeline.yaml" {
			t.Errorf("error %q names no key", e)
		}
	}
}

// TestWarnings: a device too small for a model of the mix, and a model no
// device holds, are warned of (memory_mib: 1 rejected 38% of the jobs
// without a word).
func TestWarnings(t *testing.T) {
	if err := DefaultConfig().Warnings(); err != nil {
		t.Errorf("the default config warns: %v", err)
	}
	c := DefaultConfig()
	c.Schedule.Cluster[0].MemoryMiB = 1
	c.Schedule.Cluster[1].MemoryMiB = 1
	err := c.Warnings()
	if err == nil {
		t.Fatal("Warnings() = nil for devices of 1 MiB")
	}
	for _, want := range []string{
		"generate.models.resnet50: every resnet50 job will be rejected: the smallest (batch 1, fp16) holds",
		"more than the largest device, cpu, holds (schedule.cluster[0].memory_mib: 1)",
		"schedule.cluster[0].memory_mib: cpu's 1 MiB holds no job of ",
		"schedule.cluster[1].memory_mib: accel's 1 MiB holds no job of ",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Warnings() = %v\nwant it to contain %q", err, want)
		}
	}
}

// TestExampleConfigs keeps the configurations in docs/examples loadable and
// valid, with every file they name where they name it.
func TestExampleConfigs(t *testing.T) {
	for _, tc := range []struct {
		file    string
		imports string // profile.import, relative to the file's folder
	}{
		{"../docs/examples/profile-cuda.yaml", ""},
		{"../docs/examples/h200/pipeline.yaml", "../profile-h200-cuda.parquet"},
		{"../docs/examples/gpu-real/pipeline.yaml", ""},
	} {
		t.Run(tc.file, func(t *testing.T) {
			cfg := DefaultConfig()
			if err := config.Load(config.Options{File: tc.file}, &cfg); err != nil {
				t.Fatal(err)
			}
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			if cfg.Profile.Import != tc.imports {
				t.Errorf("profile.import = %q, want %q", cfg.Profile.Import, tc.imports)
			}
			if tc.imports == "" {
				return
			}
			rt := Runtime{ConfigDir: filepath.Dir(tc.file)}
			if _, err := profileStage.Declare(cfg, rt); err != nil {
				t.Errorf("profile stage: %v", err)
			}
		})
	}
}

package schedulespec

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestRuns(t *testing.T) {
	for _, tt := range []struct {
		policies  []string
		ablations bool
		want      string
	}{
		{[]string{"fifo", "edf"}, true, "fifo edf"},
		{[]string{"fifo", "learned", "edf+migrate", "learned+split"}, true,
			"fifo learned edf+migrate learned+split learned~threshold learned~free learned+split~threshold learned+split~free"},
		{[]string{"fifo", "learned"}, false, "fifo learned"},
	} {
		c := DefaultConfig()
		c.Policies, c.Learned.Ablations = tt.policies, tt.ablations
		if got := strings.Join(c.Runs(), " "); got != tt.want {
			t.Errorf("Runs() of %v (ablations %v) = %s, want %s", tt.policies, tt.ablations, got, tt.want)
		}
	}
}

func TestValidateNamesKeyPaths(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"no policies", func(c *Config) { c.Policies = nil }, "schedule.policies: must name at least one policy (batch_aware, dynamic, edf, fifo, greedy, learned, random, round_robin)"},
		{"unknown policy", func(c *Config) { c.Policies = []string{"fifo", "sjf"} },
			`schedule.policies[1]: unknown policy "sjf"; the policies are batch_aware, dynamic, edf, fifo, greedy, learned, random, round_robin`},
		{"repeated policy", func(c *Config) { c.Policies = []string{"fifo", "edf", "fifo"} }, `schedule.policies[2]: policy "fifo" is already listed at policies[0]`},
		{"no devices", func(c *Config) { c.Cluster = nil }, "schedule.cluster: must list at least one device"},
		{"an ablation as a policy", func(c *Config) { c.Policies = []string{"fifo", "learned~free"} },
			`schedule.policies[1]: "learned~free" is an ablation of a learned policy, which schedule runs by itself beside the learned policy (schedule.learned.ablations); list the learned policy instead`},
		{"an ablation run for real", func(c *Config) { c.Real.Policies = []string{"learned~threshold"} }, `schedule.real.policies[0]: "learned~threshold" is an ablation`},
		{"unknown real policy", func(c *Config) { c.Real.Policies = []string{"fifo", "sjf"} }, `schedule.real.policies[1]: unknown policy "sjf"`},
		{"repeated real policy", func(c *Config) { c.Real.Policies = []string{"edf", "edf"} }, `schedule.real.policies[1]: policy "edf" is already listed at real.policies[0]`},
		{"real without loads", func(c *Config) { c.Real.Loads = nil }, "schedule.real.loads: must list at least one load to run the real policies at"},
		{"real load", func(c *Config) { c.Real.Loads = []float64{0.5, 0} }, "schedule.real.loads[1]: must be an offered load in [0.01, 16] (a fraction of capacity), got 0"},
		{"repeated real load", func(c *Config) { c.Real.Loads = []float64{0.5, 0.5} }, "schedule.real.loads[1]: load 0.5 is already listed at real.loads[0]"},
		{"real duration", func(c *Config) { c.Real.Duration = 0 }, "schedule.real.duration: must be from 100ms to 1h0m0s, got 0s"},
		{"no real runs", func(c *Config) { c.Real.Repeats = 0 }, "schedule.real.repeats: must be from 1 to 20, got 0"},
		{"too many real runs", func(c *Config) { c.Real.Repeats = 21 }, "schedule.real.repeats: must be from 1 to 20, got 21"},
		{"no draws", func(c *Config) { c.Real.Draws = 0 }, "schedule.real.draws: must be from 1 to 100, got 0"},
		{"too many draws", func(c *Config) { c.Real.Draws = 101 }, "schedule.real.draws: must be from 1 to 100, got 101"},
		{"negative sensitivity", func(c *Config) { c.Real.Sensitivity = -0.01 }, "schedule.real.sensitivity: must be a fraction from 0 to 0.5, got -0.01"},
		{"sensitivity no number", func(c *Config) { c.Real.Sensitivity = math.NaN() }, "schedule.real.sensitivity: must be a fraction from 0 to 0.5, got NaN"},
		{"no replication", func(c *Config) { c.Replications = 0 }, "schedule.replications: must be from 1 to 100, got 0"},
		{"too many replications", func(c *Config) { c.Replications = 101 }, "schedule.replications: must be from 1 to 100, got 101"},
		{"no name", func(c *Config) { c.Cluster[1].Name = "" }, "schedule.cluster[1].name: must name the device"},
		{"name with a pipe", func(c *Config) { c.Cluster[1].Name = "a|b" }, `schedule.cluster[1].name: "a|b" is not a valid name: want 1 to 64 ASCII letters, digits, '.', '_', ':' or '-', starting with a letter or digit`},
		{"name with HTML", func(c *Config) { c.Cluster[0].Name = "<script>alert(1)</script>" }, `schedule.cluster[0].name: "<script>alert(1)</script>" is not a valid name`},
		{"name too long", func(c *Config) { c.Cluster[0].Name = strings.Repeat("x", 65) }, `schedule.cluster[0].name: "xxxx`},
		{"profile device with a space", func(c *Config) { c.Cluster[1].ProfileDevice = "my gpu" }, `schedule.cluster[1].profile_device: "my gpu" is not a valid name`},
		{"repeated name", func(c *Config) { c.Cluster[1].Name = "cpu" }, `schedule.cluster[1].name: device "cpu" is already listed`},
		{"unknown kind", func(c *Config) { c.Cluster[0].Kind = "gpu" }, `schedule.cluster[0].kind: unknown kind "gpu"; want measured or declared`},
		{"measured speed", func(c *Config) { c.Cluster[0].Speed = 2 }, "schedule.cluster[0].speed: must be 1 for a measured device"},
		{"declared speed", func(c *Config) { c.Cluster[1].Speed = 0 }, "schedule.cluster[1].speed: must be a factor in [0.001, 100000], got 0"},
		{"declared speed huge", func(c *Config) { c.Cluster[1].Speed = 1e300 }, "schedule.cluster[1].speed: must be a factor in [0.001, 100000], got 1e+300"},
		{"no profile device", func(c *Config) { c.Cluster[1].ProfileDevice = "" }, "schedule.cluster[1].profile_device: must name the profile device"},
		{"threads", func(c *Config) { c.Cluster[0].Threads = 0 }, "schedule.cluster[0].threads: must be in [1, 1024], got 0"},
		{"no lanes", func(c *Config) { c.Cluster[1].Lanes = 0 }, "schedule.cluster[1].lanes: must be in [1, 1024], got 0"},
		{"too many lanes", func(c *Config) { c.Cluster[1].Lanes = 5000 }, "schedule.cluster[1].lanes: must be in [1, 1024], got 5000"},
		{"memory", func(c *Config) { c.Cluster[0].MemoryMiB = -1 }, "schedule.cluster[0].memory_mib: must be in [1, 2^30] MiB (1 PiB), got -1"},
		{"memory tiny", func(c *Config) { c.Cluster[0].MemoryMiB = 1e-300 }, "schedule.cluster[0].memory_mib: must be in [1, 2^30] MiB (1 PiB), got 1e-300"},
		{"memory huge", func(c *Config) { c.Cluster[1].MemoryMiB = 1e300 }, "schedule.cluster[1].memory_mib: must be in [1, 2^30] MiB (1 PiB), got 1e+300"},
		{"fp16 factor", func(c *Config) { c.Memory.FP16Factor = 1.5 }, "schedule.memory.fp16_factor: must be in [0.1, 1], got 1.5"},
		{"fp16 factor tiny", func(c *Config) { c.Memory.FP16Factor = 1e-300 }, "schedule.memory.fp16_factor: must be in [0.1, 1], got 1e-300"},
		{"negative per sample", func(c *Config) { c.Memory.PerSampleMiB = map[string]float64{"vit": -2} }, "schedule.memory.per_sample_mib.vit: must be in [0, 2^30] MiB (1 PiB), got -2"},
		{"huge base", func(c *Config) { c.Memory.BaseMiB = map[string]float64{"vit": 1e300} }, "schedule.memory.base_mib.vit: must be in [0, 2^30] MiB (1 PiB), got 1e+300"},
		{"load", func(c *Config) { c.Load = -1 }, "schedule.load: must be a factor in [0.001, 1000], got -1"},
		{"load tiny", func(c *Config) { c.Load = 1e-300 }, "schedule.load: must be a factor in [0.001, 1000], got 1e-300"},
		{"load huge", func(c *Config) { c.Load = 1e6 }, "schedule.load: must be a factor in [0.001, 1000], got 1e+06"},
		{"cache step tiny", func(c *Config) { c.Learned.Cache.Step = 1e-300 }, "schedule.learned.cache.step: must be in [0.0001, 10] standard deviations, got 1e-300"},
		{"unknown evaluator", func(c *Config) { c.Learned.Evaluator = "tensorflow" }, `schedule.learned.evaluator: unknown evaluator "tensorflow"; want go or onnxruntime`},
		{"prediction error tiny", func(c *Config) { c.Studies.PredictionErrors = []float64{1e-300} }, "schedule.studies.prediction_errors[0]: must be a share in [0.001, 0.99], got 1e-300"},
		{"real load tiny", func(c *Config) { c.Real.Loads = []float64{1e-300} }, "schedule.real.loads[0]: must be an offered load in [0.01, 16] (a fraction of capacity), got 1e-300"},
		{"sweep load tiny", func(c *Config) { c.Sweep.Loads = []float64{1e-300, 0.5} }, "schedule.sweep.loads[0]: must be a fraction of the cluster's capacity in [0.01, 16], got 1e-300"},
		{"sweep load huge", func(c *Config) { c.Sweep.Loads = []float64{0.5, 17} }, "schedule.sweep.loads[1]: must be a fraction of the cluster's capacity in [0.01, 16], got 17"},
		{"sweep target tiny", func(c *Config) { c.Sweep.Target = 1e-300 }, "schedule.sweep.target: must be an SLO attainment in [0.5, 1], got 1e-300"},
		{"sweep tolerance tiny", func(c *Config) { c.Sweep.Tolerance = 1e-300 }, "schedule.sweep.tolerance: must be 0 (no capacity search) or a fraction of capacity in [0.001, 0.5], got 1e-300"},
		{"weight huge", func(c *Config) { c.Dynamic.Class = 1e300 }, "schedule.dynamic.class: must be a weight in [0, 1000], got 1e+300"},
		{"unknown option", func(c *Config) { c.Policies = []string{"edf+fast"} }, `schedule.policies[0]: "edf+fast": unknown option "fast"; the options are batch, split, migrate`},
		{"options out of order", func(c *Config) { c.Policies = []string{"greedy+split+batch"} }, `schedule.policies[0]: "greedy+split+batch": option "batch" repeated or out of order`},
		{"repeated option", func(c *Config) { c.Policies = []string{"edf+batch+batch"} }, `option "batch" repeated or out of order`},
		{"split unsupported", func(c *Config) { c.Policies = []string{"fifo+split"} }, `schedule.policies[0]: "fifo+split": fifo does not split jobs (batch_aware, dynamic, edf, greedy, learned do)`},
		{"batch implied", func(c *Config) { c.Policies = []string{"dynamic+batch"} }, `"dynamic+batch": dynamic always batches; drop +batch`},
		{"max batch", func(c *Config) { c.Batching.MaxBatch = 1 }, "schedule.batching.max_batch: must be at least 2 samples, got 1"},
		{"window", func(c *Config) { c.Batching.Window = -time.Millisecond }, "schedule.batching.window: must be in [0, 1h0m0s], got -1ms"},
		{"min split", func(c *Config) { c.Splitting.MinBatch = 0 }, "schedule.splitting.min_batch: must be at least 2 samples, got 0"},
		{"migration cost", func(c *Config) { c.Migration.Cost = -time.Second }, "schedule.migration.cost: must be in [0, 1h0m0s], got -1s"},
		{"min gain", func(c *Config) { c.Migration.MinGain = -time.Second }, "schedule.migration.min_gain: must be in [0, 1h0m0s], got -1s"},
		{"weight", func(c *Config) { c.Dynamic.Urgency = math.NaN() }, "schedule.dynamic.urgency: must be a weight in [0, 1000], got NaN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.mutate(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate() = %v, want an error containing %q", err, tt.want)
			}
		})
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Errorf("default config invalid: %v", err)
	}
}

// TestValidateReportsAll checks that every problem is reported at once.
func TestValidateReportsAll(t *testing.T) {
	c := DefaultConfig()
	c.Load = 0
	c.Cluster[1].Lanes = 0
	c.Policies = []string{"nope"}
	err := c.Validate()
	for _, key := range []string{"schedule.load", "schedule.cluster[1].lanes", "schedule.policies[0]"} {
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("Validate() = %v, want it to name %s", err, key)
		}
	}
}

// TestOneDeviceHasNoLearnedPolicy: a cluster of one device has nowhere to
// move a job, so a learned policy there, simulated or real, is a config
// error naming the policy and the device; the other policies run.
func TestOneDeviceHasNoLearnedPolicy(t *testing.T) {
	one := func(policies, real []string) Config {
		c := DefaultConfig()
		c.Cluster = c.Cluster[1:] // accel alone
		c.Policies, c.Real.Policies = policies, real
		return c
	}
	for _, tt := range []struct {
		name string
		cfg  Config
		want []string
	}{
		{"heuristics only", one([]string{"fifo", "edf", "edf+migrate"}, []string{"fifo"}), nil},
		{"learned simulated", one([]string{"fifo", "learned"}, nil),
			[]string{"schedule.policies[1]: learned needs the placement network, which learns when to move a job between devices, and schedule.cluster has one device (accel)"}},
		{"learned run for real", one([]string{"fifo"}, []string{"fifo", "learned"}), []string{"schedule.real.policies[1]: learned needs the placement network"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			for _, w := range tt.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %v, want an error containing %q", err, w)
				}
			}
		})
	}
	// Two devices: learned is fine.
	c := DefaultConfig()
	c.Policies = []string{"learned"}
	if err := c.Validate(); err != nil {
		t.Errorf("two devices, learned: %v", err)
	}
}

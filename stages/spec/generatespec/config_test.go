package generatespec

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestDefaultConfigValid(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("DefaultConfig().Validate() = %v", err)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(c *Config)
		// want lists the start of each expected error line: the key path
		// and enough of the message to tell the cause.
		want []string
	}{
		{"zero jobs", func(c *Config) { c.Eval.Jobs = 0 },
			[]string{"generate.eval.jobs: must be at least 1, got 0"}},
		{"too many jobs", func(c *Config) { c.Train.Jobs = MaxJobs + 1 },
			[]string{"generate.train.jobs: must be at most"}},
		{"unknown process", func(c *Config) { c.Train.Arrival.Process = "uniform" },
			[]string{`generate.train.arrival.process: unknown process "uniform"`}},
		{"negative rate", func(c *Config) { c.Eval.Arrival.Rate = -5 },
			[]string{"generate.eval.arrival.rate: must be in [0.001, 1e9] jobs per second, got -5"}},
		{"NaN rate", func(c *Config) { c.Eval.Arrival.Rate = math.NaN() },
			[]string{"generate.eval.arrival.rate: must be in [0.001, 1e9] jobs per second, got NaN"}},
		{"tiny rate", func(c *Config) { c.Eval.Arrival.Rate = 1e-9 },
			[]string{"generate.eval.arrival.rate: must be in [0.001, 1e9] jobs per second, got 1e-09"}},
		{"huge rate", func(c *Config) { c.Train.Arrival.Rate = 1e300 },
			[]string{"generate.train.arrival.rate: must be in [0.001, 1e9] jobs per second, got 1e+300"}},
		{"span beyond what times resolve", func(c *Config) { c.Eval.Arrival.Rate, c.Eval.Jobs = 0.001, 200_000 },
			[]string{"generate.eval.arrival.rate: 200000 jobs at 0.001 per second would span 2e+08 s of arrivals, more than the 1e8 s (about 3 years) within which times resolve a latency; raise generate.eval.arrival.rate or lower generate.eval.jobs"}},
		{"unknown bursty model", func(c *Config) { c.Eval.Arrival.Bursty.Model = "pareto" },
			[]string{`generate.eval.arrival.bursty.model: unknown model "pareto"`}},
		{"cv zero and too large", func(c *Config) { c.Eval.Arrival.Bursty.CV = 0; c.Train.Arrival.Bursty.CV = 11 },
			[]string{"generate.train.arrival.bursty.cv: must be in [0.01, 10], got 11", "generate.eval.arrival.bursty.cv: must be in [0.01, 10], got 0"}},
		{"cv tiny", func(c *Config) { c.Eval.Arrival.Bursty.CV = 1e-300 },
			[]string{"generate.eval.arrival.bursty.cv: must be in [0.01, 10], got 1e-300"}},
		{"mmpp ranges", func(c *Config) {
			c.Eval.Arrival.Bursty.HighFraction = 1
			c.Eval.Arrival.Bursty.RateRatio = 0.5
			c.Eval.Arrival.Bursty.MeanBurst = 0
		}, []string{
			"generate.eval.arrival.bursty.high_fraction: must be a share of time in [0.001, 0.999], got 1",
			"generate.eval.arrival.bursty.rate_ratio: must be in [1, 1000], got 0.5",
			"generate.eval.arrival.bursty.mean_burst: must be positive",
		}},
		{"mmpp extremes", func(c *Config) {
			c.Eval.Arrival.Bursty.HighFraction = 1e-300
			c.Eval.Arrival.Bursty.RateRatio = 1e6
		}, []string{
			"generate.eval.arrival.bursty.high_fraction: must be a share of time in [0.001, 0.999], got 1e-300",
			"generate.eval.arrival.bursty.rate_ratio: must be in [1, 1000], got 1e+06",
		}},
		{"diurnal ranges", func(c *Config) {
			c.Train.Arrival.Diurnal.Amplitude = 1.5
			c.Train.Arrival.Diurnal.Period = -time.Second
		},
			[]string{"generate.train.arrival.diurnal.amplitude: must be in [0, 1]", "generate.train.arrival.diurnal.period: must be positive"}},
		{"fractions outside [0,1]", func(c *Config) { c.InteractiveFraction = -0.1; c.FP16Fraction = 1.1; c.FP16BytesFactor = 0 },
			[]string{"generate.interactive_fraction: must be in [0, 1], got -0.1", "generate.fp16_fraction: must be in [0, 1], got 1.1", "generate.fp16_bytes_factor: must be in [0.1, 1], got 0"}},
		{"fp16 bytes factor tiny", func(c *Config) { c.FP16BytesFactor = 1e-300 },
			[]string{"generate.fp16_bytes_factor: must be in [0.1, 1], got 1e-300"}},
		{"huge weight", func(c *Config) { c.Models["vit"] = 1e300 },
			[]string{"generate.models.vit: weight must be in [0, 1e6], got 1e+300"}},
		{"empty mix", func(c *Config) { c.Models = nil },
			[]string{"generate.models: must weigh at least one model"}},
		{"mix sums to zero", func(c *Config) { c.Models = map[string]float64{"mlp": 0, "vit": 0} },
			[]string{"generate.models: weights sum to 0"}},
		{"negative weight", func(c *Config) { c.Models["vit"] = -1 },
			[]string{"generate.models.vit: weight must be in [0, 1e6], got -1"}},
		{"min above max", func(c *Config) { c.Classes.Batch.BatchMin = 64; c.Classes.Batch.BatchMax = 8 },
			[]string{"generate.classes.batch.batch_max: must be at least batch_min (64), got 8"}},
		{"batch sizes out of range", func(c *Config) { c.Classes.Interactive.BatchMin = 0; c.Classes.Interactive.BatchMax = MaxBatchSize + 1 },
			[]string{"generate.classes.interactive.batch_min: must be in [1, 65536], got 0", "generate.classes.interactive.batch_max: must be in [1, 65536], got 65537"}},
		{"zero slo", func(c *Config) { c.Classes.Interactive.SLO = 0 },
			[]string{"generate.classes.interactive.slo: must be positive and at most 1e8 s (about 3 years), got 0s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.modify(&c)
			err := c.Validate()
			if err == nil {
				t.Fatalf("Validate() = nil, want errors %q", tt.want)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tt.want) {
				t.Errorf("Validate() gave %d errors, want %d:\n%v", len(lines), len(tt.want), err)
			}
			for _, w := range tt.want {
				found := false
				for _, l := range lines {
					found = found || strings.HasPrefix(l, w)
				}
				if !found {
					t.Errorf("Validate() errors lack %q:\n%v", w, err)
				}
			}
		})
	}
}

package stages

import (
	"strings"
	"testing"

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
}

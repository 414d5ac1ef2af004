package trainspec

import (
	"math"
	"testing"
)

// TestValidateRanges checks that every floating-point key has a range, not
// only a sign, and that its error says which.
func TestValidateRanges(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"tie negative", func(c *Config) { c.Placement.Tie = -0.1 }, "train.placement.tie: must be a relative difference in [0, 0.5], got -0.1"},
		{"tie huge", func(c *Config) { c.Placement.Tie = 0.9 }, "train.placement.tie: must be a relative difference in [0, 0.5], got 0.9"},
		{"explore", func(c *Config) { c.Placement.Explore = 1.5 }, "train.placement.explore: must be in [0, 1], got 1.5"},
		{"validation tiny", func(c *Config) { c.Placement.Validation = 1e-300 }, "train.placement.validation: must be a share in [0.01, 0.45], got 1e-300"},
		{"test too large", func(c *Config) { c.Placement.Test = 0.49 }, "train.placement.test: must be a share in [0.01, 0.45], got 0.49"},
		{"learning rate tiny", func(c *Config) { c.Placement.Network.LearningRate = 1e-300 }, "train.placement.network.learning_rate: must be in [0.000001, 0.5], got 1e-300"},
		{"learning rate NaN", func(c *Config) { c.Placement.Network.LearningRate = math.NaN() }, "train.placement.network.learning_rate: must be in [0.000001, 0.5], got NaN"},
		{"learning rate large", func(c *Config) { c.Placement.Network.LearningRate = 0.9 }, "train.placement.network.learning_rate: must be in [0.000001, 0.5], got 0.9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.mutate(&c)
			err := c.Validate()
			if err == nil || err.Error() != tt.want {
				t.Errorf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Errorf("default config invalid: %v", err)
	}
}

package schedule

import (
	"fmt"
	"os"
	"strings"

	"github.com/mlsched/mlsched/stages/lib/ort"
	"github.com/mlsched/mlsched/stages/lib/policy"
	"github.com/mlsched/mlsched/stages/schedule/placementnet"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// learnedSpecs lists the policy specs whose migrations the network makes.
func learnedSpecs(specs []string) []string {
	var out []string
	for _, s := range specs {
		if ps, err := policy.ParseSpec(s); err == nil && ps.Learned() {
			out = append(out, s)
		}
	}
	return out
}

// loadPlacement readies the cluster to serve the learned policy: it loads
// onnxruntime, reads the placement network in and checks that it serves,
// and sets a decision's cost on the simulated clock.
func (c *cluster) loadPlacement(cfg Config, in Inputs) error {
	if _, err := ort.Init(in.ORTLib, in.ORTSource); err != nil {
		return fmt.Errorf("learned policy (%s): %w", strings.Join(learnedSpecs(cfg.Policies), ", "), err)
	}
	model, err := os.ReadFile(in.Placement)
	if err != nil {
		return fmt.Errorf("learned policy: placement network: %w", err)
	}
	net, err := placementnet.Load(model, placementnet.Options{MaxBatch: cfg.Learned.Batch})
	if err != nil {
		return fmt.Errorf("learned policy: %s: %w", in.Placement, err)
	}
	if err := net.Close(); err != nil {
		return fmt.Errorf("learned policy: %w", err)
	}
	if c.decisionCost, err = c.costFunc(cfg.Learned.Cost); err != nil {
		return fmt.Errorf("schedule.learned.cost: %w", err)
	}
	c.placement = model
	return nil
}

// costFunc is a batch of n decisions' cost for a value of
// schedule.learned.cost.
func (c *cluster) costFunc(cost string) (func(n int) float64, error) {
	d, fromProfile, err := (schedulespec.Learned{Cost: cost}).LearnedCost()
	if err != nil {
		return nil, err
	}
	if !fromProfile {
		s := d.Seconds()
		return func(int) float64 { return s }, nil
	}
	if c.profileCost == nil {
		if c.profileCost, err = c.profiledDecisionCost(); err != nil {
			return nil, err
		}
	}
	return c.profileCost, nil
}

// profiledDecisionCost is a batch's cost as the profile measured the zoo's
// mlp (the placement network's shape, 10-64-64-1) at its size: the mean
// latency on the first measured device's profile device at one thread,
// interpolated between the measured batch sizes as any curve is.
func (c *cluster) profiledDecisionCost() (func(n int) float64, error) {
	dev := "cpu"
	for _, d := range c.cfg {
		if d.Kind == KindMeasured {
			dev = d.ProfileDevice
			break
		}
	}
	curve, err := c.table.Curve(dev, "mlp", precisionNames[precFP32], 1)
	if err != nil {
		return nil, fmt.Errorf("%s: a decision's cost is the profile's mlp at one thread on device %s, which it lacks (measure the mlp, or give a duration): %w",
			schedulespec.CostProfile, dev, err)
	}
	// Tabulated for the batches a decision batch can have.
	costs := make([]float64, 1025)
	for n := 1; n < len(costs); n++ {
		costs[n] = curve.Mean(n)
	}
	return func(n int) float64 {
		if n < len(costs) {
			return costs[n]
		}
		return curve.Mean(n)
	}, nil
}

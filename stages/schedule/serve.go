package schedule

import (
	"fmt"
	"os"
	"strings"

	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/cluster"
	"github.com/mlsched/mlsched/stages/lib/ort"
	"github.com/mlsched/mlsched/stages/lib/policy"
	"github.com/mlsched/mlsched/stages/lib/servicetime"
	"github.com/mlsched/mlsched/stages/lib/sim"
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

// newCluster builds the cluster of cfg on the profile's table and catalog, with
// train's predictor when cfg predicts with it, and, when cfg lists a
// learned policy, its placement network served (loadPlacement).
func newCluster(cfg Config, cat *catalog.Catalog, table *servicetime.Table, in Inputs) (*cluster.Cluster, error) {
	cl, err := cluster.New(cfg, cat, table)
	if err != nil {
		return nil, err
	}
	if cfg.Predictor == PredictorLearned {
		if err := cl.LoadPredictor(in.Predictor); err != nil {
			return nil, err
		}
	}
	if len(learnedSpecs(cfg.Policies)) > 0 {
		if err := loadPlacement(cl, cfg, in); err != nil {
			return nil, err
		}
	}
	return cl, nil
}

// loadPlacement readies the cluster to serve the learned policy: it loads
// onnxruntime, reads the placement network in and checks that it serves,
// and sets a decision's cost on the simulated clock.
func loadPlacement(cl *cluster.Cluster, cfg Config, in Inputs) error {
	if _, err := ort.Init(in.ORTLib, in.ORTSource); err != nil {
		return fmt.Errorf("learned policy (%s): %w", strings.Join(learnedSpecs(cfg.Policies), ", "), err)
	}
	model, err := os.ReadFile(in.Placement)
	if err != nil {
		return fmt.Errorf("learned policy: placement network: %w", err)
	}
	if err := checkServes(model, cfg.Learned); err != nil {
		return fmt.Errorf("learned policy: %s: %w", in.Placement, err)
	}
	cost, err := cl.DecisionCost(cfg.Learned.Cost)
	if err != nil {
		return fmt.Errorf("schedule.learned.cost: %w", err)
	}
	pool := &migratorPool{model: model, l: cfg.Learned}
	cl.Serve(cluster.Serving{
		NewMigrator: func() (sim.Migrator, error) { return pool.get() },
		Cost:        cost,
		Close:       pool.close,
	})
	return nil
}

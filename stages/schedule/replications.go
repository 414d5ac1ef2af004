package schedule

import (
	"context"
	"fmt"

	"github.com/mlsched/mlsched/stages/lib/cluster"
)

// replication is one replication of the experiment as the stage runs it:
// its eval workload, the load at which it is offered, and its bounds
// there. Every policy of the replication runs on the same jobs at the
// same load (common random numbers); replications differ in their jobs
// (a workload of their own), their ground-truth draws and their random
// placements (Unit.seeds).
type replication struct {
	rep  int
	jobs string // its jobs file
	// load divides its arrival times (schedule.load, or
	// schedule.utilization of the cluster's capacity for its jobs).
	load   float64
	bounds BoundsRow
}

// jobsOf is the jobs file of replication rep (from 1): in.Workloads' entry
// where it has one, in.Jobs otherwise.
func (in Inputs) jobsOf(rep int) string {
	if rep >= 1 && rep <= len(in.Workloads) {
		return in.Workloads[rep-1]
	}
	return in.Jobs
}

// replications reads every replication's workload once for its load and
// its bounds (cluster.Scan): the cluster's capacity, where
// schedule.utilization sets the load, and the bounds at the load. The pass
// resolves every curve the simulations need, so that a missing one is
// reported before any of them starts.
func replications(ctx context.Context, cfg Config, cl *cluster.Cluster, in Inputs) ([]replication, error) {
	reps := make([]replication, cfg.Replications)
	for i := range reps {
		r := &reps[i]
		r.rep, r.jobs = i+1, in.jobsOf(i+1)
		sc, err := cl.Scan(ctx, r.jobs, 0)
		if err != nil {
			return nil, r.errorf(err)
		}
		var perUnit float64
		if r.load, perUnit, err = sc.LoadOf(cfg); err != nil {
			return nil, r.errorf(err)
		}
		if perUnit == 0 { // an absolute load: its fraction of capacity, for the report
			if perUnit, err = sc.Capacity(); err != nil {
				return nil, r.errorf(err)
			}
		}
		r.bounds = sc.Bounds(r.load)
		r.bounds.Replication = int32(r.rep)
		if perUnit > 0 {
			r.bounds.OfferedLoad = r.load / perUnit
		}
	}
	return reps, nil
}

// errorf names the replication in an error, from the second on.
func (r *replication) errorf(err error) error {
	if r.rep == 1 {
		return err
	}
	return fmt.Errorf("replication %d (%s): %w", r.rep, r.jobs, err)
}

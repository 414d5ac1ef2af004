package policy

import "github.com/mlsched/mlsched/stages/lib/sim"

// FIFO sends each job to the device whose lanes free up soonest, as a
// single shared queue would, and runs every device's queue in arrival order
// without overtaking: the baseline every other policy is measured against.
type FIFO struct{}

var (
	_ sim.Placer      = FIFO{}
	_ sim.StrictOrder = FIFO{}
)

// Name implements sim.Policy.
func (FIFO) Name() string { return "fifo" }

// Place implements sim.Placer.
func (FIFO) Place(j *sim.Job, s *sim.State) int { return argmin(j, s, s.Backlog) }

// StrictOrder implements sim.StrictOrder: no job overtakes another.
func (FIFO) StrictOrder() bool { return true }

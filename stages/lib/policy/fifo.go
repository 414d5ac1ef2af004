package policy

import "github.com/mlsched/mlsched/stages/lib/sim"

// FIFO sends each job to the device where it is predicted to finish
// first, as every policy that places does (earliestFinish), and runs every
// device's queue in arrival order without overtaking: the simplest queue
// order, the baseline every other is measured against. fifo@backlog is
// the older placement by backlog alone (PlaceBacklog), which ignores how
// long the job runs on each device.
type FIFO struct{}

var (
	_ sim.Placer      = FIFO{}
	_ sim.StrictOrder = FIFO{}
)

// Name implements sim.Policy.
func (FIFO) Name() string { return "fifo" }

// Place implements sim.Placer.
func (FIFO) Place(j *sim.Job, s *sim.State) int { return earliestFinish(j, s) }

// StrictOrder implements sim.StrictOrder: no job overtakes another.
func (FIFO) StrictOrder() bool { return true }

package policy

import "github.com/mlsched/mlsched/stages/lib/sim"

// Greedy sends each job to the device where it is predicted to finish
// first: the device's backlog per lane plus the job's own predicted time
// there, so a faster device wins even with a longer queue. Queues run in
// arrival order, and a job that fits may overtake one waiting for memory.
type Greedy struct{}

var (
	_ sim.Placer   = Greedy{}
	_ sim.Splitter = Greedy{}
)

// Name implements sim.Policy.
func (Greedy) Name() string { return "greedy" }

// Place implements sim.Placer.
func (Greedy) Place(j *sim.Job, s *sim.State) int { return earliestFinish(j, s) }

// Split implements sim.Splitter: the parts are predicted to end together.
func (Greedy) Split(j *sim.Job, s *sim.State) []int32 { return splitEvenly(j, s) }

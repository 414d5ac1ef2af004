package policy

import "github.com/mlsched/mlsched/stages/lib/sim"

// EDF is the priority-SLO policy: it places like Greedy, and each device
// runs interactive jobs before batch jobs and, within a class, the earliest
// deadline first.
type EDF struct{}

var (
	_ sim.Placer    = EDF{}
	_ sim.KeyRanker = EDF{}
	_ sim.Splitter  = EDF{}
)

// Name implements sim.Policy.
func (EDF) Name() string { return "edf" }

// Place implements sim.Placer.
func (EDF) Place(j *sim.Job, s *sim.State) int { return earliestFinish(j, s) }

// Less implements sim.Ranker.
func (EDF) Less(a, b *sim.Job) bool {
	if a.Class != b.Class {
		return a.Class == sim.Interactive
	}
	return a.Deadline < b.Deadline
}

// Key implements sim.KeyRanker: the class, then the deadline.
func (EDF) Key(j *sim.Job) sim.RankKey {
	return sim.RankKey{Major: int64(j.Class), Minor: j.Deadline}
}

// Split implements sim.Splitter: the parts are predicted to end together.
func (EDF) Split(j *sim.Job, s *sim.State) []int32 { return splitEvenly(j, s) }

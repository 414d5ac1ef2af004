package policy

import (
	"slices"

	"github.com/mlsched/mlsched/stages/lib/sim"
)

// The naive placements a policy spec may give a queue order in place of
// its own predicted earliest finish, written "order@placement" (say
// "fifo@backlog" or "edf@round_robin"): what a policy achieves when only
// its queue order is smart. Order and placement are separate choices, so
// that a comparison of two orders is not one of two placements too.
const (
	// PlaceBacklog sends a job to the device whose lanes free up soonest
	// (the smallest predicted backlog per lane), blind to how long the job
	// itself runs there: on a cluster of a slow and a fast device it fills
	// the slow one as readily as the fast.
	PlaceBacklog = "backlog"
	// PlaceRoundRobin deals jobs to the devices in turn.
	PlaceRoundRobin = "round_robin"
	// PlaceRandom draws each job's device uniformly from a seeded
	// generator (Options.Seed).
	PlaceRandom = "random"
)

// placements builds each naive placement.
var placements = map[string]struct {
	build func(o Options) sim.Placer
	// predicts marks a placement that reads predicted service times.
	predicts bool
}{
	PlaceBacklog:    {build: func(Options) sim.Placer { return Backlog{} }, predicts: true},
	PlaceRoundRobin: {build: func(Options) sim.Placer { return &RoundRobin{} }},
	PlaceRandom:     {build: func(o Options) sim.Placer { return NewRandom(o.Seed).(*Random) }},
}

// Placements returns the naive placements' names, sorted.
func Placements() []string {
	out := make([]string, 0, len(placements))
	for n := range placements {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Backlog places each job on the device with the smallest predicted
// backlog per lane, the lowest index on ties (PlaceBacklog).
type Backlog struct{}

var _ sim.Placer = Backlog{}

// Name implements sim.Policy.
func (Backlog) Name() string { return PlaceBacklog }

// Place implements sim.Placer.
func (Backlog) Place(j *sim.Job, s *sim.State) int { return argmin(j, s, s.Backlog) }

// earliestFinish is the default placement of every policy that places
// (fifo, greedy, edf, learned): the device where j is predicted to finish
// first, its backlog per lane plus j's own predicted time there, so that
// a faster device wins even with a longer queue. Of two devices predicted
// to finish j at the same time, the one that runs j faster wins, and only
// then the lower index: a tie never falls to the first device by its
// place in the list.
func earliestFinish(j *sim.Job, s *sim.State) int {
	best, bestEnd, bestRun := -1, 0.0, 0.0
	for d := range s.Devices() {
		if !s.Fits(d, j) {
			continue
		}
		run := s.Predict(d, j)
		end := s.Backlog(d) + run
		if best < 0 || end < bestEnd || end == bestEnd && run < bestRun {
			best, bestEnd, bestRun = d, end, run
		}
	}
	if best < 0 {
		return 0
	}
	return best
}

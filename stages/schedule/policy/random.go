package policy

import (
	"math/rand/v2"

	"github.com/mlsched/mlsched/stages/schedule/sim"
)

// Random sends each job to a device drawn uniformly from a seeded generator
// and runs each queue in arrival order: what no scheduling at all achieves.
type Random struct{ rng *rand.Rand }

var (
	_ sim.Placer      = (*Random)(nil)
	_ sim.StrictOrder = (*Random)(nil)
)

// NewRandom returns a Random policy drawing from a generator seeded by seed.
func NewRandom(seed uint64) sim.Policy {
	return &Random{rng: rand.New(rand.NewPCG(seed, 0xbb67ae8584caa73b))}
}

// Name implements sim.Policy.
func (*Random) Name() string { return "random" }

// Place implements sim.Placer.
func (r *Random) Place(j *sim.Job, s *sim.State) int { return r.rng.IntN(s.Devices()) }

// StrictOrder implements sim.StrictOrder.
func (*Random) StrictOrder() bool { return true }

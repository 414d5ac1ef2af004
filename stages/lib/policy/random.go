package policy

import (
	"math/rand/v2"

	"github.com/mlsched/mlsched/stages/lib/sim"
)

// Random sends each job to a device drawn uniformly from a seeded generator
// and runs each queue in arrival order: what no scheduling at all achieves.
type Random struct {
	src *rand.PCG // the generator's state, which a fork copies
	rng *rand.Rand
}

var (
	_ sim.Placer       = (*Random)(nil)
	_ sim.StrictOrder  = (*Random)(nil)
	_ sim.PolicyForker = (*Random)(nil)
)

// NewRandom returns a Random policy drawing from a generator seeded by seed.
func NewRandom(seed uint64) sim.Policy {
	src := rand.NewPCG(seed, 0xbb67ae8584caa73b)
	return &Random{src: src, rng: rand.New(src)}
}

// Name implements sim.Policy.
func (*Random) Name() string { return "random" }

// Place implements sim.Placer.
func (r *Random) Place(j *sim.Job, s *sim.State) int { return r.rng.IntN(s.Devices()) }

// StrictOrder implements sim.StrictOrder.
func (*Random) StrictOrder() bool { return true }

// ForkPolicy implements sim.PolicyForker: the copy's generator starts in
// the state the original's is in, so both draw the same devices from here.
func (r *Random) ForkPolicy() sim.Policy {
	src := *r.src
	return &Random{src: &src, rng: rand.New(&src)}
}

package policy

import "github.com/mlsched/mlsched/stages/lib/sim"

// RoundRobin deals jobs to the devices in turn, blind to their load and
// speed, and runs each queue in arrival order.
type RoundRobin struct{ next int }

var (
	_ sim.Placer       = (*RoundRobin)(nil)
	_ sim.StrictOrder  = (*RoundRobin)(nil)
	_ sim.PolicyForker = (*RoundRobin)(nil)
)

// Name implements sim.Policy.
func (*RoundRobin) Name() string { return "round_robin" }

// Place implements sim.Placer.
func (r *RoundRobin) Place(j *sim.Job, s *sim.State) int {
	d := r.next % s.Devices()
	r.next = d + 1
	return d
}

// StrictOrder implements sim.StrictOrder.
func (*RoundRobin) StrictOrder() bool { return true }

// ForkPolicy implements sim.PolicyForker: the copy deals on from the same
// device.
func (r *RoundRobin) ForkPolicy() sim.Policy {
	c := *r
	return &c
}

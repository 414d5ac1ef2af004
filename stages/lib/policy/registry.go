package policy

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mlsched/mlsched/stages/lib/sim"
)

// Options are the settings a policy may take.
type Options struct {
	// Seed feeds policies that draw random numbers.
	Seed uint64
	// Weights are the dynamic policy's.
	Weights Weights
}

// Factory builds a policy.
type Factory func(o Options) sim.Policy

// entry is one registered policy. batches marks a policy whose choices are
// about batches, which therefore always runs with micro-batching; learned
// one whose migrations the placement network decides (Settings.Learned);
// places one that places by predicted earliest finish, which a spec may
// replace by a naive placement (Spec.Placement); predicts one whose other
// choices (its order, its batches) read predicted service times
// (State.Predict, Backlog), and so change with the predictor; weighted one
// whose choices read Options.Weights.
type entry struct {
	build    Factory
	batches  bool
	learned  bool
	places   bool
	predicts bool
	weighted bool
}

// registry names every policy: one line each.
var registry = map[string]entry{
	"fifo":        {build: func(Options) sim.Policy { return FIFO{} }, places: true},
	"round_robin": {build: func(Options) sim.Policy { return &RoundRobin{} }},
	"random":      {build: func(o Options) sim.Policy { return NewRandom(o.Seed) }},
	"greedy":      {build: func(Options) sim.Policy { return Greedy{} }, places: true},
	"edf":         {build: func(Options) sim.Policy { return EDF{} }, places: true},
	"batch_aware": {build: func(Options) sim.Policy { return BatchAware{} }, batches: true, places: true, predicts: true},
	"dynamic":     {build: func(o Options) sim.Policy { return Dynamic{W: o.Weights} }, batches: true, places: true, predicts: true, weighted: true},
	"learned":     {build: func(Options) sim.Policy { return Learned{} }, learned: true, places: true},
}

// Names returns the registered policies, sorted.
func Names() []string {
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// New builds the named policy.
func New(name string, o Options) (sim.Policy, error) {
	e, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("unknown policy %q (policies: %s)", name, strings.Join(Names(), ", "))
	}
	return e.build(o), nil
}

// argmin returns the device with the smallest cost, the lowest index on
// ties, among the devices that can hold j (all of them if none can).
func argmin(j *sim.Job, s *sim.State, cost func(d int) float64) int {
	best, bestCost := -1, 0.0
	for d := range s.Devices() {
		if !s.Fits(d, j) {
			continue
		}
		if c := cost(d); best < 0 || c < bestCost {
			best, bestCost = d, c
		}
	}
	if best < 0 {
		return 0
	}
	return best
}

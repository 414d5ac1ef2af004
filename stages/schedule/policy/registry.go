package policy

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mlsched/mlsched/stages/schedule/sim"
)

// Factory builds a policy; seed feeds policies that draw random numbers.
type Factory func(seed uint64) sim.Policy

// registry names every policy: one line each.
var registry = map[string]Factory{
	"fifo":        func(uint64) sim.Policy { return FIFO{} },
	"round_robin": func(uint64) sim.Policy { return &RoundRobin{} },
	"random":      NewRandom,
	"greedy":      func(uint64) sim.Policy { return Greedy{} },
	"edf":         func(uint64) sim.Policy { return EDF{} },
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
func New(name string, seed uint64) (sim.Policy, error) {
	f, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("unknown policy %q (policies: %s)", name, strings.Join(Names(), ", "))
	}
	return f(seed), nil
}

// Known reports whether name is a registered policy.
func Known(name string) bool { return slices.Contains(Names(), name) }

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

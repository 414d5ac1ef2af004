package placementnet

import (
	"math"

	"github.com/mlsched/mlsched/stages/lib/sim"
)

// memoBits sets the size of a memoStandardisation's table per feature:
// 64 entries.
const memoBits = 6

// memoStandardisation is a standardisation that remembers, per feature,
// the standardized value of recent inputs, in a direct-mapped table keyed
// by the input's bits: an input seen before costs a lookup instead of an
// asinh, and the answer is the one apply computed, to the bit.
//
// Most of a decision's features take few values (shares of busy lanes,
// queue lengths, the class, predicted times, which depend on the model
// and batch size), and the schedule stage standardizes each point twice:
// for its cache key and to evaluate it. Ten asinh cost about as much as
// the Go forward pass itself; docs/benchmarks.md has what the memo saves
// in a simulation.
type memoStandardisation struct {
	standardisation
	memo [sim.NumFeatures][1 << memoBits]memoEntry
}

// memoEntry is one remembered input's bits and its standardized value.
type memoEntry struct {
	x uint32
	z float32
}

// noInput is an entry's key before any input fills it: a NaN, which no
// lookup compares with, as apply computes NaN inputs afresh.
const noInput = 0xffffffff

// newMemoStandardisation returns s with an empty memo.
func newMemoStandardisation(s standardisation) *memoStandardisation {
	m := &memoStandardisation{standardisation: s}
	for k := range m.memo {
		for i := range m.memo[k] {
			m.memo[k][i].x = noInput
		}
	}
	return m
}

// apply writes the standardized x into z, as standardisation.apply does.
func (m *memoStandardisation) apply(x, z *[sim.NumFeatures]float32) {
	for k, v := range x {
		b := math.Float32bits(v)
		if b&0x7fffffff > 0x7f800000 { // NaN: never remembered
			z[k] = m.one(k, v)
			continue
		}
		e := &m.memo[k][(b*0x9e3779b1)>>(32-memoBits)]
		if e.x != b {
			e.x, e.z = b, m.one(k, v)
		}
		z[k] = e.z
	}
}

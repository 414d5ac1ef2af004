package predictorfit

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"

	"github.com/mlsched/mlsched/stages/spec/trainspec"
)

// The splits, the values of CVRow.Split and ScoreRow.Split: trainspec's.
const (
	SplitKFold = trainspec.SplitKFold
	SplitBatch = trainspec.SplitBatch
	SplitModel = trainspec.SplitModel
)

// Splits are the splits in the order they are run and listed.
var Splits = []string{SplitKFold, SplitBatch, SplitModel}

// fold is one held-out set of a split: the indexes of its test
// configurations; every other configuration trains.
type fold struct {
	split string
	index int
	test  []int
}

// train returns the complement of f.test among n configurations.
func (f fold) train(n int) []int {
	var tr []int
	for i := range n {
		if !slices.Contains(f.test, i) {
			tr = append(tr, i)
		}
	}
	return tr
}

// foldsOf returns every fold of every split over cs, which is sorted. A
// split that cannot hold anything out (one batch size, one model) has no
// folds; grouped k-fold needs at least k configurations.
func foldsOf(cs []config, k int, seed uint64) ([]fold, error) {
	if len(cs) < k {
		return nil, fmt.Errorf("grouped %d-fold cross-validation needs at least %d configurations, the samples have %d", k, k, len(cs))
	}
	out := kfold(len(cs), k, SplitKFold, seed)
	out = append(out, groupFolds(SplitBatch, cs, func(c config) int { return c.Batch })...)
	modelIndex := map[string]int{}
	var models []string
	for _, c := range cs {
		if _, ok := modelIndex[c.Model]; !ok {
			modelIndex[c.Model] = 0
			models = append(models, c.Model)
		}
	}
	slices.Sort(models)
	for i, m := range models {
		modelIndex[m] = i
	}
	out = append(out, groupFolds(SplitModel, cs, func(c config) int { return modelIndex[c.Model] })...)
	return out, nil
}

// kfold deals n configurations into k folds of split at random, the deal
// keyed to seed and split.
func kfold(n, k int, split string, seed uint64) []fold {
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	rng := rngFor(seed, "split", split)
	for i := len(perm) - 1; i > 0; i-- {
		j := draw(rng, i+1)
		perm[i], perm[j] = perm[j], perm[i]
	}
	out := make([]fold, k)
	for f := range k {
		var test []int
		for p := f; p < len(perm); p += k {
			test = append(test, perm[p])
		}
		slices.Sort(test)
		out[f] = fold{split, f, test}
	}
	return out
}

// groupFolds holds out each value of key in turn, in ascending order; none
// if key has one value.
func groupFolds(split string, cs []config, key func(config) int) []fold {
	var values []int
	for _, c := range cs {
		values = append(values, key(c))
	}
	slices.Sort(values)
	values = slices.Compact(values)
	if len(values) < 2 {
		return nil
	}
	out := make([]fold, len(values))
	for f, v := range values {
		out[f] = fold{split: split, index: f}
		for i, c := range cs {
			if key(c) == v {
				out[f].test = append(out[f].test, i)
			}
		}
	}
	return out
}

// rngFor returns a generator seeded from seed and the labels, so that
// every fold and candidate draws its own stream whatever order they run
// in.
func rngFor(seed uint64, labels ...any) *rand.Rand {
	h := fnv.New64a()
	fmt.Fprintln(h, labels...)
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

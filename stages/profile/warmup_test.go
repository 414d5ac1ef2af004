package profile

import (
	"context"
	"slices"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/ort"
	"github.com/mlsched/mlsched/stages/lib/zoo"
)

// TestSeriesWarmsTheLargestFirst: a series on the CPU runs its warm-ups
// before any timed run, the largest batch size first with profile.warmup
// runs, then each smaller size, in decreasing order, once.
func TestSeriesWarmsTheLargestFirst(t *testing.T) {
	lib := library(t)
	if _, err := ort.Init(lib.Path, lib.Source); err != nil {
		t.Fatal(err)
	}
	model, err := zoo.Build("mlp", zoo.Options{Seed: 1, Precision: FP32})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := catalog.Zoo().Lookup("mlp")
	tm := timing{warmup: 2, repeats: 3, minRepeats: 3, maxRepeats: 3, maxTime: 1 << 62}
	var ran []int
	rows, failed, err := measureSeries(context.Background(), targetOf(DefaultConfig()), tm, model, m, FP32, []int{2, 16, 4}, 1, func(b int) { ran = append(ran, b) })
	if err != nil || len(failed) > 0 {
		t.Fatal(err, failed)
	}
	if want := []int{16, 16, 4, 2}; !slices.Equal(ran[:len(want)], want) {
		t.Errorf("the series' first runs were at batch sizes %v, want the warm-ups %v", ran[:len(want)], want)
	}
	if len(ran) != 4+3*3 || len(rows) != 3*3 {
		t.Errorf("%d runs and %d timed rows, want 13 and 9", len(ran), len(rows))
	}
}

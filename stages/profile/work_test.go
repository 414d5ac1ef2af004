package profile

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/mlsched/mlsched/stages/lib/catalog"
)

// TestCostCountsTheRunsTimeRunsMakes: the estimate of a configuration's
// cost counts exactly the runs timeRuns makes, for runs fast and slow, so
// that the work estimate is the timing rule's own.
func TestCostCountsTheRunsTimeRunsMakes(t *testing.T) {
	tm := timing{warmup: 2, repeats: 20, minRepeats: 3, maxRepeats: 1000, minTime: 50 * time.Millisecond, maxTime: time.Second}
	for _, latency := range []time.Duration{time.Microsecond, 30 * time.Microsecond, time.Millisecond, 40 * time.Millisecond, 300 * time.Millisecond, 2 * time.Second} {
		n, used := 0, time.Duration(0)
		for !tm.done(n, used) {
			n++
			used += latency
		}
		if got, want := tm.cost(latency, tm.warmup), time.Duration(tm.warmup+n)*latency; got != want {
			t.Errorf("latency %s: cost %s, want %s (%d timed runs)", latency, got, want, n)
		}
	}
	if got, want := exactly(1, 5).cost(time.Second, 1), 6*time.Second; got != want {
		t.Errorf("exactly(1, 5).cost(1s) = %s, want %s", got, want)
	}
}

// TestWorkPredictsTheTimeLeft holds the profile's progress estimate to a
// real profile: the default series measured on this project's 2-core
// machine (testdata/measured-series.csv: each configuration's timed runs
// and their seconds, from a quiet make run's samples.parquet). At every
// series from a tenth of the way on, the time left that the estimated work
// implies (time spent × work left ÷ work done) is within a factor of 1.6 of
// the true time left, where counting configurations alike was off by up to
// a factor of 5.
func TestWorkPredictsTheTimeLeft(t *testing.T) {
	f, err := os.Open("testdata/measured-series.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	measured := map[string]float64{} // model/precision: seconds, warm-up runs included
	w := work{cfg: cfg, t: timing{warmup: cfg.Warmup, repeats: cfg.Repeats, minRepeats: cfg.MinRepeats, maxRepeats: cfg.MaxRepeats, minTime: cfg.MinTime, maxTime: cfg.MaxTime}, cat: catalog.Zoo()}
	for _, r := range rows[1:] {
		batch, _ := strconv.Atoi(r[2])
		runs, _ := strconv.Atoi(r[3])
		secs, _ := strconv.ParseFloat(r[4], 64)
		warmups := w.t.warmupsOf(batch, slices.Max(cfg.BatchSizesOf(r[0])), true)
		measured[r[0]+"/"+r[1]] += secs * float64(runs+warmups) / float64(runs)
	}
	type step struct {
		secs        float64
		units, imgs int64
	}
	var steps []step
	var allSecs float64
	var allUnits, allCount int64
	for _, m := range cfg.ModelNames() {
		for _, p := range cfg.Precisions {
			secs, ok := measured[m+"/"+p]
			if !ok {
				t.Fatalf("no measured series %s/%s", m, p)
			}
			s := step{secs: secs, units: w.series(m), imgs: int64(len(cfg.BatchSizesOf(m)))}
			steps = append(steps, s)
			allSecs += s.secs
			allUnits += s.units
			allCount += s.imgs
		}
	}
	worst := func(by func(step) int64, all int64) float64 {
		var spent float64
		var done int64
		worst := 1.0
		for _, s := range steps[:len(steps)-1] {
			spent += s.secs
			done += by(s)
			if spent < allSecs/10 {
				continue
			}
			left, eta := allSecs-spent, spent*float64(all-done)/float64(done)
			worst = max(worst, eta/left, left/eta)
		}
		return worst
	}
	byWork := worst(func(s step) int64 { return s.units }, allUnits)
	byCount := worst(func(s step) int64 { return s.imgs }, allCount)
	t.Logf("worst factor between the time left told and the true: %.2f by estimated work, %.2f by counting configurations", byWork, byCount)
	if byWork > 1.6 || byWork >= byCount || math.IsNaN(byWork) {
		t.Errorf("%s", fmt.Sprintf("by estimated work the time left is off by a factor of %.2f (counting configurations: %.2f); want at most 1.6", byWork, byCount))
	}
}

package cluster

import (
	"context"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// boundsByJob is the bounds' definition, summed job by job over a pass
// that reads the jobs at load: what one Scan must give at every load.
func boundsByJob(t *testing.T, cl *Cluster, path string, load float64) schedulespec.BoundsRow {
	t.Helper()
	r, err := cl.OpenJobs(path, load, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b := schedulespec.BoundsRow{Replication: 1, Load: load}
	for {
		j, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if j == nil {
			break
		}
		b.Jobs++
		b.LastArrivalS = j.Arrival
		if !cl.Fits(j) {
			b.UnfitJobs++
			continue
		}
		wall, profiled, _ := cl.fastest(j)
		b.WorkS += wall
		b.ProfiledWorkS += profiled
		b.ArrivalLBS = max(b.ArrivalLBS, j.Arrival+wall)
	}
	for d, dev := range cl.devices {
		b.EffectiveLanes += cl.EffectiveLanes(d)
		b.SpeedCapacity += dev.Speed * cl.EffectiveLanes(d)
	}
	b.WorkLBS = max(b.WorkS/b.EffectiveLanes, b.ProfiledWorkS/b.SpeedCapacity)
	b.MakespanLBS = max(b.WorkLBS, b.ArrivalLBS)
	if ran := b.Jobs - b.UnfitJobs; ran > 0 {
		b.MeanLatencyLBS = b.WorkS / float64(ran)
	}
	return b
}

func TestScanGivesTheBoundsAtEveryLoad(t *testing.T) {
	gen := mlpWorkload(20000)
	gen.Classes.Batch.BatchMax = 256 // many distinct fastest times
	path := generateJobs(t, gen, 1)
	cfg := testConfig()
	cl, err := Open(cfg, catalog.Zoo(), writeSamples(t, learnedProfile()))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := cl.Scan(context.Background(), path, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, load := range []float64{0.01, 0.3, 1, 1.7, 2.9, 13, 400} {
		if got, want := sc.Bounds(load), boundsByJob(t, cl, path, load); got != want {
			t.Errorf("Scan.Bounds(%v) = %+v\nsummed job by job: %+v", load, got, want)
		}
	}
	// The frontier holds one job per distinct fastest time at most, a few
	// hundred configurations here, not a share of the 20,000 jobs.
	walls := map[float64]bool{}
	for _, f := range sc.frontier {
		if walls[f.wall] {
			t.Errorf("two jobs on the frontier take %v", f.wall)
		}
		walls[f.wall] = true
	}
	if len(sc.frontier) > 2*256 {
		t.Errorf("the frontier holds %d jobs of 20000", len(sc.frontier))
	}
	perUnit, err := sc.Capacity()
	if err != nil {
		t.Fatal(err)
	}
	if b1 := boundsByJob(t, cl, path, 1); perUnit != b1.ArrivalLBS/b1.WorkLBS {
		t.Errorf("Capacity = %v, want ArrivalLBS/WorkLBS at load 1 = %v", perUnit, b1.ArrivalLBS/b1.WorkLBS)
	}
}

package profile

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/mlsched/mlsched/stages/lib/placementnet"
	"github.com/mlsched/mlsched/stages/lib/sim"
)

// servingPoints is how many distinct decision points the serving calls
// cycle through, so that a call's inputs differ from the last call's, as
// a simulation's decisions do.
const servingPoints = 4096

// measureServing times the schedule stage's serving path for the learned
// policy's decisions: placementnet's Network.Eval, loaded as the schedule
// stage loads the trained network (one session on this thread, a binding
// per batch size), on placementnet.Synthetic(seed), a network of the
// trained one's shape. After a tenth as many untimed rounds, it makes
// s.Calls rounds in which each batch size of s.BatchSizes takes its turn,
// one call timed on the wall clock each: every call is a row, so the rows
// hold the distribution a decision batch takes, its tail included, and a
// drift of the machine falls on every size alike.
func measureServing(ctx context.Context, s Serving, seed int64) ([]Sample, error) {
	model, err := placementnet.Synthetic(seed)
	if err != nil {
		return nil, err
	}
	n, err := placementnet.Load(model, placementnet.Options{MaxBatch: slices.Max(s.BatchSizes)})
	if err != nil {
		return nil, err
	}
	lat, err := timeServing(ctx, n, s, decisionPoints(servingPoints, uint64(seed)))
	if err = errors.Join(err, n.Close()); err != nil {
		return nil, err
	}
	var rows []Sample
	for i, b := range s.BatchSizes {
		rows = append(rows, samplesOf(lat[i], Sample{Kind: KindServing, Backend: backendORT, Provider: providerCPU, Device: deviceCPU,
			Model: ServingModel, Precision: FP32, Batch: int32(b), Threads: 1, Concurrency: 1})...)
	}
	return rows, nil
}

// timeServing runs the rounds of measureServing on n and returns each
// batch size's latencies in seconds, in the order of s.BatchSizes.
func timeServing(ctx context.Context, n *placementnet.Network, s Serving, points [][sim.NumFeatures]float32) ([][]float64, error) {
	p := make([]float32, slices.Max(s.BatchSizes))
	lat := make([][]float64, len(s.BatchSizes))
	for i := range lat {
		lat[i] = make([]float64, 0, s.Calls)
	}
	next := 0
	call := func(b int) (time.Duration, error) {
		if next+b > len(points) {
			next = 0
		}
		x := points[next : next+b]
		next += b
		t0 := time.Now()
		err := n.Eval(x, p[:b])
		return time.Since(t0), err
	}
	warmup := max(1, s.Calls/10)
	for round := range warmup + s.Calls {
		if round%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		for i, b := range s.BatchSizes {
			d, err := call(b)
			if err != nil {
				return nil, fmt.Errorf("serve %d decisions: %w", b, err)
			}
			if round >= warmup {
				// A call under a nanosecond cannot be told from the
				// clock's resolution; Validate's floor is a nanosecond.
				lat[i] = append(lat[i], max(d.Seconds(), MinLatencyS))
			}
		}
	}
	return lat, nil
}

// decisionPoints returns n seeded points shaped like the simulator's
// decision features (sim.FeatureNames): shares of busy lanes in [0, 1],
// a queue length, backlogs, waits and predicted times from 100 µs to 10
// s, a slack either side of zero and an interactive flag. The cost of a
// call does not depend on them, but asinh of a denormal or of zero could
// take a path real inputs never do.
func decisionPoints(n int, seed uint64) [][sim.NumFeatures]float32 {
	r := rand.New(rand.NewPCG(seed, 0xdec1510))
	seconds := func() float32 { return float32(math.Pow(10, -4+5*r.Float64())) }
	out := make([][sim.NumFeatures]float32, n)
	for i := range out {
		out[i] = [sim.NumFeatures]float32{
			float32(r.Float64()), float32(r.Float64()), float32(r.IntN(20)),
			seconds(), seconds(), seconds(), seconds(), seconds(),
			float32(r.NormFloat64() * 0.1), float32(r.IntN(2)),
		}
	}
	return out
}

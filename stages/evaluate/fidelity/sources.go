package fidelity

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// The sources of error the section weighs, in the order of
// sources.contrib.
const (
	srcAlone = iota
	srcContention
	srcDispatch
	srcLateness
	numSources
)

// sourceInfo names each source: its metric, and what it is when it makes
// the real run slower (more) or faster (less) than the simulation.
var sourceInfo = [numSources]struct{ metric, column, more, less string }{
	srcAlone:      {"contribution_service_alone_s", "run time alone", "service times longer than the profile's mean when alone", "service times shorter than the profile's mean when alone"},
	srcContention: {"contribution_contention_s", "contention", "contention beyond the profiled factor", "contention below the profiled factor"},
	srcDispatch:   {"contribution_dispatch_s", "dispatch overhead", "dispatch overhead", "dispatch overhead"},
	srcLateness:   {"contribution_lateness_s", "scheduler lateness", "scheduler lateness", "scheduler lateness"},
}

// sources are a real run's figures from dispatch.parquet and
// runs.parquet, and each source's estimated addition to a real job's
// end-to-end latency.
type sources struct {
	// batches counts the run's batches, jobs the jobs they ran (the real
	// run's completed jobs).
	batches, jobs int
	// Dispatch overhead (run_s − start_s) and notice lag (noticed_s −
	// end_s), median and P99 over the batches.
	dispatchP50, dispatchP99, lagP50, lagP99 float64
	// The measured run time (end_s − run_s) over the simulator's model of
	// it on the real run's timeline (modelledRun), summed over the batches
	// that ran alone throughout and over those that ran beside other
	// lanes at some point (a batch weighs by its time), with their
	// counts; factor is the latter's modelled time over their profile
	// means: how much the profiled contention slowed them in the model.
	alone, contended   float64
	aloneN, contendedN int
	factor             float64
	// latePerJob is runs.parquet's late events per job of the slice.
	latePerJob float64
	// faults counts the pages the lanes' threads faulted in during the
	// batches' runs, -1 where the system did not count them.
	faults int64
	// contrib is each source's seconds per completed job, positive when
	// it makes the real run slower than the simulation; gap is the real
	// mean end-to-end latency less the simulated.
	contrib [numSources]float64
	gap     float64
}

// sourcesOf computes a real run's figures from its batches: what the
// simulator does not model, each source's seconds per job.
//
// A batch's measured run time is held to the time the simulator's service
// model gives it on the real run's own timeline (modelledRun): the
// profile's mean, slowed by the device's profiled contention factor
// while the other lanes of its device ran their real batches. The excess
// of a batch that ran alone throughout and of one that ran beside others
// at some point, its dispatch overhead, and the median lateness times the
// late events per job of the slice are what each source adds to a real
// job's own latency, a batch counted once per job in it. Queueing behind
// a delayed batch is not counted, so the sources need not add up to the
// gap.
func sourcesOf(batches []schedulespec.DispatchRow, row schedulespec.RealRunRow, factors map[string][]float64) (sources, error) {
	s := sources{batches: len(batches), faults: -1}
	var dispatch, lag []float64
	// Run time, modelled time and profiled time, summed: a median over
	// batches would let the mlp's microsecond batches, all fixed cost at
	// 10 to 20 times the profile's mean, outvote the batches that hold
	// the time.
	var aloneRun, aloneModel, besideRun, besideModel, besideProf float64
	var sum [numSources]float64
	for i, b := range batches {
		for _, v := range []float64{b.StartS, b.RunS, b.EndS, b.NoticedS, b.ProfileMeanS} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return s, fmt.Errorf("row %d (batch %d): a time is %v; want finite times", i+1, b.BatchID, v)
			}
		}
	}
	lanes := lanesOf(batches)
	for _, b := range batches {
		w := float64(b.Jobs)
		s.jobs += int(b.Jobs)
		if b.Faults >= 0 {
			s.faults = max(s.faults, 0) + b.Faults
		}
		dispatch = append(dispatch, b.RunS-b.StartS)
		lag = append(lag, b.NoticedS-b.EndS)
		sum[srcDispatch] += w * (b.RunS - b.StartS)
		if !(b.ProfileMeanS > 0) {
			continue // no profile curve to hold it to
		}
		run := b.EndS - b.RunS
		model, beside := modelledRun(b, lanes[b.Device], factors[b.Device])
		if !beside {
			s.aloneN++
			aloneRun, aloneModel = aloneRun+run, aloneModel+model
			sum[srcAlone] += w * (run - model)
			continue
		}
		s.contendedN++
		besideRun, besideModel, besideProf = besideRun+run, besideModel+model, besideProf+b.ProfileMeanS
		sum[srcContention] += w * (run - model)
	}
	for _, v := range [][]float64{dispatch, lag} {
		slices.Sort(v)
	}
	s.dispatchP50, s.dispatchP99 = quantileOf(dispatch, 0.5), quantileOf(dispatch, 0.99)
	s.lagP50, s.lagP99 = quantileOf(lag, 0.5), quantileOf(lag, 0.99)
	s.alone, s.contended, s.factor = math.NaN(), math.NaN(), math.NaN()
	if aloneModel > 0 {
		s.alone = aloneRun / aloneModel
	}
	if besideModel > 0 {
		s.contended, s.factor = besideRun/besideModel, besideModel/besideProf
	}
	s.latePerJob = math.NaN()
	if row.Jobs > 0 {
		s.latePerJob = float64(row.LateEvents) / float64(row.Jobs)
	}
	late := 0.0
	if row.LateEvents > 0 {
		late = row.LateP50S * s.latePerJob
	}
	for k := range s.contrib {
		s.contrib[k] = math.NaN()
		if s.jobs > 0 {
			s.contrib[k] = sum[k] / float64(s.jobs)
		}
	}
	s.contrib[srcLateness] = late
	return s, nil
}

// span is the time a lane ran a batch, from onnxruntime's Run to its end.
type span struct{ run, end float64 }

// lanesOf returns the spans of each device's lanes, by device and lane,
// each lane's in order.
func lanesOf(batches []schedulespec.DispatchRow) map[string]map[int32][]span {
	lanes := map[string]map[int32][]span{}
	for _, b := range batches {
		if lanes[b.Device] == nil {
			lanes[b.Device] = map[int32][]span{}
		}
		lanes[b.Device][b.Lane] = append(lanes[b.Device][b.Lane], span{b.RunS, b.EndS})
	}
	for _, byLane := range lanes {
		for _, sp := range byLane {
			slices.SortFunc(sp, func(a, b span) int { return cmp.Compare(a.run, b.run) })
		}
	}
	return lanes
}

// modelledRun is the run time the simulator's service model gives batch b
// on the real run's own timeline: its profile mean of work, done from its
// Run at the rate the simulator gives a lane while k lanes of its device
// run (1 over the profiled factor at k, b's own lane one of them, the
// others running the batches they really ran), as the simulator slows
// every busy lane while others run. beside says whether another lane ran
// at any moment of b's real run.
func modelledRun(b schedulespec.DispatchRow, lanes map[int32][]span, factors []float64) (model float64, beside bool) {
	var others [][]span
	for l, sp := range lanes {
		if l == b.Lane {
			continue
		}
		others = append(others, sp)
		if i := endingAfter(sp, b.RunS); i < len(sp) && sp[i].run < b.EndS {
			beside = true
		}
	}
	t, work := b.RunS, b.ProfileMeanS
	for work > 0 {
		k, next := int32(1), math.Inf(1)
		for _, sp := range others {
			i := endingAfter(sp, t)
			if i == len(sp) {
				continue
			}
			if sp[i].run <= t {
				k++
				next = min(next, sp[i].end)
			} else {
				next = min(next, sp[i].run)
			}
		}
		rate := 1 / contentionFactor(factors, k)
		if dt := work / rate; t+dt <= next {
			t += dt
			break
		}
		work -= (next - t) * rate
		t = next
	}
	return t - b.RunS, beside
}

// endingAfter is the index of the first of a lane's spans to end after t,
// len(sp) if none does.
func endingAfter(sp []span, t float64) int {
	i, _ := slices.BinarySearchFunc(sp, t, func(x span, t float64) int {
		if x.end <= t {
			return -1
		}
		return 1
	})
	return i
}

// contentionFactor is the profiled slowdown of each lane while busy lanes
// of its device run, itself included: factors[busy-1], the last for more
// lanes than they cover, 1 without any.
func contentionFactor(factors []float64, busy int32) float64 {
	if len(factors) == 0 || busy < 1 {
		return 1
	}
	return factors[min(int(busy), len(factors))-1]
}

package metrics

import (
	"fmt"
	"math"
	"slices"
)

// ClassSummary is a Summary's part for the jobs of one class.
type ClassSummary struct {
	// Class is the class's name, generate.ClassInteractive or
	// generate.ClassBatch; Jobs its number of jobs, rejected ones included.
	Class string
	Jobs  int64
	// E2E, Wait and Service summarize the class's completed jobs.
	E2E, Wait, Service Latency
	// SLOViolation is the fraction of the class's jobs that missed their
	// SLO, rejected jobs included (they never meet it).
	SLOViolation float64
	// Goodput is the class's jobs that met their SLO per second of the
	// run's makespan.
	Goodput float64
}

// DeviceUse is how busy one device was.
type DeviceUse struct {
	// Device is the device's name.
	Device string
	// BusyLaneS is the lane-seconds its lanes ran batches (ReadBusy).
	BusyLaneS float64
	// Utilization is BusyLaneS / (lanes × makespan), in [0, 1].
	Utilization float64
}

// Summary is one policy's metrics over one trace; the package doc defines
// each. Rates per second of makespan are 0 when no job completed (the
// makespan is 0 then).
type Summary struct {
	// Policy is the trace's policy.
	Policy string
	// Jobs is the number of jobs in the trace, Rejected how many of them
	// fit on no device.
	Jobs, Rejected int64
	// E2E, Wait and Service summarize the completed (not rejected) jobs.
	E2E, Wait, Service Latency
	// Classes has the interactive then the batch class; a class without
	// jobs is left out.
	Classes []ClassSummary
	// SLOViolation is the fraction of all jobs that missed their SLO,
	// rejected jobs included.
	SLOViolation float64
	// Goodput is the jobs that met their SLO per second of makespan.
	Goodput float64
	// Throughput is the completed jobs per second of makespan.
	Throughput float64
	// SampleThroughput is the completed jobs' own samples (their batch
	// sizes in the workload) per second of makespan: 0 without a
	// workload, NaN when the workload lacks a completed job.
	SampleThroughput float64
	// Makespan is the latest end_s of a completed job, in seconds from
	// the workload's start; 0 when none completed.
	Makespan float64
	// Devices has the cluster's devices in cluster order.
	Devices []DeviceUse
	// Jain is Jain's fairness index over the devices' utilizations.
	Jain float64
	// Fairness is the mean wait of the completed batch jobs over that of
	// the completed interactive jobs.
	Fairness float64
	// MakespanGap and LatencyGap are how far the makespan and the mean
	// end-to-end latency are above their lower bounds, as fractions.
	MakespanGap, LatencyGap float64
}

// Summarize computes a policy's summary from its trace, its devices' busy
// time (ReadBusy, in t.Devices' order), the cluster (whose devices must be
// t.Devices, in order), the lower bounds and the workload's job samples,
// which may be nil: SampleThroughput is 0 then. A summary has no
// intervals: one run is one sample, and the evaluate stage's output
// analysis gives intervals across replications.
//
// Summarize panics when busy or the cluster does not match t.Devices: the
// three come from one cluster.parquet, so a mismatch is a bug in the
// caller, not a property of the data.
func Summarize(t *Trace, busy []float64, cl Cluster, b Bounds, samples *Samples) Summary {
	if len(busy) != len(t.Devices) || !slices.Equal(cl.Devices, t.Devices) || len(cl.Lanes) != len(t.Devices) {
		panic(fmt.Sprintf("metrics: Summarize: %d busy times and cluster devices %q (%d lane counts) for a trace of devices %q",
			len(busy), cl.Devices, len(cl.Lanes), t.Devices))
	}
	s := Summary{Policy: t.Policy, Jobs: int64(t.Len()), Makespan: t.makespan()}

	var met int64
	for i, ok := range t.SLOMet {
		if ok {
			met++
		}
		if t.Rejected[i] {
			s.Rejected++
		}
	}
	completed := s.Jobs - s.Rejected
	s.SLOViolation = 1 - ratio(float64(met), float64(s.Jobs))
	s.Goodput = perSecond(float64(met), s.Makespan)
	s.Throughput = perSecond(float64(completed), s.Makespan)

	// Each class's durations are sorted, then merged into all of them
	// sorted: cheaper than sorting all of them as well.
	var classes [len(classNames)]ClassSummary
	for m, x := range [...][]float64{t.E2E, t.Wait, t.Service} {
		var sorted [len(classNames)][]float64
		for c := range classNames {
			sorted[c] = t.completed(x, c)
			mu := mean(sorted[c])
			sortFloats(sorted[c])
			*classes[c].latencies()[m] = latencyFrom(mu, sorted[c])
		}
		all := merge(sorted[Interactive], sorted[Batch])
		*s.latencies()[m] = latencyFrom(t.meanCompleted(x), all)
	}

	for c := range classNames {
		cs := &classes[c]
		cs.Class = classNames[c]
		var cMet int64
		for i, k := range t.Class {
			if int(k) == c {
				cs.Jobs++
				if t.SLOMet[i] {
					cMet++
				}
			}
		}
		if cs.Jobs == 0 {
			continue
		}
		cs.SLOViolation = 1 - float64(cMet)/float64(cs.Jobs)
		cs.Goodput = perSecond(float64(cMet), s.Makespan)
		s.Classes = append(s.Classes, *cs)
	}
	s.Fairness = math.NaN()
	if iw, bw := classes[Interactive].Wait.Mean, classes[Batch].Wait.Mean; iw > 0 && !math.IsNaN(bw) {
		s.Fairness = bw / iw
	}

	if samples != nil {
		var total float64
		for i, id := range t.JobID {
			if t.Rejected[i] {
				continue
			}
			n, ok := samples.Of(id)
			if !ok {
				total = math.NaN()
				break
			}
			total += float64(n)
		}
		s.SampleThroughput = perSecond(total, s.Makespan)
	}

	util := make([]float64, len(busy))
	for d, name := range t.Devices {
		util[d] = perSecond(busy[d]/float64(cl.Lanes[d]), s.Makespan)
		s.Devices = append(s.Devices, DeviceUse{Device: name, BusyLaneS: busy[d], Utilization: util[d]})
	}
	s.Jain = jain(util)
	s.MakespanGap = ratio(s.Makespan, b.MakespanLBS) - 1
	s.LatencyGap = ratio(s.E2E.Mean, b.MeanLatencyLBS) - 1
	return s
}

// latencies are the summary's latency fields, in the order e2e, wait,
// service.
func (s *Summary) latencies() [3]*Latency { return [...]*Latency{&s.E2E, &s.Wait, &s.Service} }

// latencies are the class summary's latency fields, in the order e2e,
// wait, service.
func (c *ClassSummary) latencies() [3]*Latency { return [...]*Latency{&c.E2E, &c.Wait, &c.Service} }

// makespan is the latest end of a completed job, 0 when none completed.
func (t *Trace) makespan() float64 {
	var m float64
	for i, e := range t.End {
		if !t.Rejected[i] {
			m = max(m, e)
		}
	}
	return m
}

// completed returns x's values for the completed jobs of class c, in job
// order, in a new slice.
func (t *Trace) completed(x []float64, c int) []float64 {
	k := 0
	for i, r := range t.Rejected {
		if !r && int(t.Class[i]) == c {
			k++
		}
	}
	out := make([]float64, 0, k)
	for i, v := range x {
		if !t.Rejected[i] && int(t.Class[i]) == c {
			out = append(out, v)
		}
	}
	return out
}

// meanCompleted returns the mean of x over the completed jobs, summed in
// job order, or NaN when none completed.
func (t *Trace) meanCompleted(x []float64) float64 {
	var sum float64
	var k int
	for i, v := range x {
		if !t.Rejected[i] {
			sum += v
			k++
		}
	}
	if k == 0 {
		return math.NaN()
	}
	return sum / float64(k)
}

// merge returns the ascending merge of the ascending a and b.
func merge(a, b []float64) []float64 {
	out := make([]float64, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if b[0] < a[0] {
			out, b = append(out, b[0]), b[1:]
		} else {
			out, a = append(out, a[0]), a[1:]
		}
	}
	return append(append(out, a...), b...)
}

// ratio is a/b, NaN when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

// jain is Jain's fairness index (Σx)²/(n·Σx²): 1 when every x is equal,
// idle devices included, down to 1/n when one device does all the work;
// NaN for no devices.
func jain(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	var s, s2 float64
	for _, v := range x {
		s += v
		s2 += v * v
	}
	if s2 == 0 {
		return 1
	}
	return s * s / (float64(len(x)) * s2)
}

// perSecond is x per second of makespan: 0 when the makespan is.
func perSecond(x, makespan float64) float64 {
	if makespan == 0 {
		return 0
	}
	return x / makespan
}

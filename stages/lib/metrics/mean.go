package metrics

// MeanSummary is the summary of a policy over independent replications:
// every number the mean of the replications' (the jobs and rejections
// rounded), each class and device matched by name. It is the point
// estimate beside an interval across replications; reps must be one
// policy's, in replication order, on one cluster. With one replication it
// is that replication's summary.
func MeanSummary(reps []Summary) Summary {
	if len(reps) <= 1 {
		if len(reps) == 1 {
			return reps[0]
		}
		return Summary{}
	}
	n := float64(len(reps))
	m := Summary{Policy: reps[0].Policy}
	var jobs, rejected float64
	for _, s := range reps {
		jobs += float64(s.Jobs)
		rejected += float64(s.Rejected)
		addLatency(&m.E2E, s.E2E)
		addLatency(&m.Wait, s.Wait)
		addLatency(&m.Service, s.Service)
		m.SLOViolation += s.SLOViolation
		m.Goodput += s.Goodput
		m.Throughput += s.Throughput
		m.SampleThroughput += s.SampleThroughput
		m.Makespan += s.Makespan
		m.Jain += s.Jain
		m.Fairness += s.Fairness
		m.MakespanGap += s.MakespanGap
		m.LatencyGap += s.LatencyGap
	}
	m.Jobs, m.Rejected = int64(jobs/n+0.5), int64(rejected/n+0.5)
	scaleLatency(&m.E2E, n)
	scaleLatency(&m.Wait, n)
	scaleLatency(&m.Service, n)
	for _, x := range []*float64{&m.SLOViolation, &m.Goodput, &m.Throughput, &m.SampleThroughput, &m.Makespan, &m.Jain, &m.Fairness, &m.MakespanGap, &m.LatencyGap} {
		*x /= n
	}
	// Classes and devices, by name, in the first replication's order; a
	// class one replication lacks (no job of it) is averaged over the
	// replications that have it.
	for _, c := range reps[0].Classes {
		var mc ClassSummary
		mc.Class = c.Class
		var k, cjobs float64
		for _, s := range reps {
			for _, x := range s.Classes {
				if x.Class != c.Class {
					continue
				}
				k++
				cjobs += float64(x.Jobs)
				addLatency(&mc.E2E, x.E2E)
				addLatency(&mc.Wait, x.Wait)
				addLatency(&mc.Service, x.Service)
				mc.SLOViolation += x.SLOViolation
				mc.Goodput += x.Goodput
			}
		}
		mc.Jobs = int64(cjobs/k + 0.5)
		scaleLatency(&mc.E2E, k)
		scaleLatency(&mc.Wait, k)
		scaleLatency(&mc.Service, k)
		mc.SLOViolation /= k
		mc.Goodput /= k
		m.Classes = append(m.Classes, mc)
	}
	for d, dev := range reps[0].Devices {
		md := DeviceUse{Device: dev.Device}
		for _, s := range reps {
			md.BusyLaneS += s.Devices[d].BusyLaneS
			md.Utilization += s.Devices[d].Utilization
		}
		md.BusyLaneS /= n
		md.Utilization /= n
		m.Devices = append(m.Devices, md)
	}
	return m
}

func addLatency(sum *Latency, l Latency) {
	sum.Mean += l.Mean
	sum.P50 += l.P50
	sum.P95 += l.P95
	sum.P99 += l.P99
	sum.Max += l.Max
}

func scaleLatency(l *Latency, n float64) {
	l.Mean /= n
	l.P50 /= n
	l.P95 /= n
	l.P99 /= n
	l.Max /= n
}

package cluster

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// Bounds reads the jobs of jobsPath once (the first limit of them, when
// limit > 0), their arrival times divided by load, resolving the cluster's
// curves for every (model, precision) among the jobs that fit somewhere,
// and returns their lower bounds (bounds.parquet's row; see the schedule
// stage's package doc).
func (cl *Cluster) Bounds(ctx context.Context, jobsPath string, load float64, limit int64) (schedulespec.BoundsRow, error) {
	r, err := cl.OpenJobs(jobsPath, load, limit)
	if err != nil {
		return schedulespec.BoundsRow{}, err
	}
	defer r.Close()
	b := schedulespec.BoundsRow{Replication: 1, Load: load}
	for {
		if r.done%CheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return schedulespec.BoundsRow{}, err
			}
		}
		j, err := r.Next()
		if err != nil {
			return schedulespec.BoundsRow{}, err
		}
		if j == nil {
			break
		}
		b.Jobs++
		b.LastArrivalS = j.Arrival // the jobs come in arrival order
		if !cl.Fits(j) {
			b.UnfitJobs++ // rejected by every policy; no service time
			r.Recycle(j)
			continue
		}
		if err := cl.Resolve(j); err != nil {
			return schedulespec.BoundsRow{}, err
		}
		wall, profiled, _ := cl.fastest(j)
		b.WorkS += wall
		b.ProfiledWorkS += profiled
		b.ArrivalLBS = max(b.ArrivalLBS, j.Arrival+wall)
		r.Recycle(j)
	}
	for d, dev := range cl.devices {
		lanes := cl.EffectiveLanes(d)
		b.EffectiveLanes += lanes
		b.SpeedCapacity += dev.Speed * lanes
	}
	b.WorkLBS = max(b.WorkS/b.EffectiveLanes, b.ProfiledWorkS/b.SpeedCapacity)
	b.MakespanLBS = max(b.WorkLBS, b.ArrivalLBS)
	if ran := b.Jobs - b.UnfitJobs; ran > 0 {
		b.MeanLatencyLBS = b.WorkS / float64(ran)
	}
	return b, nil
}

// Capacity reads the jobs of jobsPath (the first limit of them, when
// limit > 0) at load 1 for their bounds, and returns the schedule load
// that offers them at the cluster's full capacity as the sweep defines it:
// the span of their arrivals over their work's lower bound (ArrivalLBS /
// WorkLBS), so that u times it offers them at fraction u of capacity. Like
// Bounds it resolves the curves of the jobs it reads.
func (cl *Cluster) Capacity(ctx context.Context, jobsPath string, limit int64) (perUnit float64, b schedulespec.BoundsRow, err error) {
	if b, err = cl.Bounds(ctx, jobsPath, 1, limit); err != nil {
		return 0, b, err
	}
	if !(b.WorkLBS > 0) {
		return 0, b, errors.New("the eval jobs hold no work that fits the cluster")
	}
	return b.ArrivalLBS / b.WorkLBS, b, nil
}

// Rows describes the cluster for cluster.parquet.
func (c *Cluster) Rows() []schedulespec.ClusterRow {
	rows := make([]schedulespec.ClusterRow, len(c.cfg))
	for d, dev := range c.cfg {
		con := c.contention[d]
		rows[d] = schedulespec.ClusterRow{
			Device:             dev.Name,
			Kind:               dev.Kind,
			ProfileDevice:      dev.ProfileDevice,
			Threads:            int32(dev.Threads),
			Lanes:              int32(dev.Lanes),
			MemoryMiB:          dev.MemoryMiB,
			Speed:              dev.Speed,
			ContentionMeasured: con != nil && con.Measured(),
			ContentionFactors:  c.factors[d][1:],
			EffectiveLanes:     c.EffectiveLanes(d),
			ContentionNote:     c.contentionNote(d),
		}
	}
	return rows
}

// RejectedWarnShare is the share of the eval workload that, rejected under
// every policy because it fits on no device, the stage warns of: a
// comparison of policies on what is left is not the one asked for.
const RejectedWarnShare = 0.05

// RejectedWarning says, when more than RejectedWarnShare of the jobs fit
// on no device, how many and which: one more pass over the jobs counts
// them by model and precision. It returns "" when the share is lower.
func (cl *Cluster) RejectedWarning(ctx context.Context, jobsPath string, load float64, b schedulespec.BoundsRow) (string, error) {
	if b.Jobs == 0 || float64(b.UnfitJobs) <= RejectedWarnShare*float64(b.Jobs) {
		return "", nil
	}
	r, err := cl.OpenJobs(jobsPath, load, 0)
	if err != nil {
		return "", err
	}
	defer r.Close()
	counts := map[int]int64{} // by pair
	for {
		if r.done%CheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return "", err
			}
		}
		j, err := r.Next()
		if err != nil {
			return "", err
		}
		if j == nil {
			break
		}
		if !cl.Fits(j) {
			counts[pairOf(j.Model, j.Precision)]++
		}
		r.Recycle(j)
	}
	type group struct {
		name string
		n    int64
	}
	var groups []group
	for pr, n := range counts {
		model, prec := pr/numPrecisions, pr%numPrecisions
		groups = append(groups, group{cl.ModelName(int32(model)) + " " + precisionNames[prec], n})
	}
	sort.Slice(groups, func(i, k int) bool {
		if groups[i].n != groups[k].n {
			return groups[i].n > groups[k].n
		}
		return groups[i].name < groups[k].name
	})
	parts := make([]string, len(groups))
	for i, g := range groups {
		parts[i] = fmt.Sprintf("%d %s", g.n, g.name)
	}
	largest := 0
	for d, dev := range cl.devices {
		if dev.Memory > cl.devices[largest].Memory {
			largest = d
		}
	}
	return fmt.Sprintf("%.1f%% of the %d eval jobs (%d) fit on no device and are rejected under every policy, more than %.0f%%: "+
		"%s need more memory than any device holds (the largest, %s, holds %v MiB: schedule.cluster[%d].memory_mib)",
		100*float64(b.UnfitJobs)/float64(b.Jobs), b.Jobs, b.UnfitJobs, 100*RejectedWarnShare,
		strings.Join(parts, ", "), cl.devices[largest].Name, cl.devices[largest].Memory, largest), nil
}

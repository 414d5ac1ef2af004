package schedule

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/lib/servicetime"
	"github.com/mlsched/mlsched/stages/profile"
)

// Bounds computes the lower bounds (bounds.parquet's row) of the jobs in
// in.Jobs on cfg's cluster at cfg.Load, from the profile in in.Samples,
// without simulating: what the evaluate stage's load sweep scales by.
func Bounds(ctx context.Context, cfg Config, in Inputs) (BoundsRow, error) {
	samples, err := parquetio.ReadAll[profile.Sample](in.Samples)
	if err != nil {
		return BoundsRow{}, fmt.Errorf("schedule: read profile samples: %w", err)
	}
	table, err := servicetime.NewTable(samples)
	if err != nil {
		return BoundsRow{}, fmt.Errorf("schedule: %w", err)
	}
	cl, err := newCluster(cfg, table)
	if err != nil {
		return BoundsRow{}, fmt.Errorf("schedule: %w", err)
	}
	return computeBounds(ctx, cl, in.Jobs, cfg.Load, 0)
}

// computeBounds reads the jobs once (the first limit of them, when limit >
// 0), resolving the cluster's curves for every (model, precision) among the
// jobs that fit somewhere, and returns the lower bounds of the package doc.
func computeBounds(ctx context.Context, cl *cluster, jobsPath string, load float64, limit int64) (BoundsRow, error) {
	r, err := openJobs(jobsPath, load, limit)
	if err != nil {
		return BoundsRow{}, err
	}
	defer r.Close()
	var b BoundsRow
	for {
		if r.done%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return BoundsRow{}, err
			}
		}
		j, err := r.next()
		if err != nil {
			return BoundsRow{}, err
		}
		if j == nil {
			break
		}
		b.Jobs++
		if !cl.fits(j) {
			b.UnfitJobs++ // rejected by every policy; no service time
			r.recycle(j)
			continue
		}
		if err := cl.resolve(j); err != nil {
			return BoundsRow{}, err
		}
		wall, profiled, _ := cl.fastest(j)
		b.WorkS += wall
		b.ProfiledWorkS += profiled
		b.ArrivalLBS = max(b.ArrivalLBS, j.Arrival+wall)
		r.recycle(j)
	}
	for d, dev := range cl.devices {
		lanes := cl.effectiveLanes(d)
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

// rows describes the cluster for cluster.parquet.
func (c *cluster) rows() []ClusterRow {
	rows := make([]ClusterRow, len(c.cfg))
	for d, dev := range c.cfg {
		con := c.contention[d]
		rows[d] = ClusterRow{
			Device:             dev.Name,
			Kind:               dev.Kind,
			ProfileDevice:      dev.ProfileDevice,
			Threads:            int32(dev.Threads),
			Lanes:              int32(dev.Lanes),
			MemoryMiB:          dev.MemoryMiB,
			Speed:              dev.Speed,
			ContentionMeasured: con != nil && con.Measured(),
			ContentionFactors:  c.factors[d][1:],
			EffectiveLanes:     c.effectiveLanes(d),
			ContentionNote:     c.contentionNote(d),
		}
	}
	return rows
}

// RejectedWarnShare is the share of the eval workload that, rejected under
// every policy because it fits on no device, the stage warns of: a
// comparison of policies on what is left is not the one asked for.
const RejectedWarnShare = 0.05

// rejectedWarning says, when more than RejectedWarnShare of the jobs fit
// on no device, how many and which: one more pass over the jobs counts
// them by model and precision. It returns "" when the share is lower.
func rejectedWarning(ctx context.Context, cl *cluster, jobsPath string, load float64, b BoundsRow) (string, error) {
	if b.Jobs == 0 || float64(b.UnfitJobs) <= RejectedWarnShare*float64(b.Jobs) {
		return "", nil
	}
	r, err := openJobs(jobsPath, load, 0)
	if err != nil {
		return "", err
	}
	defer r.Close()
	counts := map[int]int64{} // by pair
	for {
		if r.done%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return "", err
			}
		}
		j, err := r.next()
		if err != nil {
			return "", err
		}
		if j == nil {
			break
		}
		if !cl.fits(j) {
			counts[pairOf(j.Model, j.Precision)]++
		}
		r.recycle(j)
	}
	type group struct {
		name string
		n    int64
	}
	var groups []group
	for pr, n := range counts {
		model, prec := pr/numPrecisions, pr%numPrecisions
		groups = append(groups, group{modelNames[model] + " " + precisionNames[prec], n})
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

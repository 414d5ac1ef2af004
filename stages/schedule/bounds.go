package schedule

import (
	"context"
	"fmt"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/profile"
	"github.com/mlsched/mlsched/stages/schedule/service"
)

// Bounds computes the lower bounds (bounds.parquet's row) of the jobs in
// in.Jobs on cfg's cluster at cfg.Load, from the profile in in.Samples,
// without simulating: what the evaluate stage's load sweep scales by.
func Bounds(ctx context.Context, cfg Config, in Inputs) (BoundsRow, error) {
	samples, err := parquetio.ReadAll[profile.Sample](in.Samples)
	if err != nil {
		return BoundsRow{}, fmt.Errorf("schedule: read profile samples: %w", err)
	}
	table, err := service.NewTable(samples)
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

package cluster

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/mlsched/mlsched/stages/lib/sim"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// Scan is what one pass over a workload learns for its bounds
// (bounds.parquet's row; see the schedule stage's package doc) at any load:
// the sums over its jobs, which no load changes, and the jobs that could
// end last at some load. Reading the jobs once for both the cluster's
// capacity (at load 1) and the bounds at the load that capacity sets
// halves the passes before a simulation.
type Scan struct {
	name               string // the jobs file's base name, for errors
	jobs, unfit        int64
	lastArrival        float64 // the last job's arrival in the file (load 1)
	work, profiledWork float64
	effLanes, speedCap float64
	// frontier holds the fitting jobs that no later job dominates, in
	// arrival order: a later job (arriving no sooner) with a fastest time
	// at least as long ends no sooner at every load, in floating point too
	// (division by the load and addition round monotonically). Their
	// fastest times strictly decrease along it, so it holds at most one
	// job per distinct fastest time: a few hundred (model, precision,
	// batch) configurations, whatever the workload's length.
	frontier []arrivalEnd
}

// arrivalEnd is a job's arrival in the file and its fastest time alone.
type arrivalEnd struct{ arrival, wall float64 }

// Scan reads the jobs of jobsPath once (the first limit of them, when
// limit > 0), resolving the cluster's curves for every (model, precision)
// among the jobs that fit somewhere, and returns what their bounds at any
// load need.
func (cl *Cluster) Scan(ctx context.Context, jobsPath string, limit int64) (*Scan, error) {
	r, err := cl.OpenJobs(jobsPath, 1, limit)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	sc := &Scan{name: r.name}
	var configs configMemo
	for {
		if r.done%CheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		i, ok, err := r.advance()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		sc.jobs++
		arrival := r.arrivalAt(i)
		sc.lastArrival = arrival // the jobs come in arrival order
		c, err := configs.of(cl, r, i)
		if err != nil {
			return nil, err
		}
		if !c.fits {
			sc.unfit++ // rejected by every policy; no service time
			continue
		}
		wall, profiled := c.wall, c.profiled
		sc.work += wall
		sc.profiledWork += profiled
		// j arrives no sooner than any job on the frontier: it
		// dominates those whose fastest time is no longer than its own.
		// (A NaN time dominates nothing and is never dominated, so that
		// it reaches ArrivalLBS as it would summed job by job.)
		f := sc.frontier
		for len(f) > 0 && f[len(f)-1].wall <= wall {
			f = f[:len(f)-1]
		}
		sc.frontier = append(f, arrivalEnd{arrival, wall})
	}
	for d, dev := range cl.devices {
		lanes := cl.EffectiveLanes(d)
		sc.effLanes += lanes
		sc.speedCap += dev.Speed * lanes
	}
	return sc, nil
}

// configMemo keeps what a pass learned of each (model, precision, batch)
// configuration the first time a job of it came: whether it fits some
// device and its fastest times, which depend on nothing else. The first
// job of each configuration is the one Resolve sees, as it would see every
// job, so that a missing curve is reported with the first job that needs
// it.
type configMemo [][]config // by pair, then batch (below maxCachedBatch)

type config struct {
	seen, fits     bool
	wall, profiled float64 // cl.fastest's
}

// of returns the configuration of row i of r's current chunk, resolving
// it if it is new.
func (m *configMemo) of(cl *Cluster, r *JobReader, i int) (*config, error) {
	pr, b := pairOf(r.modelCodes[i], r.precisions[i]), int(r.batches[i])
	if pr < len(*m) && b < len((*m)[pr]) {
		if c := &(*m)[pr][b]; c.seen {
			return c, nil
		}
	}
	return m.resolve(cl, r, i, pr, b)
}

// resolve is of for a configuration not seen before.
func (m *configMemo) resolve(cl *Cluster, r *JobReader, i, pr, b int) (*config, error) {
	if b >= maxCachedBatch {
		c, err := newConfig(cl, r, i)
		if err != nil {
			return nil, err
		}
		return &c, nil
	}
	if *m == nil {
		*m = make([][]config, len(cl.resolved))
	}
	tab := (*m)[pr]
	if b >= len(tab) {
		tab = append(tab, make([]config, b+1-len(tab))...)
		(*m)[pr] = tab
	}
	c, err := newConfig(cl, r, i)
	if err != nil {
		return nil, err
	}
	tab[b] = c
	return &tab[b], nil
}

// newConfig resolves the configuration of row i of r's current chunk on
// cl.
func newConfig(cl *Cluster, r *JobReader, i int) (config, error) {
	j := new(sim.Job)
	r.job(i, j)
	c := config{seen: true, fits: cl.Fits(j)}
	if !c.fits {
		return c, nil
	}
	if err := cl.Resolve(j); err != nil {
		return c, err
	}
	c.wall, c.profiled, _ = cl.fastest(j)
	return c, nil
}

// Bounds returns the scanned jobs' lower bounds with their arrival times
// divided by load: the same row, to the bit, as a pass that read them at
// that load.
func (sc *Scan) Bounds(load float64) schedulespec.BoundsRow {
	b := schedulespec.BoundsRow{Replication: 1, Load: load, Jobs: sc.jobs, UnfitJobs: sc.unfit,
		WorkS: sc.work, ProfiledWorkS: sc.profiledWork, EffectiveLanes: sc.effLanes, SpeedCapacity: sc.speedCap}
	if sc.jobs > 0 {
		b.LastArrivalS = sc.lastArrival / load
	}
	for _, f := range sc.frontier {
		b.ArrivalLBS = max(b.ArrivalLBS, f.arrival/load+f.wall)
	}
	b.WorkLBS = max(b.WorkS/b.EffectiveLanes, b.ProfiledWorkS/b.SpeedCapacity)
	b.MakespanLBS = max(b.WorkLBS, b.ArrivalLBS)
	if ran := b.Jobs - b.UnfitJobs; ran > 0 {
		b.MeanLatencyLBS = b.WorkS / float64(ran)
	}
	return b
}

// Capacity returns the schedule load that offers the scanned jobs at the
// cluster's full capacity as the sweep defines it: the span of their
// arrivals over their work's lower bound at load 1 (ArrivalLBS /
// WorkLBS), so that u times it offers them at fraction u of capacity.
func (sc *Scan) Capacity() (perUnit float64, err error) {
	b := sc.Bounds(1)
	if !(b.WorkLBS > 0) {
		return 0, errors.New("the eval jobs hold no work that fits the cluster")
	}
	return b.ArrivalLBS / b.WorkLBS, nil
}

// Bounds reads the jobs of jobsPath once (the first limit of them, when
// limit > 0), their arrival times divided by load, resolving the cluster's
// curves for every (model, precision) among the jobs that fit somewhere,
// and returns their lower bounds (Scan's Bounds at load).
func (cl *Cluster) Bounds(ctx context.Context, jobsPath string, load float64, limit int64) (schedulespec.BoundsRow, error) {
	sc, err := cl.Scan(ctx, jobsPath, limit)
	if err != nil {
		return schedulespec.BoundsRow{}, err
	}
	return sc.Bounds(load), nil
}

// Capacity reads the jobs of jobsPath (the first limit of them, when
// limit > 0) and returns Scan's Capacity and the bounds at load 1. Like
// Bounds it resolves the curves of the jobs it reads.
func (cl *Cluster) Capacity(ctx context.Context, jobsPath string, limit int64) (perUnit float64, b schedulespec.BoundsRow, err error) {
	sc, err := cl.Scan(ctx, jobsPath, limit)
	if err != nil {
		return 0, b, err
	}
	perUnit, err = sc.Capacity()
	return perUnit, sc.Bounds(1), err
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

package schedule

import (
	"fmt"

	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/servicetime"
	"github.com/mlsched/mlsched/stages/lib/sim"
)

// maxCachedBatch bounds the batch sizes whose predicted time the cluster
// keeps in a table; larger batches ask the curve each time.
const maxCachedBatch = 1 << 16

// memToken is one (model, precision)'s admission model: a batch of b holds
// base + b·perSample MiB.
type memToken struct{ base, perSample float64 }

// cluster is the virtual cluster as the simulator sees it, and its
// sim.Service: each device's profile curves, its contention, and the
// memory model. Model and precision are the reader's indexes (catalog
// order; precFP32, precFP16), combined into one pair index.
//
// Curves are resolved by need, for the (model, precision) pairs the
// workload holds, before any simulation starts; from then on the cluster is
// read-only and shared by the concurrent simulations.
type cluster struct {
	cfg     []Device
	devices []sim.Device
	table   *servicetime.Table
	// contention is nil for a declared device, whose contention is unknown.
	contention []*servicetime.Contention
	// factors[d][k] is device d's contention factor with k lanes busy,
	// k = 0..lanes.
	factors [][]float64
	// curves[d][pair] is nil until resolve; means[d][pair][b] caches
	// Mean(b) for the batch sizes the workload holds.
	curves [][]*servicetime.Curve
	means  [][][]float64
	memory []memToken
	// resolved[pair] says whether every device's curve of pair is fetched.
	resolved []bool
	// learned, if not nil, is the train stage's predictor, tabulated up to
	// maxBatch samples and each job's batch.
	learned  *learned
	maxBatch int
	// placement is the train stage's placement network (ONNX), which the
	// learned policy serves; decisionCost a batch of n decisions' time on
	// the simulated clock. Both nil without a learned policy.
	placement    []byte
	decisionCost func(n int) float64
	profileCost  func(n int) float64 // the profiled mlp's, once asked for
}

var _ sim.Service = (*cluster)(nil)

func pairOf(model, precision int32) int { return int(model)*numPrecisions + int(precision) }

// newCluster builds the cluster of cfg on the profile's table. It fails if a
// measured device's profile device has no rows or unusable contention rows.
func newCluster(cfg Config, table *servicetime.Table) (*cluster, error) {
	pairs := len(modelNames) * numPrecisions
	c := &cluster{cfg: cfg.Cluster, table: table, resolved: make([]bool, pairs), maxBatch: cfg.Batching.MaxBatch}
	for i, d := range cfg.Cluster {
		c.devices = append(c.devices, sim.Device{Name: d.Name, Lanes: d.Lanes, Memory: d.MemoryMiB, Speed: d.Speed})
		factors := make([]float64, d.Lanes+1)
		var con *servicetime.Contention
		if d.Kind == KindMeasured {
			var err error
			if con, err = table.Contention(d.ProfileDevice); err != nil {
				return nil, fmt.Errorf("cluster[%d] (%s): %w", i, d.Name, err)
			}
		}
		for k := range factors {
			factors[k] = 1
			if con != nil {
				factors[k] = con.Factor(k)
			}
		}
		c.contention = append(c.contention, con)
		c.factors = append(c.factors, factors)
		c.curves = append(c.curves, make([]*servicetime.Curve, pairs))
		c.means = append(c.means, make([][]float64, pairs))
	}
	for mi, m := range catalog.All() {
		for p := range numPrecisions {
			base, per := cfg.Memory.Token(m, p == precFP16)
			c.memory = append(c.memory, memToken{})
			c.memory[pairOf(int32(mi), int32(p))] = memToken{base, per}
		}
	}
	return c, nil
}

// resolve fetches every device's curve for job j's model and precision, if
// not done yet, and widens the predicted-time tables to j's batch size.
func (c *cluster) resolve(j *sim.Job) error {
	pr := pairOf(j.Model, j.Precision)
	if !c.resolved[pr] {
		for d, dev := range c.cfg {
			curve, err := c.table.Curve(dev.ProfileDevice, modelNames[j.Model], precisionNames[j.Precision], dev.Threads)
			if err != nil {
				return fmt.Errorf("cluster[%d] (%s, %s) runs %s %s jobs (job %d is the first) on profile device %s at %d threads, which the profile did not measure: %w",
					d, dev.Name, dev.Kind, modelNames[j.Model], precisionNames[j.Precision], j.ID, dev.ProfileDevice, dev.Threads, err)
			}
			c.curves[d][pr] = curve
		}
		c.resolved[pr] = true
	}
	if b := int(j.Batch); b < maxCachedBatch {
		for d := range c.cfg {
			tab := c.means[d][pr]
			if b < len(tab) {
				break // every device's table has the same length
			}
			for n := len(tab); n <= b; n++ {
				tab = append(tab, c.curves[d][pr].Mean(n))
			}
			c.means[d][pr] = tab
		}
	}
	if c.learned != nil {
		return c.learned.resolve(j, max(int(j.Batch), c.maxBatch))
	}
	return nil
}

// predictor is what the policies of a simulation predict with
// (sim.Config.Predictor): nil, the cluster's own means, for
// PredictorTable; the tabulated learned predictor for PredictorLearned.
func (c *cluster) predictor(name string) (sim.Predictor, error) {
	switch name {
	case PredictorTable:
		return nil, nil
	case PredictorLearned:
		if c.learned == nil {
			return nil, fmt.Errorf("no learned predictor was loaded (the train stage's %s)", "predictor.json")
		}
		return c.learned, nil
	}
	return nil, fmt.Errorf("unknown predictor %q", name)
}

// Time implements sim.Service: the u-quantile of the batch's latency on
// device d's profile curve.
func (c *cluster) Time(d int, model, precision, batch int32, u float64) float64 {
	return c.curves[d][pairOf(model, precision)].Quantile(int(batch), u)
}

// Predict implements sim.Service: the curve's mean.
func (c *cluster) Predict(d int, model, precision, batch int32) float64 {
	pr := pairOf(model, precision)
	if tab := c.means[d][pr]; batch >= 0 && int(batch) < len(tab) {
		return tab[batch]
	}
	return c.curves[d][pr].Mean(int(batch))
}

// Memory implements sim.Service: the token model, in MiB.
func (c *cluster) Memory(model, precision, batch int32) float64 {
	t := c.memory[pairOf(model, precision)]
	return t.base + float64(batch)*t.perSample
}

// Contention implements sim.Service.
func (c *cluster) Contention(d, k int) float64 {
	if f := c.factors[d]; k >= 0 && k < len(f) {
		return f[k]
	}
	if con := c.contention[d]; con != nil {
		return con.Factor(k)
	}
	return 1
}

// fits reports whether j fits on some device; the simulator rejects it
// otherwise.
func (c *cluster) fits(j *sim.Job) bool {
	need := c.Memory(j.Model, j.Precision, j.Batch)
	for _, dev := range c.devices {
		if need <= dev.Memory {
			return true
		}
	}
	return false
}

// fastest returns the predicted time of j alone on the fastest device that
// can hold it, in seconds of wall-clock time (mean over speed) and in
// seconds of its profile device (the mean itself, minimized separately);
// ok is false when j fits on no device.
func (c *cluster) fastest(j *sim.Job) (wall, profiled float64, ok bool) {
	need := c.Memory(j.Model, j.Precision, j.Batch)
	for d, dev := range c.devices {
		if need > dev.Memory {
			continue
		}
		m := c.Predict(d, j.Model, j.Precision, j.Batch)
		if w := m / dev.Speed; !ok || w < wall {
			wall = w
		}
		if !ok || m < profiled {
			profiled = m
		}
		ok = true
	}
	return wall, profiled, ok
}

// effectiveLanes is device d's throughput in lanes running alone:
// max over k <= lanes of k/factor(k), since k busy lanes each progress at
// 1/factor(k) of a lone lane's rate.
func (c *cluster) effectiveLanes(d int) float64 {
	best := 0.0
	for k := 1; k < len(c.factors[d]); k++ {
		best = max(best, float64(k)/c.factors[d][k])
	}
	return best
}

// contentionNote says where device d's contention factors come from.
func (c *cluster) contentionNote(d int) string {
	if c.cfg[d].Kind == KindDeclared {
		return "declared device: contention unknown, factor 1"
	}
	con := c.contention[d]
	if !con.Measured() {
		return con.String() + " (the profile ran no concurrent sessions there)"
	}
	return con.String()
}

package cluster

import (
	"fmt"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"

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

// Cluster is the virtual cluster as the simulator sees it, and its
// sim.Service: each device's profile curves, its contention, and the
// memory model. Model and precision are the reader's indexes (catalog
// order; precFP32, precFP16), combined into one pair index.
//
// Curves are resolved by need, for the (model, precision) pairs the
// workload holds, before any simulation starts; from then on the cluster is
// read-only and shared by the concurrent simulations.
type Cluster struct {
	// sched is the schedule section the cluster was built from: its
	// options' settings configure every simulation (Build).
	sched schedulespec.Config
	// cat is the profile's catalog: the models, indexed by sim.Job.Model,
	// and names their names.
	cat     *catalog.Catalog
	names   []string
	cfg     []schedulespec.Device
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
	// serving is how the learned policy's decisions are served; its
	// NewMigrator is nil without a learned policy.
	serving     Serving
	profileCost *Charge // schedule.learned.cost: profile's, once asked for
}

var _ sim.Service = (*Cluster)(nil)

func pairOf(model, precision int32) int { return int(model)*numPrecisions + int(precision) }

// Open reads the profile's samples.parquet at samplesPath and builds the
// cluster of cfg on it and the profile's catalog (New).
func Open(cfg schedulespec.Config, cat *catalog.Catalog, samplesPath string) (*Cluster, error) {
	samples, err := parquetio.ReadAll[profilespec.Sample](samplesPath)
	if err != nil {
		return nil, fmt.Errorf("read profile samples: %w", err)
	}
	table, err := servicetime.NewTable(samples)
	if err != nil {
		return nil, err
	}
	return New(cfg, cat, table)
}

// New builds the cluster of cfg on the profile's table and catalog, whose
// figures give each model's memory. It fails if a measured device's
// profile device has no rows or unusable contention rows.
func New(cfg schedulespec.Config, cat *catalog.Catalog, table *servicetime.Table) (*Cluster, error) {
	pairs := cat.Len() * numPrecisions
	c := &Cluster{sched: cfg, cat: cat, names: cat.Names(), cfg: cfg.Cluster, table: table, resolved: make([]bool, pairs), maxBatch: cfg.Batching.MaxBatch}
	for i, d := range cfg.Cluster {
		c.devices = append(c.devices, sim.Device{Name: d.Name, Lanes: d.Lanes, Memory: d.MemoryMiB, Speed: d.Speed})
		factors := make([]float64, d.Lanes+1)
		var con *servicetime.Contention
		if d.Kind == schedulespec.KindMeasured {
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
	for mi, m := range cat.All() {
		for p := range numPrecisions {
			base, per := cfg.Memory.Token(m, p == precFP16)
			c.memory = append(c.memory, memToken{})
			c.memory[pairOf(int32(mi), int32(p))] = memToken{base, per}
		}
	}
	return c, nil
}

// Catalog returns the catalog the cluster numbers its models by.
func (c *Cluster) Catalog() *catalog.Catalog { return c.cat }

// ModelName is the catalog name of a sim.Job.Model index.
func (c *Cluster) ModelName(model int32) string { return c.names[model] }

// OpenJobs opens a jobs file whose models are numbered as the cluster's
// (package-level OpenJobs with the cluster's catalog).
func (c *Cluster) OpenJobs(path string, load float64, limit int64) (*JobReader, error) {
	return OpenJobs(path, c.cat, load, limit)
}

// Resolve fetches every device's curve for job j's model and precision, if
// not done yet, and widens the predicted-time tables to j's batch size.
// Every job a simulation will see must be resolved before any simulation
// starts (Bounds does it): from then on the cluster is read-only.
func (c *Cluster) Resolve(j *sim.Job) error {
	pr := pairOf(j.Model, j.Precision)
	if !c.resolved[pr] {
		for d, dev := range c.cfg {
			curve, err := c.table.Curve(dev.ProfileDevice, c.ModelName(j.Model), precisionNames[j.Precision], dev.Threads)
			if err != nil {
				return fmt.Errorf("cluster[%d] (%s, %s) runs %s %s jobs (job %d is the first) on profile device %s at %d threads, which the profile did not measure: %w",
					d, dev.Name, dev.Kind, c.ModelName(j.Model), precisionNames[j.Precision], j.ID, dev.ProfileDevice, dev.Threads, err)
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

// Predictor is what the policies of a simulation predict with
// (sim.Config.Predictor) for a value of schedule.predictor: nil, the
// cluster's own means, for schedulespec.PredictorTable; the tabulated
// learned predictor (UsePredictor) for schedulespec.PredictorLearned.
func (c *Cluster) Predictor(name string) (sim.Predictor, error) {
	switch name {
	case schedulespec.PredictorTable:
		return nil, nil
	case schedulespec.PredictorLearned:
		if c.learned == nil {
			return nil, fmt.Errorf("no learned predictor was loaded (the train stage's %s)", "predictor.json")
		}
		return c.learned, nil
	}
	return nil, fmt.Errorf("unknown predictor %q", name)
}

// Time implements sim.Service: the u-quantile of the batch's latency on
// device d's profile curve.
func (c *Cluster) Time(d int, model, precision, batch int32, u float64) float64 {
	return c.curves[d][pairOf(model, precision)].Quantile(int(batch), u)
}

// Predict implements sim.Service: the curve's mean.
func (c *Cluster) Predict(d int, model, precision, batch int32) float64 {
	pr := pairOf(model, precision)
	if tab := c.means[d][pr]; batch >= 0 && int(batch) < len(tab) {
		return tab[batch]
	}
	return c.curves[d][pr].Mean(int(batch))
}

// Memory implements sim.Service: the token model, in MiB.
func (c *Cluster) Memory(model, precision, batch int32) float64 {
	t := c.memory[pairOf(model, precision)]
	return t.base + float64(batch)*t.perSample
}

// Contention implements sim.Service.
func (c *Cluster) Contention(d, k int) float64 {
	if f := c.factors[d]; k >= 0 && k < len(f) {
		return f[k]
	}
	if con := c.contention[d]; con != nil {
		return con.Factor(k)
	}
	return 1
}

// Fits reports whether j fits on some device; the simulator rejects it
// otherwise.
func (c *Cluster) Fits(j *sim.Job) bool {
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
func (c *Cluster) fastest(j *sim.Job) (wall, profiled float64, ok bool) {
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

// EffectiveLanes is device d's throughput in lanes running alone:
// max over k <= lanes of k/factor(k), since k busy lanes each progress at
// 1/factor(k) of a lone lane's rate.
func (c *Cluster) EffectiveLanes(d int) float64 {
	best := 0.0
	for k := 1; k < len(c.factors[d]); k++ {
		best = max(best, float64(k)/c.factors[d][k])
	}
	return best
}

// contentionNote says where device d's contention factors come from.
func (c *Cluster) contentionNote(d int) string {
	if c.cfg[d].Kind == schedulespec.KindDeclared {
		return "declared device: contention unknown, factor 1"
	}
	con := c.contention[d]
	if !con.Measured() {
		return con.String() + " (the profile ran no concurrent sessions there)"
	}
	return con.String()
}

// Devices are the simulator's devices, in schedule.cluster's order.
func (c *Cluster) Devices() []sim.Device { return c.devices }

// Device is schedule.cluster[d] as configured.
func (c *Cluster) Device(d int) *schedulespec.Device { return &c.cfg[d] }

// Table is the profile's service-time table the cluster draws from.
func (c *Cluster) Table() *servicetime.Table { return c.table }

// HasLearnedPredictor says whether train's predictor is loaded
// (UsePredictor): schedulespec.PredictorLearned can be asked for.
func (c *Cluster) HasLearnedPredictor() bool { return c.learned != nil }

// Serves says whether the learned policy's decisions are served (Serve):
// a learned policy can be simulated.
func (c *Cluster) Serves() bool { return c.serving.NewMigrator != nil }

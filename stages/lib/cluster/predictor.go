package cluster

import (
	"fmt"
	"os"

	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/predictor"
	"github.com/mlsched/mlsched/stages/lib/sim"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// learned is the train stage's service-time predictor as the simulations
// ask it (sim.Predictor): tabulated once per device, model, precision and
// batch size the workload can run, before any simulation starts, so that
// a prediction costs a table lookup. Like the cluster's curves it is
// filled while the jobs are first read (Cluster.Resolve) and read-only
// from then on, shared by the concurrent simulations.
type learned struct {
	model *predictor.Model
	names []string // the catalog's, indexed by sim.Job.Model
	devs  []schedulespec.Device
	// tab[d][pair][b] is the prediction for a batch of b on cluster
	// device d's profile device and threads, before the device's speed.
	tab [][][]float64
}

var _ sim.Predictor = (*learned)(nil)

// LoadPredictor reads a predictor file written by the train stage and
// makes it the cluster's learned predictor (UsePredictor).
func (c *Cluster) LoadPredictor(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("learned predictor: %w", err)
	}
	defer f.Close()
	m, err := predictor.Load(f)
	if err != nil {
		return fmt.Errorf("learned predictor %s: %w", path, err)
	}
	c.UsePredictor(m)
	return nil
}

// UsePredictor makes m the predictions of schedulespec.PredictorLearned
// (Predictor). Call it before the jobs are resolved: the tables fill then.
func (c *Cluster) UsePredictor(m *predictor.Model) { c.learned = newLearned(m, c.cat, c.cfg) }

// newLearned is m for the cluster devs, its tables empty until resolve.
func newLearned(m *predictor.Model, cat *catalog.Catalog, devs []schedulespec.Device) *learned {
	l := &learned{model: m, names: cat.Names(), devs: devs, tab: make([][][]float64, len(devs))}
	pairs := cat.Len() * numPrecisions
	for d := range l.tab {
		l.tab[d] = make([][]float64, pairs)
	}
	return l
}

// query is the predictor's question for a batch on cluster device dev.
func (l *learned) query(dev schedulespec.Device, model, precision int32, batch int) predictor.Query {
	return predictor.Query{Device: dev.ProfileDevice, Model: l.names[model], Precision: precisionNames[precision],
		Batch: batch, Threads: dev.Threads}
}

// resolve widens the tables of j's model and precision to batch sizes up
// to upTo on every device. A configuration the predictor cannot predict
// (a device it never saw) is an error naming it.
func (l *learned) resolve(j *sim.Job, upTo int) error {
	pr := pairOf(j.Model, j.Precision)
	for d, dev := range l.devs {
		tab := l.tab[d][pr]
		for b := len(tab); b <= upTo; b++ {
			v := 0.0 // batch 0 never runs
			if b > 0 {
				var ok bool
				if v, ok = l.model.Predict(l.query(dev, j.Model, j.Precision, b)); !ok {
					return fmt.Errorf("cluster[%d] (%s): the learned predictor (%s) has no prediction for %s %s at batch %d on profile device %s at %d threads (set schedule.predictor: %s to predict from the profile)",
						d, dev.Name, l.model.Kind(), l.names[j.Model], precisionNames[j.Precision], b, dev.ProfileDevice, dev.Threads, schedulespec.PredictorTable)
				}
			}
			tab = append(tab, v)
		}
		l.tab[d][pr] = tab
	}
	return nil
}

// Predict implements sim.Predictor: the tabulated prediction. A batch
// beyond the table (none that the workload and the batching settings can
// form) asks the model, which resolve found able to answer for the
// device, model and precision.
func (l *learned) Predict(d int, model, precision, batch int32) float64 {
	if tab := l.tab[d][pairOf(model, precision)]; batch >= 0 && int(batch) < len(tab) {
		return tab[batch]
	}
	v, _ := l.model.Predict(l.query(l.devs[d], model, precision, int(batch)))
	return v
}

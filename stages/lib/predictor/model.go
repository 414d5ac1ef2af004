package predictor

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/servicetime"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
	"github.com/mlsched/mlsched/stages/spec/trainspec"
)

// Format names the model file's layout; Load refuses any other. Version 2
// holds the catalog the features were computed from.
const Format = "mlsched-predictor/2"

// The candidate kinds, the values of train.predictor.kind (trainspec's).
// KindAuto is not a kind of model: it asks Train for the candidate with
// the lowest grouped k-fold MAPE.
const (
	KindAuto      = trainspec.KindAuto
	KindTable     = trainspec.KindTable
	KindCART      = trainspec.KindCART
	KindForest    = trainspec.KindForest
	KindLogLinear = trainspec.KindLogLinear
	KindBoost     = trainspec.KindBoost
	KindAffine    = trainspec.KindAffine
)

// Kinds are the candidates in the order they are trained, scored and
// listed: the table baseline first.
var Kinds = []string{KindTable, KindCART, KindForest, KindLogLinear, KindBoost, KindAffine}

// The targets a model file's target field names: ln seconds for the
// learned kinds, seconds for the table.
const (
	TargetLog   = "ln(latency_s)"
	TargetTable = "latency_s"
)

// Model is a trained service-time predictor of one kind. It is immutable
// once trained or loaded, so one Model can serve concurrent callers.
//
// Every kind but the table predicts the natural log of the latency in
// seconds from the feature vector x (Features) as
//
//	intercept + coefficients·x + tree_weight × Σ_t tree_t(x)
//
// and returns its exponential: loglinear has no trees, cart one tree of
// weight 1, forest its trees' mean (weight 1/T), boost the loglinear fit
// plus its trees' shrunken corrections. affine predicts the latency of a
// query whose series (device, model, precision, threads) it has fitted as
// fixed + per_sample × batch, seconds, and any other as loglinear does. The
// table returns the measured mean latency of the query's configuration,
// interpolated in batch size.
type Model struct {
	f File
	// cat is f.Models as a catalog, for the features.
	cat *catalog.Catalog
	// table is f.Table built into the simulator's service table.
	table *servicetime.Table
}

// modelFile is a Model as its JSON file holds it.
type File struct {
	Format   string    `json:"format"`
	Kind     string    `json:"kind"`
	Target   string    `json:"target"`
	Features []Feature `json:"features"`
	// Devices lists the devices seen in training, sorted; a query for
	// any other has no prediction.
	Devices []string `json:"devices"`
	// Models are the catalog's models, whose figures the features are
	// computed from (the profile's models.parquet, when trained): a query
	// for any other has no prediction.
	Models []catalog.Model `json:"models"`
	// Linear is loglinear's fit and boost's base.
	Linear *Linear `json:"linear,omitempty"`
	// TreeWeight multiplies the sum of the trees' outputs.
	TreeWeight float64 `json:"tree_weight,omitempty"`
	Trees      []Tree  `json:"trees,omitempty"`
	// Table is the table kind's measured latencies.
	Table []TableGroup `json:"table,omitempty"`
	// Series are the affine kind's fits, sorted by series.
	Series []Series `json:"series,omitempty"`
}

// series is the affine kind's fit of one device, model, precision and
// thread count: a batch of b takes Fixed + PerSample × b seconds.
type Series struct {
	Device    string  `json:"device"`
	Model     string  `json:"model"`
	Precision string  `json:"precision"`
	Threads   int32   `json:"threads"`
	Fixed     float64 `json:"fixed_s"`
	PerSample float64 `json:"per_sample_s"`
}

func CompareSeries(a, b Series) int {
	return cmp.Or(cmp.Compare(a.Device, b.Device), cmp.Compare(a.Model, b.Model),
		cmp.Compare(a.Precision, b.Precision), cmp.Compare(a.Threads, b.Threads))
}

// seriesOf returns the affine fit of q's series, if the model has one.
func (f *File) seriesOf(q Query) (*Series, bool) {
	key := Series{Device: q.Device, Model: q.Model, Precision: q.Precision, Threads: int32(q.Threads)}
	i, ok := slices.BinarySearchFunc(f.Series, key, CompareSeries)
	if !ok {
		return nil, false
	}
	return &f.Series[i], true
}

// linear is a linear function of the feature vector.
type Linear struct {
	Intercept    float64   `json:"intercept"`
	Coefficients []float64 `json:"coefficients"`
}

func (l *Linear) At(x []float64) float64 {
	v := l.Intercept
	for i, c := range l.Coefficients {
		v += c * x[i]
	}
	return v
}

// tree is a regression tree as parallel arrays, node 0 the root. A node
// with Feature -1 is a leaf returning Value; any other goes to Left when
// x[Feature] < Threshold (golearn's rule) and to Right otherwise. Children
// always come after their parent, so a walk cannot loop.
type Tree struct {
	Feature   []int32   `json:"feature"`
	Threshold []float64 `json:"threshold"`
	Left      []int32   `json:"left"`
	Right     []int32   `json:"right"`
	Value     []float64 `json:"value"`
}

func (t *Tree) At(x []float64) float64 {
	i := int32(0)
	for {
		f := t.Feature[i]
		if f < 0 {
			return t.Value[i]
		}
		if x[f] < t.Threshold[i] {
			i = t.Left[i]
		} else {
			i = t.Right[i]
		}
	}
}

// tableGroup is the measured latencies of one configuration from one
// origin: what servicetime.NewTable needs to rebuild the same curves.
type TableGroup struct {
	Device    string    `json:"device"`
	Model     string    `json:"model"`
	Precision string    `json:"precision"`
	Batch     int32     `json:"batch"`
	Threads   int32     `json:"threads"`
	Source    string    `json:"source"`
	Backend   string    `json:"backend"`
	Provider  string    `json:"provider"`
	Latencies []float64 `json:"latencies_s"`
}

// Kind returns the model's candidate kind, e.g. "forest".
func (m *Model) Kind() string { return m.f.Kind }

// Features returns the feature list, names and encodings, in vector order.
func (m *Model) Features() []Feature { return slices.Clone(m.f.Features) }

// File returns a copy of the model's file: what Save writes, for a reader
// that needs its parameters (the train stage's tests and importances).
func (m *Model) File() File {
	f := m.f
	f.Features = slices.Clone(f.Features)
	f.Devices = slices.Clone(f.Devices)
	f.Models = m.cat.All()
	if f.Linear != nil {
		l := *f.Linear
		l.Coefficients = slices.Clone(l.Coefficients)
		f.Linear = &l
	}
	f.Trees = slices.Clone(f.Trees)
	for i, t := range f.Trees {
		f.Trees[i] = Tree{Feature: slices.Clone(t.Feature), Threshold: slices.Clone(t.Threshold),
			Left: slices.Clone(t.Left), Right: slices.Clone(t.Right), Value: slices.Clone(t.Value)}
	}
	f.Table = slices.Clone(f.Table)
	for i := range f.Table {
		f.Table[i].Latencies = slices.Clone(f.Table[i].Latencies)
	}
	f.Series = slices.Clone(f.Series)
	return f
}

// Devices returns the devices the model was trained on, sorted.
func (m *Model) Devices() []string { return slices.Clone(m.f.Devices) }

// Catalog returns the models whose figures the features are computed
// from.
func (m *Model) Catalog() *catalog.Catalog { return m.cat }

// Predict returns the predicted service time in seconds of q, and false
// where the model has no prediction: a device it was not trained on, a
// model the catalog lacks, an unknown precision, a batch or thread count
// below 1, or, for the table, a configuration it has no curve for.
func (m *Model) Predict(q Query) (seconds float64, ok bool) {
	if m.f.Kind == KindTable {
		return m.predictTable(q)
	}
	var buf [32]float64
	x := buf[:0]
	if n := len(m.f.Features); n <= len(buf) {
		x = buf[:n]
	} else {
		x = make([]float64, n)
	}
	if !Featurize(x, q, m.cat, m.f.Devices) {
		return 0, false
	}
	if s, ok := m.f.seriesOf(q); ok {
		return s.Fixed + s.PerSample*float64(q.Batch), true
	}
	return math.Exp(m.LogAt(x)), true
}

func (m *Model) predictTable(q Query) (float64, bool) {
	if q.Batch < 1 || q.Threads < 1 {
		return 0, false
	}
	c, err := m.table.Curve(q.Device, q.Model, q.Precision, q.Threads)
	if err != nil {
		return 0, false
	}
	return c.Mean(q.Batch), true
}

// logAt is the predicted log latency of a feature vector; not for tables.
func (m *Model) LogAt(x []float64) float64 {
	var v float64
	if m.f.Linear != nil {
		v = m.f.Linear.At(x)
	}
	if len(m.f.Trees) > 0 {
		var s float64
		for i := range m.f.Trees {
			s += m.f.Trees[i].At(x)
		}
		v += m.f.TreeWeight * s
	}
	return v
}

// MarshalJSON returns the model file: its format, kind, target, feature
// list, devices and parameters. It fails on a model that Load would
// refuse.
func (m *Model) MarshalJSON() ([]byte, error) {
	if err := m.f.validate(); err != nil {
		return nil, err
	}
	return json.Marshal(m.f)
}

// Save writes the model file to w, indented, with a final newline.
func (m *Model) Save(w io.Writer) error {
	b, err := m.MarshalJSON()
	if err != nil {
		return fmt.Errorf("predictor: save: %w", err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", " "); err != nil {
		return fmt.Errorf("predictor: save: %w", err)
	}
	out.WriteByte('\n')
	if _, err := w.Write(out.Bytes()); err != nil {
		return fmt.Errorf("predictor: save: %w", err)
	}
	return nil
}

// Load reads a model file written by Save and checks it: the format and
// kind known, the feature list the one this package computes for the
// file's devices, every parameter finite, every tree well formed. The
// error names the field at fault.
func Load(r io.Reader) (*Model, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("predictor: load: %w", err)
	}
	m, err := NewModel(f)
	if err != nil {
		return nil, fmt.Errorf("predictor: load: %w", err)
	}
	return m, nil
}

// newModel checks f and builds what predicting needs.
func NewModel(f File) (*Model, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	cat, err := catalog.New(f.Models)
	if err != nil {
		return nil, fmt.Errorf("models: %w", err)
	}
	m := &Model{f: f, cat: cat}
	if f.Kind == KindTable {
		var samples []profilespec.Sample
		for _, g := range f.Table {
			for i, l := range g.Latencies {
				samples = append(samples, profilespec.Sample{
					Kind: profilespec.KindInference, Backend: g.Backend, Provider: g.Provider,
					Device: g.Device, Model: g.Model, Precision: g.Precision,
					Batch: g.Batch, Threads: g.Threads, Concurrency: 1,
					Repeat: int32(i), LatencyS: l, Source: g.Source,
				})
			}
		}
		t, err := servicetime.NewTable(samples)
		if err != nil {
			return nil, fmt.Errorf("table: %w", err)
		}
		m.table = t
	}
	return m, nil
}

// validate reports the first thing wrong with f, naming its field.
func (f *File) validate() error {
	if f.Format != Format {
		return fmt.Errorf("format: want %q, got %q", Format, f.Format)
	}
	if !slices.Contains(Kinds, f.Kind) {
		return fmt.Errorf("kind: unknown kind %q; want one of %v", f.Kind, Kinds)
	}
	wantTarget := TargetLog
	if f.Kind == KindTable {
		wantTarget = TargetTable
	}
	if f.Target != wantTarget {
		return fmt.Errorf("target: kind %s predicts %q, got %q", f.Kind, wantTarget, f.Target)
	}
	if len(f.Devices) == 0 {
		return errors.New("devices: empty")
	}
	if len(f.Models) == 0 {
		return errors.New("models: empty")
	}
	for i, d := range f.Devices {
		if d == "" || i > 0 && d <= f.Devices[i-1] {
			return fmt.Errorf("devices: want distinct non-empty names in sorted order, got %q", f.Devices)
		}
	}
	want := FeatureList(f.Devices)
	if len(f.Features) != len(want) {
		return fmt.Errorf("features: got %d, want %d (%d base features and one per device)", len(f.Features), len(want), len(baseFeatures))
	}
	for i := range want {
		if f.Features[i] != want[i] {
			return fmt.Errorf("features[%d]: got %q (%s), want %q (%s)", i, f.Features[i].Name, f.Features[i].Encoding, want[i].Name, want[i].Encoding)
		}
	}
	needLinear := f.Kind == KindLogLinear || f.Kind == KindBoost || f.Kind == KindAffine
	switch {
	case needLinear && f.Linear == nil:
		return fmt.Errorf("linear: kind %s needs a linear part", f.Kind)
	case !needLinear && f.Linear != nil:
		return fmt.Errorf("linear: kind %s has no linear part", f.Kind)
	}
	if l := f.Linear; l != nil {
		if len(l.Coefficients) != len(want) {
			return fmt.Errorf("linear.coefficients: got %d, want one per feature, %d", len(l.Coefficients), len(want))
		}
		if !finite(l.Intercept) {
			return fmt.Errorf("linear.intercept: not finite: %v", l.Intercept)
		}
		for i, c := range l.Coefficients {
			if !finite(c) {
				return fmt.Errorf("linear.coefficients[%d] (%s): not finite: %v", i, want[i].Name, c)
			}
		}
	}
	switch n := len(f.Trees); {
	case f.Kind == KindCART && n != 1:
		return fmt.Errorf("trees: kind cart has 1 tree, got %d", n)
	case (f.Kind == KindForest || f.Kind == KindBoost) && n == 0:
		return fmt.Errorf("trees: kind %s needs at least one tree", f.Kind)
	case (f.Kind == KindTable || f.Kind == KindLogLinear || f.Kind == KindAffine) && n != 0:
		return fmt.Errorf("trees: kind %s has no trees, got %d", f.Kind, n)
	}
	if len(f.Trees) > 0 && !(finite(f.TreeWeight) && f.TreeWeight > 0) {
		return fmt.Errorf("tree_weight: must be a positive finite number, got %v", f.TreeWeight)
	}
	for i := range f.Trees {
		if err := f.Trees[i].validate(len(want)); err != nil {
			return fmt.Errorf("trees[%d]: %w", i, err)
		}
	}
	if f.Kind == KindTable {
		if len(f.Table) == 0 {
			return errors.New("table: no measured configurations")
		}
		for i, g := range f.Table {
			if len(g.Latencies) == 0 {
				return fmt.Errorf("table[%d] (%s/%s/%s batch %d threads %d): no latencies", i, g.Device, g.Model, g.Precision, g.Batch, g.Threads)
			}
			for j, l := range g.Latencies {
				if !finite(l) || l <= 0 {
					return fmt.Errorf("table[%d].latencies_s[%d]: must be a positive finite number of seconds, got %v", i, j, l)
				}
			}
		}
	} else if len(f.Table) > 0 {
		return fmt.Errorf("table: kind %s has no table", f.Kind)
	}
	if f.Kind != KindAffine && len(f.Series) > 0 {
		return fmt.Errorf("series: kind %s has no series", f.Kind)
	}
	for i := range f.Series {
		s := &f.Series[i]
		if i > 0 && CompareSeries(f.Series[i-1], *s) >= 0 {
			return fmt.Errorf("series[%d] (%s/%s/%s threads %d): want distinct series in sorted order", i, s.Device, s.Model, s.Precision, s.Threads)
		}
		// A batch of 1 and every larger one must take a positive time.
		if !finite(s.Fixed) || !finite(s.PerSample) || s.PerSample < 0 || !(s.Fixed+s.PerSample > 0) {
			return fmt.Errorf("series[%d] (%s/%s/%s threads %d): fixed_s %v and per_sample_s %v: want finite, per_sample_s ≥ 0 and their sum > 0",
				i, s.Device, s.Model, s.Precision, s.Threads, s.Fixed, s.PerSample)
		}
	}
	return nil
}

// validate checks the tree's arrays against each other and nf features.
func (t *Tree) validate(nf int) error {
	n := len(t.Feature)
	if n == 0 {
		return errors.New("no nodes")
	}
	if len(t.Threshold) != n || len(t.Left) != n || len(t.Right) != n || len(t.Value) != n {
		return fmt.Errorf("feature, threshold, left, right and value have %d, %d, %d, %d and %d entries; want the same",
			n, len(t.Threshold), len(t.Left), len(t.Right), len(t.Value))
	}
	for i := range n {
		f := t.Feature[i]
		if f < 0 {
			if f != -1 || !finite(t.Value[i]) {
				return fmt.Errorf("node %d: a leaf has feature -1 and a finite value, got feature %d value %v", i, f, t.Value[i])
			}
			continue
		}
		if int(f) >= nf {
			return fmt.Errorf("node %d: feature %d out of range [0, %d)", i, f, nf)
		}
		if !finite(t.Threshold[i]) {
			return fmt.Errorf("node %d: threshold not finite: %v", i, t.Threshold[i])
		}
		for _, c := range [2]int32{t.Left[i], t.Right[i]} {
			if int(c) <= i || int(c) >= n {
				return fmt.Errorf("node %d: child %d must come after it and before %d", i, c, n)
			}
		}
	}
	return nil
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

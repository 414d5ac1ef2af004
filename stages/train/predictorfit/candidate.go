package predictorfit

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/predictor"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
	"gonum.org/v1/gonum/mat"
)

// trainSet is what a candidate is fitted to: some configurations, their
// feature vectors and log median latencies, and the samples behind them.
type trainSet struct {
	configs []config
	cat     *catalog.Catalog
	// samples holds every inference sample; configs index into it.
	samples []profilespec.Sample
	devices []string
	names   []string
	x       [][]float64
	y       []float64
}

// newTrainSet makes the training set of the configurations cs.
func newTrainSet(cs []config, samples []profilespec.Sample, cat *catalog.Catalog) trainSet {
	ts := trainSet{configs: cs, cat: cat, samples: samples, devices: devicesOf(cs)}
	for _, f := range predictor.FeatureList(ts.devices) {
		ts.names = append(ts.names, f.Name)
	}
	ts.x = make([][]float64, len(cs))
	ts.y = make([]float64, len(cs))
	for i, c := range cs {
		ts.x[i] = make([]float64, len(ts.names))
		// The catalog and precision were checked on reading the samples.
		predictor.Featurize(ts.x[i], c.Query, ts.cat, ts.devices)
		ts.y[i] = math.Log(c.median)
	}
	return ts
}

// header is the start of every model file of the training set.
func (ts *trainSet) header(kind string) File {
	target := TargetLog
	if kind == KindTable {
		target = TargetTable
	}
	return File{Format: Format, Kind: kind, Target: target, Features: predictor.FeatureList(ts.devices), Devices: ts.devices, Models: ts.cat.All()}
}

// fitter fits one kind of candidate. The rng is the candidate's own,
// seeded from Options.Seed, the split and the fold.
type fitter func(ts *trainSet, o *Options, rng *rand.Rand) (File, error)

// fitters is the registry of candidates by kind.
var fitters = map[string]fitter{
	KindTable:     fitTable,
	KindCART:      fitCART,
	KindForest:    fitForest,
	KindLogLinear: fitLogLinear,
	KindBoost:     fitBoost,
	KindAffine:    fitAffine,
}

// fit fits kind to ts and returns the model.
func fit(kind string, ts *trainSet, o *Options, rng *rand.Rand) (*Model, error) {
	f, err := fitters[kind](ts, o, rng)
	if err != nil {
		return nil, fmt.Errorf("fit %s: %w", kind, err)
	}
	m, err := predictor.NewModel(f)
	if err != nil {
		return nil, fmt.Errorf("fit %s: %w", kind, err)
	}
	return m, nil
}

// fitTable keeps the training configurations' samples, grouped by
// configuration and origin, for servicetime.NewTable: the simulator's own
// service model, built from the training data alone.
func fitTable(ts *trainSet, _ *Options, _ *rand.Rand) (File, error) {
	f := ts.header(KindTable)
	for _, c := range ts.configs {
		var groups []TableGroup
		for _, i := range c.samples {
			s := ts.samples[i]
			j := slices.IndexFunc(groups, func(g TableGroup) bool {
				return g.Source == s.Source && g.Backend == s.Backend && g.Provider == s.Provider
			})
			if j < 0 {
				j = len(groups)
				groups = append(groups, TableGroup{Device: s.Device, Model: s.Model, Precision: s.Precision,
					Batch: s.Batch, Threads: s.Threads, Source: s.Source, Backend: s.Backend, Provider: s.Provider})
			}
			groups[j].Latencies = append(groups[j].Latencies, s.LatencyS)
		}
		slices.SortFunc(groups, func(a, b TableGroup) int {
			return cmp.Or(cmp.Compare(a.Source, b.Source), cmp.Compare(a.Backend, b.Backend), cmp.Compare(a.Provider, b.Provider))
		})
		for _, g := range groups {
			slices.Sort(g.Latencies)
		}
		f.Table = append(f.Table, groups...)
	}
	return f, nil
}

// fitCART is golearn's CART regression tree on log latency, grown until
// its leaves are pure.
func fitCART(ts *trainSet, _ *Options, _ *rand.Rand) (File, error) {
	t, err := growTree(ts.x, ts.y, ts.names, -1)
	if err != nil {
		return File{}, err
	}
	f := ts.header(KindCART)
	f.Trees, f.TreeWeight = []Tree{t}, 1
	return f, nil
}

// fitForest bags o.Trees golearn trees, each grown on its own bootstrap
// sample of the configurations, drawn here and copied into a fresh golearn
// table (golearn's own row sampling is unsound; see the package doc).
func fitForest(ts *trainSet, o *Options, rng *rand.Rand) (File, error) {
	f := ts.header(KindForest)
	n := len(ts.x)
	x := make([][]float64, n)
	y := make([]float64, n)
	for range o.Trees {
		for i := range n {
			j := draw(rng, n)
			x[i], y[i] = ts.x[j], ts.y[j]
		}
		t, err := growTree(x, y, ts.names, -1)
		if err != nil {
			return File{}, err
		}
		f.Trees = append(f.Trees, t)
	}
	f.TreeWeight = 1 / float64(o.Trees)
	return f, nil
}

// draw returns a number in [0, n) from rng's raw output, so that a seed
// gives the same draws whatever Go's bounded-integer algorithms become.
// The modulo bias is below n/2⁶⁴.
func draw(rng *rand.Rand, n int) int { return int(rng.Uint64() % uint64(n)) }

// ridge is the ridge penalty of the log-linear fit, on standardized
// features: small, there only to keep the normal equations well posed
// when features are collinear (two models, one device).
const ridge = 1e-3

// fitLogLinear regresses log latency on every feature by ridge least
// squares, solved with gonum. (Grouped k-fold chose every feature over
// smaller physically motivated sets; see the package doc.)
func fitLogLinear(ts *trainSet, _ *Options, _ *rand.Rand) (File, error) {
	l, err := fitLinear(ts.x, ts.y)
	if err != nil {
		return File{}, err
	}
	f := ts.header(KindLogLinear)
	f.Linear = l
	return f, nil
}

// fitLinear solves ridge least squares of y on the columns of x,
// standardized, with an unpenalized intercept, and returns the fit on the
// raw features. A column constant over the rows gets coefficient 0.
func fitLinear(x [][]float64, y []float64) (*Linear, error) {
	n := len(x)
	var use []int
	mean := map[int]float64{}
	scale := map[int]float64{}
	for c := range x[0] {
		var s, ss float64
		for _, row := range x {
			s += row[c]
		}
		mu := s / float64(n)
		for _, row := range x {
			ss += (row[c] - mu) * (row[c] - mu)
		}
		sd := math.Sqrt(ss / float64(n))
		if sd > 1e-12 {
			use = append(use, c)
			mean[c], scale[c] = mu, sd
		}
	}
	var ybar float64
	for _, v := range y {
		ybar += v
	}
	ybar /= float64(n)
	l := &Linear{Intercept: ybar, Coefficients: make([]float64, len(x[0]))}
	p := len(use)
	if p == 0 {
		return l, nil
	}
	z := mat.NewDense(n, p, nil)
	for i, row := range x {
		for j, c := range use {
			z.Set(i, j, (row[c]-mean[c])/scale[c])
		}
	}
	yc := mat.NewVecDense(n, nil)
	for i, v := range y {
		yc.SetVec(i, v-ybar)
	}
	var a mat.SymDense
	a.SymOuterK(1, z.T())
	for j := range p {
		a.SetSym(j, j, a.At(j, j)+ridge*float64(n))
	}
	var b mat.VecDense
	b.MulVec(z.T(), yc)
	var ch mat.Cholesky
	if !ch.Factorize(&a) {
		return nil, fmt.Errorf("log-linear normal equations are not positive definite")
	}
	var beta mat.VecDense
	if err := ch.SolveVecTo(&beta, &b); err != nil {
		return nil, fmt.Errorf("solve log-linear normal equations: %w", err)
	}
	for j, c := range use {
		k := beta.AtVec(j) / scale[c]
		l.Coefficients[c] = k
		l.Intercept -= k * mean[c]
	}
	return l, nil
}

// Boosting settings: shallow golearn trees fitted in turn to what the
// log-linear fit and the trees before them leave unexplained, each added
// at a fraction of its size.
const (
	boostRounds = 100
	boostDepth  = 3
	boostRate   = 0.1
)

// fitBoost is gradient boosting (squared error, on log latency) that
// starts from the log-linear fit: the line carries the model to batch
// sizes and sizes of network it has not seen, and the trees correct it
// where it bends (fixed overheads of tiny models, thread scaling).
func fitBoost(ts *trainSet, _ *Options, _ *rand.Rand) (File, error) {
	l, err := fitLinear(ts.x, ts.y)
	if err != nil {
		return File{}, err
	}
	f := ts.header(KindBoost)
	f.Linear, f.TreeWeight = l, boostRate
	pred := make([]float64, len(ts.x))
	for i, row := range ts.x {
		pred[i] = l.At(row)
	}
	res := make([]float64, len(ts.x))
	for range boostRounds {
		for i := range res {
			res[i] = ts.y[i] - pred[i]
		}
		t, err := growTree(ts.x, res, ts.names, boostDepth)
		if err != nil {
			return File{}, err
		}
		f.Trees = append(f.Trees, t)
		for i, row := range ts.x {
			pred[i] += boostRate * t.At(row)
		}
	}
	return f, nil
}

// fitAffine fits each series (device, model, precision, threads) with at
// least two measured batch sizes as fixed + per_sample × batch by least
// squares on relative error (each configuration weighted by its median's
// inverse square): a batch costs a fixed overhead (launching the graph,
// reading the weights) and a share of work per sample. A series that fits
// a negative per-sample cost or a non-positive batch of 1 is left to the
// fallback, as is every series with fewer points: loglinear, fitted to all
// the configurations, carries the unseen models (it extrapolates to an
// unseen model better than boost does, and costs nothing to fit).
func fitAffine(ts *trainSet, o *Options, rng *rand.Rand) (File, error) {
	f, err := fitLogLinear(ts, o, rng)
	if err != nil {
		return File{}, err
	}
	f.Kind = KindAffine
	idx := make([]int, len(ts.configs))
	for i := range idx {
		idx[i] = i
	}
	key := func(c config) Series {
		return Series{Device: c.Device, Model: c.Model, Precision: c.Precision, Threads: int32(c.Threads)}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return predictor.CompareSeries(key(ts.configs[a]), key(ts.configs[b])) })
	for lo := 0; lo < len(idx); {
		hi := lo + 1
		for hi < len(idx) && predictor.CompareSeries(key(ts.configs[idx[lo]]), key(ts.configs[idx[hi]])) == 0 {
			hi++
		}
		if s, ok := affine(ts.configs, idx[lo:hi]); ok {
			f.Series = append(f.Series, s)
		}
		lo = hi
	}
	return f, nil
}

// affine fits one series' configurations (at least two batch sizes), by
// weighted least squares of median = fixed + per_sample × batch with
// weights 1/median².
func affine(cs []config, idx []int) (Series, bool) {
	c0 := cs[idx[0]]
	s := Series{Device: c0.Device, Model: c0.Model, Precision: c0.Precision, Threads: int32(c0.Threads)}
	if len(idx) < 2 {
		return s, false
	}
	var sw, sb, sy, sbb, sby float64
	for _, i := range idx {
		b, y := float64(cs[i].Batch), cs[i].median
		w := 1 / (y * y)
		sw, sb, sy, sbb, sby = sw+w, sb+w*b, sy+w*y, sbb+w*b*b, sby+w*b*y
	}
	det := sw*sbb - sb*sb
	if !(det > 0) {
		return s, false
	}
	s.PerSample = (sw*sby - sb*sy) / det
	s.Fixed = (sy - s.PerSample*sb) / sw
	ok := finite(s.Fixed) && finite(s.PerSample) && s.PerSample >= 0 && s.Fixed+s.PerSample > 0
	return s, ok
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

package predictorfit

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/predictor"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
)

// Options sets the training. A zero field takes its default.
type Options struct {
	// Seed keys every random draw: the k-fold assignment, the forest's
	// bootstrap samples and the importance shuffles. The same samples
	// and Seed give the same model file and rows, bit for bit, on any
	// number of cores.
	Seed uint64
	// Folds is k of the grouped k-fold split; default 5.
	Folds int
	// Kind is the candidate kept: KindAuto (the default) for the one
	// with the lowest grouped k-fold MAPE among those that predict every
	// held-out configuration, or one of Kinds.
	Kind string
	// Trees is the forest's size; default 50.
	Trees int
	// Repeats is how many shuffles each permutation importance averages;
	// default 5.
	Repeats int
	// Catalog holds the figures of the samples' models (the profile's
	// models.parquet); required.
	Catalog *catalog.Catalog
}

// Defaults of Options' zero fields.
const (
	DefaultFolds   = 5
	DefaultTrees   = 50
	DefaultRepeats = 5
)

func (o Options) withDefaults() (Options, error) {
	if o.Folds == 0 {
		o.Folds = DefaultFolds
	}
	if o.Kind == "" {
		o.Kind = KindAuto
	}
	if o.Trees == 0 {
		o.Trees = DefaultTrees
	}
	if o.Repeats == 0 {
		o.Repeats = DefaultRepeats
	}
	switch {
	case o.Catalog == nil:
		return o, errors.New("catalog: none given")
	case o.Folds < 2:
		return o, fmt.Errorf("folds: must be at least 2, got %d", o.Folds)
	case o.Kind != KindAuto && !slices.Contains(Kinds, o.Kind):
		return o, fmt.Errorf("kind: unknown kind %q; want %s or one of %v", o.Kind, KindAuto, Kinds)
	case o.Trees < 1:
		return o, fmt.Errorf("trees: must be at least 1, got %d", o.Trees)
	case o.Repeats < 1:
		return o, fmt.Errorf("repeats: must be at least 1, got %d", o.Repeats)
	}
	return o, nil
}

// Result is what Train learned and how every candidate fared.
type Result struct {
	// Model is the kept candidate fitted to all the samples.
	Model *Model
	// CV has every held-out configuration of every fold of every split,
	// once per candidate, ordered by split, fold, candidate and
	// configuration.
	CV []CVRow
	// Scores are every candidate's scores on every split, computed from
	// CV.
	Scores []ScoreRow
	// Importances are every candidate's permutation importances on the
	// grouped k-fold split.
	Importances []ImportanceRow
	// Nested names the candidate the selection chose in each outer fold
	// of the nested cross-validation (CV's rows of split SplitNested).
	Nested []string
	// Timings are measured, not reproducible: keep them out of anything
	// compared byte for byte.
	Timings []TimingRow
}

// Train cross-validates every candidate on the kind "inference" rows of
// concurrency 1 of samples, keeps the one opts.Kind names (or the best),
// and fits it to all of them. It fails if there is no such row, a row is
// invalid or names a model the catalog lacks, or there are fewer
// configurations than folds.
func Train(samples []profilespec.Sample, opts Options) (*Result, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("predictor: options: %w", err)
	}
	inf, err := inferenceSamples(samples, o.Catalog)
	if err != nil {
		return nil, fmt.Errorf("predictor: %w", err)
	}
	cs := configsOf(inf)
	folds, err := foldsOf(cs, o.Folds, o.Seed)
	if err != nil {
		return nil, fmt.Errorf("predictor: %w", err)
	}

	var jobs []fitJob
	for _, f := range folds {
		for _, k := range Kinds {
			jobs = append(jobs, fitJob{cs: cs, fold: f, kind: k})
		}
	}
	results, err := runJobs(jobs, inf, &o)
	if err != nil {
		return nil, fmt.Errorf("predictor: %w", err)
	}

	res := &Result{}
	var outer []jobResult
	for i, j := range jobs {
		res.CV = append(res.CV, cvRows(cs, j.fold, j.kind, results[i])...)
		if j.fold.split == SplitKFold {
			outer = append(outer, results[i])
		}
	}
	res.Scores = scoreRows(res.CV, Splits, Kinds)
	res.Importances = importances(cs, results, &o)
	res.Timings = timings(results)
	rows, chosen, err := nested(cs, inf, outer, &o)
	if err != nil {
		return nil, fmt.Errorf("predictor: %w", err)
	}
	res.CV = append(res.CV, rows...)
	res.Scores = append(res.Scores, scoreRows(rows, []string{SplitNested}, []string{KindAuto})...)
	for _, k := range Kinds {
		if n := countOf(chosen, k); n > 0 {
			res.Scores = append(res.Scores, ScoreRow{SplitNested, k, MetricChosen, float64(n)})
		}
	}
	res.Nested = chosen

	kind := o.Kind
	if kind == KindAuto {
		kind = best(res.Scores, SplitKFold)
	}
	all := newTrainSet(cs, inf, o.Catalog)
	if res.Model, err = fit(kind, &all, &o, rngFor(o.Seed, "final", kind)); err != nil {
		return nil, fmt.Errorf("predictor: final model: %w", err)
	}
	return res, nil
}

// fitJob is one candidate to fit to the configurations of cs outside one
// fold and to score on those in it; outer is the outer fold a nested
// cross-validation's job belongs to.
type fitJob struct {
	cs    []config
	fold  fold
	kind  string
	outer int
}

// runJobs runs every job, on every core; results[i] is jobs[i]'s.
func runJobs(jobs []fitJob, inf []profilespec.Sample, o *Options) ([]jobResult, error) {
	results := make([]jobResult, len(jobs))
	errs := make([]error, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(jobs)) {
		wg.Go(func() {
			for i := range next {
				j := jobs[i]
				results[i], errs[i] = runFold(j.cs, inf, j.fold, j.kind, o)
			}
		})
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	return results, errors.Join(errs...)
}

// cvRows are the CV rows of one job's held-out configurations.
func cvRows(cs []config, f fold, kind string, r jobResult) []CVRow {
	out := make([]CVRow, len(f.test))
	for t, ci := range f.test {
		c := cs[ci]
		out[t] = CVRow{
			Split: f.split, Fold: int32(f.index), Candidate: kind,
			Device: c.Device, Model: c.Model, Precision: c.Precision,
			Batch: int32(c.Batch), Threads: int32(c.Threads), NSamples: int32(len(c.samples)),
			MeasuredS: c.median, PredictedS: r.pred[t], HasPrediction: r.ok[t],
		}
	}
	return out
}

// jobResult is one candidate fitted to one fold and its predictions of
// the fold's held-out configurations.
type jobResult struct {
	split, kind string
	fold        fold
	model       *Model
	measured    []float64
	pred        []float64
	ok          []bool
	train       time.Duration
	predict     time.Duration
}

// runFold fits kind to every configuration outside f and predicts those
// in it.
func runFold(cs []config, samples []profilespec.Sample, f fold, kind string, o *Options) (jobResult, error) {
	r := jobResult{split: f.split, kind: kind, fold: f}
	var trainCS []config
	for _, i := range f.train(len(cs)) {
		trainCS = append(trainCS, cs[i])
	}
	start := time.Now()
	ts := newTrainSet(trainCS, samples, o.Catalog)
	m, err := fit(kind, &ts, o, rngFor(o.Seed, f.split, f.index, kind))
	if err != nil {
		return r, fmt.Errorf("%s fold %d: %w", f.split, f.index, err)
	}
	r.train = time.Since(start)
	r.model = m
	r.pred = make([]float64, len(f.test))
	r.ok = make([]bool, len(f.test))
	r.measured = make([]float64, len(f.test))
	for t, i := range f.test {
		r.measured[t] = cs[i].median
	}
	start = time.Now()
	for t, i := range f.test {
		r.pred[t], r.ok[t] = m.Predict(cs[i].Query)
	}
	r.predict = time.Since(start)
	return r, nil
}

// best returns the candidate with full coverage and the lowest MAPE on
// split; failing full coverage, the highest coverage. Ties go to the
// earlier of Kinds.
func best(scores []ScoreRow, split string) string {
	type fig struct{ coverage, mape float64 }
	figs := map[string]*fig{}
	for _, s := range scores {
		if s.Split != split {
			continue
		}
		f := figs[s.Candidate]
		if f == nil {
			f = &fig{mape: math.Inf(1)}
			figs[s.Candidate] = f
		}
		switch s.Metric {
		case MetricCoverage:
			f.coverage = s.Value
		case MetricMAPE:
			f.mape = s.Value
		}
	}
	kinds := slices.Clone(Kinds)
	slices.SortStableFunc(kinds, func(a, b string) int {
		return cmp.Or(cmp.Compare(figs[b].coverage, figs[a].coverage), cmp.Compare(figs[a].mape, figs[b].mape))
	})
	return kinds[0]
}

// timings sums each candidate's measured times per split.
func timings(results []jobResult) []TimingRow {
	var out []TimingRow
	for _, s := range Splits {
		for _, k := range Kinds {
			var fits, rows int
			var tr, pr time.Duration
			for _, r := range results {
				if r.split == s && r.kind == k {
					fits++
					rows += len(r.pred)
					tr += r.train
					pr += r.predict
				}
			}
			if fits == 0 {
				continue
			}
			out = append(out, TimingRow{Split: s, Candidate: k, Fits: int32(fits),
				TrainS: tr.Seconds() / float64(fits), PredictSPerRow: pr.Seconds() / float64(rows)})
		}
	}
	return out
}

// importances computes every candidate's permutation importances on the
// grouped k-fold folds: each input shuffled among each fold's held-out
// configurations, Repeats times, the MAPE pooled over the folds.
func importances(cs []config, results []jobResult, o *Options) []ImportanceRow {
	var out []ImportanceRow
	for _, k := range Kinds {
		var rs []jobResult
		for _, r := range results {
			if r.split == SplitKFold && r.kind == k {
				rs = append(rs, r)
			}
		}
		if len(rs) == 0 {
			continue
		}
		for _, in := range queryInputs {
			inc := permutationIncrease(rs, o, k, in, func(r jobResult, perm []int) ([]float64, []bool) {
				pred := make([]float64, len(perm))
				ok := make([]bool, len(perm))
				for t, i := range r.fold.test {
					q := withInput(cs[i].Query, cs[r.fold.test[perm[t]]].Query, in)
					pred[t], ok[t] = r.model.Predict(q)
				}
				return pred, ok
			})
			out = append(out, ImportanceRow{k, LevelQuery, in, inc})
		}
		if k == KindTable || k == KindAffine {
			// Their predictions come from the query (a table or a
			// series looked up), not from the feature vector: only an
			// affine query of an unseen series reads the features, of
			// its boost fallback.
			continue
		}
		for j, f := range rs[0].model.Features() {
			inc := permutationIncrease(rs, o, k, f.Name, func(r jobResult, perm []int) ([]float64, []bool) {
				x := make([][]float64, len(perm))
				ok := make([]bool, len(perm))
				for t, i := range r.fold.test {
					x[t] = make([]float64, len(r.model.Features()))
					ok[t] = predictor.Featurize(x[t], cs[i].Query, o.Catalog, r.model.Devices())
				}
				pred := make([]float64, len(perm))
				for t := range perm {
					if ok[t] && ok[perm[t]] {
						row := slices.Clone(x[t])
						row[j] = x[perm[t]][j]
						pred[t] = math.Exp(r.model.LogAt(row))
					} else {
						ok[t] = false
					}
				}
				return pred, ok
			})
			out = append(out, ImportanceRow{k, LevelFeature, f.Name, inc})
		}
	}
	return out
}

// permutationIncrease averages, over o.Repeats shuffles, the pooled mean
// absolute log error of predict with each fold's held-out configurations
// shuffled minus that of the unshuffled predictions, over the
// configurations predicted both ways.
func permutationIncrease(rs []jobResult, o *Options, kind, input string,
	predict func(r jobResult, perm []int) ([]float64, []bool)) float64 {
	var sum float64
	for rep := range o.Repeats {
		var base, shuffled float64
		n := 0
		for _, r := range rs {
			perm := make([]int, len(r.fold.test))
			for i := range perm {
				perm[i] = i
			}
			rng := rngFor(o.Seed, "importance", kind, input, r.fold.index, rep)
			for i := len(perm) - 1; i > 0; i-- {
				j := draw(rng, i+1)
				perm[i], perm[j] = perm[j], perm[i]
			}
			pred, ok := predict(r, perm)
			for t := range perm {
				if !ok[t] || !r.ok[t] {
					continue
				}
				lm := math.Log(r.measured[t])
				base += math.Abs(math.Log(r.pred[t]) - lm)
				shuffled += math.Abs(math.Log(pred[t]) - lm)
				n++
			}
		}
		if n > 0 {
			sum += (shuffled - base) / float64(n)
		}
	}
	return sum / float64(o.Repeats)
}

// countOf is how many of xs are x.
func countOf(xs []string, x string) int {
	n := 0
	for _, y := range xs {
		if y == x {
			n++
		}
	}
	return n
}

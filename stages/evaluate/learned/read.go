package learned

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/lib/metrics"
	"github.com/mlsched/mlsched/stages/lib/policy"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// runs is what the report shows of the learned policies: their
// serving files, the wall-clock figures the schedule manifest notes, the
// comparisons with their counterparts and the studies.
type runs struct {
	// specs are the learned specs simulated, in schedule's order.
	specs []string
	reps  int
	// serving holds each spec's serving.parquet row, replication k at
	// k-1.
	serving map[string][]schedulespec.ServingRow
	// wall holds the wall-clock figures noted for each run (runName); a
	// run the notes say nothing of is absent.
	wall map[string]wallClock
	// comparisons pair each learned spec with its counterparts, in the
	// order of specs, the Threshold rule's first.
	comparisons []comparison
	// studies are studies.parquet's rows; none when the studies were
	// off or the artifact has no such file.
	studies []schedulespec.StudyRow
}

// comparison is one learned spec against one of its counterparts.
type comparison struct {
	learned, counterpart string
	// rule says what the counterpart decides migrations by, and how;
	// enable how to have schedule simulate it.
	rule, enable string
	// simulated is whether schedule ran the counterpart; diffs are
	// CompareAll's differences, learned minus counterpart, when it did.
	simulated bool
	diffs     []metrics.Difference
}

// The serving paths the schedule stage times, in the order of
// wallClock.paths, by their names in the notes.
var servingPaths = []string{"uncached", "batched", "cached"}

// wallClock is one learned run's wall-clock serving figures, from the
// schedule manifest's notes.
type wallClock struct {
	// evaluator is what computed the run's decisions
	// (schedule.learned.evaluator): onnxruntime where the notes do not
	// say, as every schedule did before it could be chosen.
	evaluator string
	// referred is how many points the Go forward pass's guard referred
	// to onnxruntime; 0 for onnxruntime's runs.
	referred int64
	// inference is the time spent in the evaluator, seconds; NaN when
	// not noted.
	inference float64
	paths     [3]servingPath
}

// servingPath is one path's decisions and their median and 99th
// percentile, seconds.
type servingPath struct {
	taken    bool
	n        int64
	p50, p99 float64
}

// runName names replication k of a spec as the notes and the trace
// directories do: the spec, or spec/rep-k.
func runName(spec string, k int) string {
	if k == 1 {
		return spec
	}
	return fmt.Sprintf("%s/rep-%d", spec, k)
}

// counterparts returns the specs a learned spec is set against, the
// controlled comparisons first: its ablations, the Threshold rule asked
// exactly as the network is and the network at no decision cost (each
// changes one thing), then edf with the same options and the Threshold
// rule as +migrate asks it, then without migration.
func counterparts(spec string) ([]comparison, error) {
	ps, err := policy.ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	threshold, none, ok := ps.Counterparts()
	if !ok {
		return nil, fmt.Errorf("%s is not a learned policy", spec)
	}
	abl := ps.Ablations()
	ablations := "set schedule.learned.ablations: true to compare"
	add := func(s policy.Spec) string { return "add " + s.String() + " to schedule.policies to compare" }
	return []comparison{
		{learned: spec, counterpart: abl[0].String(), enable: ablations,
			rule: "the Threshold rule asked exactly as the network is, about the same candidates, in the same batches and window, each batch of answers costing the same: only the network differs"},
		{learned: spec, counterpart: abl[1].String(), enable: ablations,
			rule: "the same network asked the same way, its answers costing nothing on the simulated clock: only the decisions' cost differs"},
		{learned: spec, counterpart: threshold.String(), enable: add(threshold),
			rule: "the Threshold rule as +migrate asks it: at once, inside the event, each idle device stopping at its first no"},
		{learned: spec, counterpart: none.String(), enable: add(none), rule: "no migration"},
	}, nil
}

// readRuns reads what the report shows of the learned specs among the
// policies schedule simulated, reps times each: each run's
// serving.parquet, the notes' wall-clock figures and studies.parquet. It
// returns nil when no learned spec was simulated.
// Every error names the file or note at fault.
func readRuns(dir string, policies, ablations []string, reps int, notes map[string]string) (*runs, error) {
	l := &runs{reps: reps, serving: map[string][]schedulespec.ServingRow{}, wall: map[string]wallClock{}}
	for _, p := range policies {
		if ps, err := policy.ParseSpec(p); err == nil && ps.Learned() {
			l.specs = append(l.specs, p)
		}
	}
	if len(l.specs) == 0 {
		return nil, nil
	}
	for _, spec := range l.specs {
		cs, err := counterparts(spec)
		if err != nil {
			return nil, fmt.Errorf("learned policy %s: %w", spec, err)
		}
		for i := range cs {
			cs[i].simulated = slices.Contains(policies, cs[i].counterpart) || slices.Contains(ablations, cs[i].counterpart)
		}
		l.comparisons = append(l.comparisons, cs...)
		rows, err := readServing(dir, spec, reps)
		if err != nil {
			return nil, err
		}
		l.serving[spec] = rows
		for k := 1; k <= reps; k++ {
			w, ok, err := wallClockOf(notes, runName(spec, k))
			if err != nil {
				return nil, err
			}
			if ok {
				l.wall[runName(spec, k)] = w
			}
		}
	}
	var err error
	if l.studies, err = ReadStudies(dir, policies); err != nil {
		return nil, err
	}
	return l, nil
}

// readServing reads and checks the serving rows of the reps replications
// of a learned spec: its serving.parquet, a row for each replication in
// order. A schedule artifact made before the rows were gathered in one
// file holds only the first there, and replication k's in
// rep-k/serving.parquet, which are read instead.
func readServing(dir, spec string, reps int) ([]schedulespec.ServingRow, error) {
	read := func(k int) ([]schedulespec.ServingRow, string, error) {
		name := schedulespec.ReplicationFile(spec, k, schedulespec.ServingFile)
		rows, err := parquetio.ReadAll[schedulespec.ServingRow](filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return nil, name, fmt.Errorf("read serving of %s: %w", runName(spec, k), err)
		}
		return rows, name, nil
	}
	rows, name, err := read(1)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(rows))
	for i := range names {
		names[i] = name
	}
	if len(rows) == 1 && reps > 1 {
		for k := 2; k <= reps; k++ {
			more, name, err := read(k)
			if err != nil {
				return nil, err
			}
			if len(more) != 1 {
				return nil, fmt.Errorf("read %s: %d rows, want 1", name, len(more))
			}
			rows, names = append(rows, more[0]), append(names, name)
		}
	}
	if len(rows) != reps {
		return nil, fmt.Errorf("read %s: %d rows, want %d, one for each replication", name, len(rows), reps)
	}
	for i, r := range rows {
		if err := checkServing(r, spec, i+1); err != nil {
			return nil, fmt.Errorf("read %s: %w", names[i], err)
		}
	}
	return rows, nil
}

// checkServing checks the serving row of replication k of a learned
// spec.
func checkServing(r schedulespec.ServingRow, spec string, k int) error {
	bad := ""
	switch {
	case r.Policy != spec || r.Replication != int32(k):
		bad = fmt.Sprintf("policy %s replication %d, want %s replication %d", r.Policy, r.Replication, spec, k)
	case r.Decisions < 0 || r.Batches < 0 || r.Migrations < 0 || r.Evaluated < 0 || r.Calls < 0:
		bad = fmt.Sprintf("a negative count (decisions %d, batches %d, migrations %d, evaluated %d, calls %d)",
			r.Decisions, r.Batches, r.Migrations, r.Evaluated, r.Calls)
	case r.CacheHits < 0 || r.CacheHits > r.Decisions || r.CacheChanged < 0 || r.CacheChanged > r.CacheHits:
		bad = fmt.Sprintf("cache_hits %d and cache_changed %d of %d decisions", r.CacheHits, r.CacheChanged, r.Decisions)
	case !(r.CostS >= 0) || math.IsInf(r.CostS, 1):
		bad = fmt.Sprintf("cost_s = %g, want a finite time of 0 or more", r.CostS)
	case !knownCostSource(r.CostSource):
		bad = fmt.Sprintf("cost_source = %q, want %s, %s or %s", r.CostSource, schedulespec.CostServing, schedulespec.CostTightLoop, schedulespec.CostConfigured)
	case r.CostSource != "" && (!(r.CostP99S >= r.CostS) || math.IsInf(r.CostP99S, 1)):
		bad = fmt.Sprintf("cost_p99_s = %g, want a finite time of at least cost_s = %g", r.CostP99S, r.CostS)
	case math.IsNaN(r.MeanBatch) || math.IsInf(r.MeanBatch, 0) || math.IsNaN(r.HitRate) || r.HitRate < 0 || r.HitRate > 1:
		bad = fmt.Sprintf("mean_batch %g, hit_rate %g", r.MeanBatch, r.HitRate)
	}
	if bad != "" {
		return errors.New(bad)
	}
	return nil
}

// knownCostSource reports whether src is a decision cost's source the
// report knows, or empty: a schedule artifact made before serving.parquet
// and studies.parquet named it, which the report says does not say.
func knownCostSource(src string) bool {
	switch src {
	case "", schedulespec.CostServing, schedulespec.CostTightLoop, schedulespec.CostConfigured:
		return true
	}
	return false
}

// wallClockOf reads run's wall-clock figures from the schedule manifest's
// notes (serving:<run>:<figure>); ok is false when the notes have none.
func wallClockOf(notes map[string]string, run string) (w wallClock, ok bool, err error) {
	prefix := "serving:" + run + ":"
	get := func(figure string) (float64, bool, error) {
		key := prefix + figure
		s, ok := notes[key]
		if !ok {
			return math.NaN(), false, nil
		}
		ok = true
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v >= 0) || math.IsInf(v, 1) {
			return 0, false, fmt.Errorf("schedule manifest: note %s = %q: want a number of 0 or more", key, s)
		}
		return v, true, nil
	}
	w.evaluator = schedulespec.EvaluatorONNXRuntime
	if ev, noted := notes[prefix+"evaluator"]; noted {
		if !slices.Contains(schedulespec.Evaluators, ev) {
			return w, false, fmt.Errorf("schedule manifest: note %sevaluator = %q: want %s", prefix, ev, strings.Join(schedulespec.Evaluators, " or "))
		}
		w.evaluator = ev
	}
	referred, found, err := get("referred")
	if err != nil {
		return w, false, err
	}
	if found && referred != math.Trunc(referred) {
		return w, false, fmt.Errorf("schedule manifest: note %sreferred = %v: want a whole count", prefix, referred)
	}
	if found {
		w.referred = int64(referred)
	}
	if w.inference, found, err = get("inference_s"); err != nil {
		return w, false, err
	}
	ok = found
	for i, path := range servingPaths {
		n, found, err := get(path + "_n")
		if err != nil {
			return w, false, err
		}
		if !found {
			continue
		}
		ok = true
		p50, has50, err := get(path + "_p50_us")
		if err != nil {
			return w, false, err
		}
		p99, has99, err := get(path + "_p99_us")
		if err != nil {
			return w, false, err
		}
		if !has50 || !has99 || n != math.Trunc(n) {
			return w, false, fmt.Errorf("schedule manifest: note %s%s_n = %v without a whole count and both %s_p50_us and %s_p99_us", prefix, path, n, path, path)
		}
		w.paths[i] = servingPath{taken: true, n: int64(n), p50: p50 * 1e-6, p99: p99 * 1e-6}
	}
	return w, ok, nil
}

// ReadStudies reads studies.parquet: nil when the artifact has none (a
// schedule version from before the studies). Its rows must name
// simulated policies and known studies, and hold usable axes.
func ReadStudies(dir string, policies []string) ([]schedulespec.StudyRow, error) {
	path := filepath.Join(dir, schedulespec.StudiesFile)
	rows, err := parquetio.ReadAll[schedulespec.StudyRow](path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read studies: %w", err)
	}
	for i, r := range rows {
		bad := ""
		switch {
		case r.Study != schedulespec.StudyPredictionError && r.Study != schedulespec.StudyDecisionCost:
			bad = fmt.Sprintf("study %q, want %s or %s", r.Study, schedulespec.StudyPredictionError, schedulespec.StudyDecisionCost)
		case !slices.Contains(policies, r.Policy):
			bad = fmt.Sprintf("policy %q was not simulated (runs: %v)", r.Policy, policies)
		case !(r.PredictionError >= 0 && r.PredictionError < 1):
			bad = fmt.Sprintf("prediction_error = %g, want a share in [0, 1)", r.PredictionError)
		case !(r.PredictionMAPE >= 0) || math.IsInf(r.PredictionMAPE, 1):
			bad = fmt.Sprintf("prediction_mape = %g, want a finite share of 0 or more", r.PredictionMAPE)
		case !(r.DecisionCostS >= 0) || math.IsInf(r.DecisionCostS, 1):
			bad = fmt.Sprintf("decision_cost_s = %g, want a finite time of 0 or more", r.DecisionCostS)
		case r.Study == schedulespec.StudyDecisionCost && r.DecisionCost == "":
			bad = "a decision_cost row without its decision_cost"
		case !knownCostSource(r.DecisionCostSource):
			bad = fmt.Sprintf("decision_cost_source = %q, want %s, %s or %s", r.DecisionCostSource, schedulespec.CostServing, schedulespec.CostTightLoop, schedulespec.CostConfigured)
		case r.SLOAttainment < 0 || r.SLOAttainment > 1 || r.InteractiveSLOAttainment < 0 || r.InteractiveSLOAttainment > 1:
			bad = fmt.Sprintf("slo_attainment %g, interactive_slo_attainment %g, want shares", r.SLOAttainment, r.InteractiveSLOAttainment)
		}
		if bad != "" {
			return nil, fmt.Errorf("read %s: row %d (%s, %s): %s", schedulespec.StudiesFile, i+1, r.Study, r.Policy, bad)
		}
	}
	return rows, nil
}

// study returns the rows of one study.
func (l *runs) study(name string) []schedulespec.StudyRow {
	var out []schedulespec.StudyRow
	for _, r := range l.studies {
		if r.Study == name {
			out = append(out, r)
		}
	}
	return out
}

package schedule

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/cluster"
	"github.com/mlsched/mlsched/stages/lib/ort"
	"github.com/mlsched/mlsched/stages/lib/policy"
	"github.com/mlsched/mlsched/stages/lib/servicetime"
	"github.com/mlsched/mlsched/stages/lib/sim"
	"github.com/mlsched/mlsched/stages/schedule/ortmachine"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// runFile is a real run's memo entry's summary (a RealRunRow with its
// measured fields set).
const runFile = "run.parquet"

// RunsReal reports whether the config runs policies for real, which needs
// onnxruntime.
func RunsReal(cfg Config) bool { return len(cfg.Real.Policies) > 0 }

// NeedsRuntime reports whether the stage loads onnxruntime: to serve the
// learned policy's network, or to run batches for real.
func NeedsRuntime(cfg Config) bool {
	return len(learnedSpecs(slices.Concat(cfg.Policies, cfg.Real.Policies))) > 0 || RunsReal(cfg)
}

// realCluster is the part of cfg's cluster that can run for real: the
// measured devices whose profile device this machine measured (not
// imported). left names the others.
func realCluster(cfg Config, samples []profilespec.Sample) (devs []Device, left []string) {
	here := map[string]bool{}
	for _, s := range samples {
		if s.Source == profilespec.SourceMeasured && s.Kind == profilespec.KindInference {
			here[s.Device] = true
		}
	}
	for _, d := range cfg.Cluster {
		switch {
		case d.Kind != KindMeasured:
			left = append(left, fmt.Sprintf("%s (%s)", d.Name, d.Kind))
		case !here[d.ProfileDevice]:
			left = append(left, fmt.Sprintf("%s (profile device %s was not measured on this machine)", d.Name, d.ProfileDevice))
		default:
			devs = append(devs, d)
		}
	}
	return devs, left
}

// realRunner runs the real runs of schedule.real and their simulations.
type realRunner struct {
	cfg    Config
	cl     *cluster.Cluster // the real cluster
	seed   int64
	in     Inputs
	memo   Memo
	models string // the profile's directory: its .onnx files
	// providers are the execution providers the profile measured each
	// profile device through, which its real lanes run on.
	providers map[string]string
	exec      *ortmachine.Machine
	perUnit   float64
	// variation is the profile's run-to-run variation of the real
	// cluster's service times, and variationFrom what it was measured on
	// (profileVariation).
	variation     float64
	variationFrom string
}

// variant is how a simulation of a slice departs from the plain one:
// every service time slower times the profile's (sensitivity; 0 or 1
// leaves them as measured), and the draw'th seeds of the service-time
// draws (schedule.real.draws; 0 or 1 is the first).
type variant struct {
	slower float64
	draw   int
}

// runReal runs every policy of schedule.real at every load, for real
// unless the memo has the run, then simulates the same slice, and writes
// real/ into out.Dir. It runs before any simulation, so that nothing else
// uses the cores while it measures.
func runReal(ctx context.Context, cfg Config, cat *catalog.Catalog, samples []profilespec.Sample, table *servicetime.Table, seed int64, in Inputs, out Output, note func(k, v string)) (err error) {
	if !RunsReal(cfg) {
		return nil
	}
	devs, left := realCluster(cfg, samples)
	if len(devs) == 0 {
		return fmt.Errorf("schedule.real: no device of the cluster can run for real: %s; only a measured device whose profile device this machine measured can (or set schedule.real.policies to [])",
			strings.Join(left, ", "))
	}
	if len(left) > 0 {
		note("real:left_out", strings.Join(left, "; "))
	}
	// With one real device a policy that migrates has nowhere to move a
	// job to: it would run as its queue order alone, repeating that
	// order's run, so it is not run (unless every policy is such).
	runs := cfg.Real.Policies
	if len(devs) == 1 {
		var kept, skipped []string
		for _, p := range runs {
			if sp, err := policy.ParseSpec(p); err == nil && sp.Migrates() {
				skipped = append(skipped, p)
			} else {
				kept = append(kept, p)
			}
		}
		if len(kept) > 0 && len(skipped) > 0 {
			runs = kept
			note(schedulespec.NoteRealSkipped, strings.Join(skipped, ","))
		}
	}
	// The real cluster, serving the network when a real policy is
	// learned.
	rcfg := cfg
	rcfg.Cluster, rcfg.Policies = devs, runs
	cl, err := newCluster(rcfg, cat, table, in)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := cl.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if _, err := ort.Init(in.ORTLib, in.ORTSource); err != nil {
		return fmt.Errorf("schedule.real: %w", err)
	}
	r := &realRunner{cfg: rcfg, cl: cl, seed: seed, in: in, memo: out.Memo, models: filepath.Dir(in.Samples), providers: map[string]string{}}
	for _, s := range samples {
		if s.Source == profilespec.SourceMeasured && s.Kind == profilespec.KindInference {
			r.providers[s.Device] = s.Provider
		}
	}
	var profiled []string
	for _, d := range devs {
		profiled = append(profiled, d.ProfileDevice)
	}
	r.variation, r.variationFrom = profileVariation(samples, profiled)
	defer func() {
		if r.exec != nil {
			r.exec.Close()
		}
	}()
	// Load is offered as the sweep offers it, on the real cluster.
	b, err := cl.Bounds(ctx, in.Jobs, 1, cfg.Sweep.Jobs)
	if err != nil {
		return err
	}
	if !(b.WorkLBS > 0) {
		return errors.New("schedule.real: the eval jobs hold no work that fits the real cluster")
	}
	r.perUnit = b.ArrivalLBS / b.WorkLBS
	if err := os.MkdirAll(filepath.Join(out.Dir, RealDir), 0o755); err != nil {
		return err
	}
	if err := parquetio.WriteFile(filepath.Join(out.Dir, RealDir, ClusterFile), cl.Rows(), out.Metadata); err != nil {
		return fmt.Errorf("write %s/%s: %w", RealDir, ClusterFile, err)
	}
	sliced := make([][]*sim.Job, len(cfg.Real.Loads))
	for i, u := range cfg.Real.Loads {
		if sliced[i], err = r.slice(ctx, u); err != nil {
			return err
		}
	}
	// Every slice's first runs, then every slice's second, and so on: a
	// drift of the machine then falls between a run and its repeat rather
	// than on one load's runs alone.
	var rows []RealRunRow
	var repeats []RealRepeatRow
	for k := 1; k <= cfg.Real.Repeats; k++ {
		for i, u := range cfg.Real.Loads {
			for _, spec := range runs {
				if k == 1 {
					row, err := r.run(ctx, spec, u, sliced[i], out)
					if err != nil {
						return fmt.Errorf("schedule.real: %s at load %v: %w", spec, u, err)
					}
					rows = append(rows, row)
					continue
				}
				row, err := r.repeat(ctx, spec, u, k, sliced[i], out)
				if err != nil {
					return fmt.Errorf("schedule.real: %s at load %v, run %d: %w", spec, u, k, err)
				}
				repeats = append(repeats, row)
			}
		}
	}
	if err := parquetio.WriteFile(filepath.Join(out.Dir, RealRunsFile), rows, out.Metadata); err != nil {
		return fmt.Errorf("write %s: %w", RealRunsFile, err)
	}
	if len(repeats) > 0 {
		if err := parquetio.WriteFile(filepath.Join(out.Dir, RealRepeatsFile), repeats, out.Metadata); err != nil {
			return fmt.Errorf("write %s: %w", RealRepeatsFile, err)
		}
	}
	return nil
}

// slice reads the eval jobs that arrive within schedule.real.duration at
// offered load u, their arrival times divided by the schedule load.
func (r *realRunner) slice(ctx context.Context, u float64) ([]*sim.Job, error) {
	jr, err := r.cl.OpenJobs(r.in.Jobs, u*r.perUnit, 0)
	if err != nil {
		return nil, err
	}
	defer jr.Close()
	span := r.cfg.Real.Duration.Seconds()
	var jobs []*sim.Job
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		j, err := jr.Next()
		if err != nil {
			return nil, err
		}
		if j == nil || j.Arrival >= span {
			break
		}
		if r.cl.Fits(j) {
			if err := r.cl.Resolve(j); err != nil {
				return nil, err
			}
		}
		jobs = append(jobs, j) // never recycled: each is new
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("schedule.real: no eval job arrives within %s at load %v", r.cfg.Real.Duration, u)
	}
	return jobs, nil
}

// measured runs the k'th real run of spec at load u on jobs, or takes it
// from the memo, and returns the directory that holds its files; done
// removes the directory where it is not the memo's.
func (r *realRunner) measured(ctx context.Context, spec string, u float64, k int, jobs []*sim.Job) (entry string, done func(), err error) {
	lines := [][2]string{
		{"real", "v1"},
		{"spec", spec},
		{"load", strconv.FormatFloat(u, 'g', -1, 64)},
		{"duration", r.cfg.Real.Duration.String()},
		{"sweep_jobs", strconv.FormatInt(r.cfg.Sweep.Jobs, 10)},
		{"jobs", strconv.Itoa(len(jobs))},
	}
	if k > 1 { // the first run keeps the key it had before repeats were
		lines = append(lines, [2]string{"repeat", strconv.Itoa(k)})
	}
	build := func(entry string) error { return r.measure(ctx, spec, jobs, entry) }
	if r.memo != nil {
		entry, err = r.memo.Get("real", unitConfig(r.cfg, spec), lines, build)
		return entry, func() {}, err
	}
	if entry, err = os.MkdirTemp("", "mlsched-real"); err != nil {
		return "", nil, err
	}
	done = func() { os.RemoveAll(entry) }
	if err := build(entry); err != nil {
		done()
		return "", nil, err
	}
	return entry, done, nil
}

// runOf reads the summary of the real run of spec on jobs that entry
// holds.
func runOf(entry, spec string, jobs []*sim.Job) (RealRunRow, error) {
	got, err := parquetio.ReadAll[RealRunRow](filepath.Join(entry, runFile))
	if err != nil {
		return RealRunRow{}, err
	}
	if len(got) != 1 || got[0].Policy != spec || got[0].Jobs != int64(len(jobs)) {
		return RealRunRow{}, fmt.Errorf("the memo entry %s holds another run: %+v", entry, got)
	}
	return got[0], nil
}

// repeat returns the k'th (2 and on) real run of spec at load u on
// jobs, its files in out.Dir.
func (r *realRunner) repeat(ctx context.Context, spec string, u float64, k int, jobs []*sim.Job, out Output) (RealRepeatRow, error) {
	rel := RealRepeatDir(spec, u, k)
	dir := filepath.Join(out.Dir, filepath.FromSlash(rel))
	row := RealRepeatRow{Policy: spec, Load: u, Repeat: int32(k), Jobs: int64(len(jobs)),
		Trace: rel + "/" + TraceFile, Devices: rel + "/" + DevicesFile, Dispatch: rel + "/" + DispatchFile}
	entry, done, err := r.measured(ctx, spec, u, k, jobs)
	if err != nil {
		return row, err
	}
	defer done()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return row, err
	}
	if _, err := restamp[TraceRow](entry, dir, TraceFile, out.Metadata); err != nil {
		return row, err
	}
	if _, err := restamp[BatchRow](entry, dir, DevicesFile, out.Metadata); err != nil {
		return row, err
	}
	if _, err := restamp[DispatchRow](entry, dir, DispatchFile, out.Metadata); err != nil {
		return row, err
	}
	run, err := runOf(entry, spec, jobs)
	row.WallS = run.WallS
	return row, err
}

// run returns the real run of spec at load u on jobs, from the memo or
// run now, and simulates the same jobs; both go into out.Dir.
func (r *realRunner) run(ctx context.Context, spec string, u float64, jobs []*sim.Job, out Output) (RealRunRow, error) {
	dir := filepath.Join(out.Dir, filepath.FromSlash(RealRunDir(spec, u)))
	rel := func(parts ...string) string {
		return strings.Join(append([]string{RealRunDir(spec, u)}, parts...), "/")
	}
	entry, done, err := r.measured(ctx, spec, u, 1, jobs)
	if err != nil {
		return RealRunRow{}, err
	}
	defer done()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return RealRunRow{}, err
	}
	// The measurement's files, with this run's provenance.
	trace, err := restamp[TraceRow](entry, dir, TraceFile, out.Metadata)
	if err != nil {
		return RealRunRow{}, err
	}
	batches, err := restamp[BatchRow](entry, dir, DevicesFile, out.Metadata)
	if err != nil {
		return RealRunRow{}, err
	}
	if _, err := restamp[DispatchRow](entry, dir, DispatchFile, out.Metadata); err != nil {
		return RealRunRow{}, err
	}
	row, err := runOf(entry, spec, jobs)
	if err != nil {
		return RealRunRow{}, err
	}
	row.Load, row.ScheduleLoad, row.SpanS = u, u*r.perUnit, r.cfg.Real.Duration.Seconds()
	row.Trace, row.Devices, row.Dispatch = rel(TraceFile), rel(DevicesFile), rel(DispatchFile)
	row.SimTrace, row.SimDevices = rel(SimDir, TraceFile), rel(SimDir, DevicesFile)
	if err := r.simulate(ctx, spec, jobs, filepath.Join(dir, SimDir), out.Metadata, nil, variant{}); err != nil {
		return RealRunRow{}, err
	}
	// scaled simulates the slice with every service time 1 ∓ s times the
	// profile's, into the faster and slower directories.
	scaled := func(s float64, faster, slower string, fasterTrace, fasterDevices, slowerTrace, slowerDevices *string) error {
		for _, v := range []struct {
			dir            string
			factor         float64
			trace, devices *string
		}{{faster, 1 - s, fasterTrace, fasterDevices}, {slower, 1 + s, slowerTrace, slowerDevices}} {
			if err := r.simulate(ctx, spec, jobs, filepath.Join(dir, v.dir), out.Metadata, nil, variant{slower: v.factor}); err != nil {
				return fmt.Errorf("simulate with service times %v times the profile's: %w", v.factor, err)
			}
			*v.trace, *v.devices = rel(v.dir, TraceFile), rel(v.dir, DevicesFile)
		}
		return nil
	}
	if s := r.cfg.Real.Sensitivity; s > 0 {
		if err := scaled(s, FasterDir, SlowerDir, &row.FasterTrace, &row.FasterDevices, &row.SlowerTrace, &row.SlowerDevices); err != nil {
			return RealRunRow{}, err
		}
		row.Sensitivity = s
	}
	// The prediction band's edges: the profile's own variation either way
	// (at most half the profile's time: a service time stays positive).
	row.Variation, row.VariationFrom = min(r.variation, 0.5), r.variationFrom
	if v := row.Variation; v > 0 {
		if err := scaled(v, BandFasterDir, BandSlowerDir, &row.BandFasterTrace, &row.BandFasterDevices, &row.BandSlowerTrace, &row.BandSlowerDevices); err != nil {
			return RealRunRow{}, fmt.Errorf("prediction band: %w", err)
		}
	}
	// The same slice with the other seeds of the service-time draws.
	for k := 2; k <= r.cfg.Real.Draws; k++ {
		ddir := filepath.Join(out.Dir, filepath.FromSlash(RealDrawDir(spec, u, k)))
		if err := r.simulate(ctx, spec, jobs, ddir, out.Metadata, nil, variant{draw: k}); err != nil {
			return RealRunRow{}, fmt.Errorf("simulate with draw %d: %w", k, err)
		}
	}
	row.Draws = int64(r.cfg.Real.Draws)
	x, missed := r.replayOf(trace, batches)
	if err := r.simulate(ctx, spec, jobs, filepath.Join(dir, ReplayDir), out.Metadata, x, variant{}); err != nil {
		return RealRunRow{}, fmt.Errorf("replay: %w", err)
	}
	row.ReplayTrace, row.ReplayDevices, row.ReplayMissed = rel(ReplayDir, TraceFile), rel(ReplayDir, DevicesFile), *missed
	return row, nil
}

// replayOf is the Machine that replays the real run of trace and batches:
// a batch takes the time that the real batch its lead job led on the same
// device took (start to end, the dispatch included), and where the real
// run had none of the same size (the decisions parted) the profile's mean
// alone, counted in missed.
func (r *realRunner) replayOf(trace []TraceRow, batches []BatchRow) (*sim.Replay, *int64) {
	type ran struct {
		samples int32
		time    float64
	}
	byBatch := make(map[int64]ran, len(batches))
	for _, b := range batches {
		byBatch[b.BatchID] = ran{b.Samples, b.EndS - b.StartS}
	}
	type key struct {
		job    int64
		device string
	}
	led := make(map[key]ran, len(trace))
	for _, t := range trace {
		if b, ok := byBatch[t.BatchID]; ok && t.Device != "" {
			led[key{t.JobID, t.Device}] = b
		}
	}
	missed := new(int64)
	x := &sim.Replay{Time: func(d, lane int, jobs []*sim.Job, samples int32) (float64, error) {
		h := jobs[0]
		if b, ok := led[key{h.ID, r.cl.Devices()[d].Name}]; ok && b.samples == samples {
			return b.time, nil
		}
		*missed++
		return r.cl.Predict(d, h.Model, h.Precision, samples), nil
	}}
	return x, missed
}

// restamp copies file name of a memo entry into dir with the provenance
// meta, and returns its rows.
func restamp[T any](entry, dir, name string, meta map[string]string) ([]T, error) {
	rows, err := parquetio.ReadAll[T](filepath.Join(entry, name))
	if err != nil {
		return nil, err
	}
	return rows, parquetio.WriteFile(filepath.Join(dir, name), rows, meta)
}

// simConfig is the simulation, or the real run (x not nil), of spec on
// the real cluster, its records going to rec; done releases what it
// holds once the run is over.
func (r *realRunner) simConfig(spec string, rec *recorder, x sim.Machine, v variant) (sim.Config, func(), error) {
	u := Unit{Spec: spec, Replication: max(1, v.draw), Predictor: r.cfg.Predictor}
	simSeed, policySeed := u.seeds(r.seed)
	b, err := r.cl.Build(cluster.Simulation{Spec: spec, SimSeed: simSeed, PolicySeed: policySeed, Predictor: r.cfg.Predictor,
		Slower: v.slower, OnBatch: rec.batch, Machine: x})
	if err != nil {
		return sim.Config{}, nil, err
	}
	done := func() {
		if mig, ok := b.Migrator.(*netMigrator); ok {
			mig.release()
		}
	}
	return b.Config, done, nil
}

// feedJobs hands out copies of jobs in order, so that a run never
// changes the slice that the next one reads.
func feedJobs(jobs []*sim.Job) func() (*sim.Job, bool) {
	i := 0
	return func() (*sim.Job, bool) {
		if i == len(jobs) {
			return nil, false
		}
		c := *jobs[i]
		i++
		return &c, true
	}
}

// simulate simulates spec on jobs and the real cluster into dir, which it
// makes, its batches timed by x where x is not nil (a replay), as v says.
func (r *realRunner) simulate(ctx context.Context, spec string, jobs []*sim.Job, dir string, meta map[string]string, x *sim.Replay, v variant) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	rec, err := newRecorder(dir, spec, r.cl, meta)
	if err != nil {
		return err
	}
	defer rec.abort()
	var ex sim.Machine
	if x != nil {
		ex = x
	}
	sc, done, err := r.simConfig(spec, rec, ex, v)
	if err != nil {
		return err
	}
	defer done()
	if _, err := sim.Run(sc, feedJobs(jobs), rec.record); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return rec.close()
}

// measure runs spec on jobs for real and writes the trace, devices and
// dispatch files and the run's summary into entry.
func (r *realRunner) measure(ctx context.Context, spec string, jobs []*sim.Job, entry string) error {
	if r.exec == nil {
		devs := make([]ortmachine.Device, len(r.cl.Devices()))
		for d := range devs {
			dev := r.cl.Device(d)
			// A GPU's lanes run on GPU 0: the profile's samples do not say
			// which ordinal it measured.
			devs[d] = ortmachine.Device{Name: dev.Name, Lanes: dev.Lanes, Threads: dev.Threads, Provider: r.providers[dev.ProfileDevice]}
		}
		x, err := ortmachine.New(ctx, ortmachine.Config{Devices: devs, Model: r.model, Seed: uint64(r.seed)})
		if err != nil {
			return err
		}
		r.exec = x
	}
	ps, err := policy.ParseSpec(spec)
	if err != nil {
		return err
	}
	if err := r.prepare(jobs, ps.Batch); err != nil {
		return err
	}
	rec, err := newRecorder(entry, spec, r.cl, nil)
	if err != nil {
		return err
	}
	defer rec.abort()
	sc, done, err := r.simConfig(spec, rec, r.exec, variant{})
	if err != nil {
		return err
	}
	defer done()
	runtime.GC() // not in the middle of the run, if it can be helped
	if err := r.exec.Begin(jobs[0].Arrival); err != nil {
		return err
	}
	_, err = sim.Run(sc, feedJobs(jobs), rec.record)
	batches, late := r.exec.Finish()
	if err != nil {
		return err
	}
	if err := rec.close(); err != nil {
		return err
	}
	w := r.exec.Warmup()
	row := RealRunRow{Policy: spec, Jobs: int64(len(jobs)), LateEvents: int64(len(late)),
		WarmRuns: int64(w.Runs), WarmS: w.Seconds, WarmFaulting: int64(w.Faulting)}
	var last float64
	rows := make([]DispatchRow, len(batches))
	for i, b := range batches {
		dev := *r.cl.Device(int(b.Device))
		rows[i] = DispatchRow{BatchID: b.BatchID, Device: dev.Name, Lane: b.Lane, Model: r.cl.ModelName(b.Model), Precision: cluster.PrecisionName(b.Precision),
			Jobs: b.Jobs, Samples: b.Samples, HandedS: b.Handed, PickedS: b.Picked, RunS: b.Run, EndS: b.End, NoticedS: b.Noticed,
			Bound: b.Bound, Faults: b.Faults, ProfileMeanS: r.cl.Predict(int(b.Device), b.Model, b.Precision, b.Samples)}
		if b.Bound {
			row.Bound++
		}
		last = max(last, b.End)
	}
	if err := startsAndBusy(rows, entry); err != nil {
		return err
	}
	row.WallS = last - jobs[0].Arrival
	if len(late) > 0 {
		s := slices.Sorted(slices.Values(late))
		row.LateP50S, row.LateP99S, row.LateMaxS = quantileSorted(s, 0.5), quantileSorted(s, 0.99), s[len(s)-1]
	}
	if err := parquetio.WriteFile(filepath.Join(entry, DispatchFile), rows, nil); err != nil {
		return err
	}
	return parquetio.WriteFile(filepath.Join(entry, runFile), []RealRunRow{row}, nil)
}

// startsAndBusy fills each dispatch row's StartS from the run's devices
// file in entry and its Busy from the rows' intervals.
func startsAndBusy(rows []DispatchRow, entry string) error {
	bs, err := parquetio.ReadAll[BatchRow](filepath.Join(entry, DevicesFile))
	if err != nil {
		return err
	}
	start := make(map[int64]float64, len(bs))
	for _, b := range bs {
		start[b.BatchID] = b.StartS
	}
	for i := range rows {
		s, ok := start[rows[i].BatchID]
		if !ok {
			return fmt.Errorf("batch %d ran but its devices row is missing", rows[i].BatchID)
		}
		rows[i].StartS = s
	}
	for i := range rows {
		n := int32(0)
		for j := range rows {
			if rows[j].Device == rows[i].Device && rows[j].StartS <= rows[i].StartS && rows[i].StartS < rows[j].EndS {
				n++
			}
		}
		rows[i].Busy = n
	}
	return nil
}

// quantileSorted is the q-quantile of sorted values, interpolated.
func quantileSorted(s []float64, q float64) float64 {
	p := q * float64(len(s)-1)
	i := int(math.Floor(p))
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[i] + (p-float64(i))*(s[i+1]-s[i])
}

// prepare readies the machine for every batch size the run may see: each
// job's own, and with micro-batching every size up to the largest batch.
func (r *realRunner) prepare(jobs []*sim.Job, batching bool) error {
	sizes := map[[2]int32]map[int32]bool{}
	for _, j := range jobs {
		if !r.cl.Fits(j) {
			continue
		}
		k := [2]int32{j.Model, j.Precision}
		if sizes[k] == nil {
			sizes[k] = map[int32]bool{}
			if batching {
				for b := int32(1); b <= int32(r.cfg.Batching.MaxBatch); b++ {
					sizes[k][b] = true
				}
			}
		}
		sizes[k][j.Batch] = true
	}
	for k, bs := range sizes {
		for b := range bs {
			if err := r.exec.Prepare(k[0], k[1], b); err != nil {
				return err
			}
		}
	}
	return nil
}

// model reads the profile's build of a model at a precision: the very
// bytes it timed.
func (r *realRunner) model(model, precision int32) (ortmachine.Model, error) {
	c := r.cl.Catalog().At(int(model))
	file := profilespec.ModelFile(c.Name, cluster.PrecisionName(precision))
	b, err := os.ReadFile(filepath.Join(r.models, file))
	if err != nil {
		return ortmachine.Model{}, fmt.Errorf("the profile's %s, which the real run runs: %w", file, err)
	}
	return ortmachine.Model{Catalog: c, ONNX: b}, nil
}

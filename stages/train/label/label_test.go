package label

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/sim"
)

// fixed is a Service whose batches of model m take Work[m]·batch seconds
// at speed 1, whatever the draw: the scenarios below can be worked out by
// hand.
type fixed struct{ Work []float64 }

func (f fixed) Time(_ int, m, _, b int32, _ float64) float64 { return f.Work[m] * float64(b) }
func (f fixed) Predict(_ int, m, _, b int32) float64         { return f.Work[m] * float64(b) }
func (fixed) Memory(_, _, b int32) float64                   { return float64(b) }
func (fixed) Contention(_, _ int) float64                    { return 1 }

// noisy is fixed with each batch's time scaled by 0.5 + u.
type noisy struct{ fixed }

func (n noisy) Time(d int, m, p, b int32, u float64) float64 {
	return n.fixed.Time(d, m, p, b, u) * (0.5 + u)
}

// onFirst places every job on device 0 and runs queues in arrival order,
// so that the other devices only get work by migration.
type onFirst struct{}

func (onFirst) Name() string                   { return "on-first" }
func (onFirst) Place(*sim.Job, *sim.State) int { return 0 }

// byDeadline places every job on device 0 and orders queues by deadline.
type byDeadline struct{ onFirst }

func (byDeadline) Less(a, b *sim.Job) bool { return a.Deadline < b.Deadline }

// gainAbove is the Threshold rule: migrate when the predicted gain
// exceeds its value.
type gainAbove float64

func (g gainAbove) Migrate(f *sim.MigrationFeatures) bool { return f.Gain() > float64(g) }

// source is a Source of jobs on devices with fixed service times, with
// moves costing cost seconds, under policy.
func source(jobs []sim.Job, devices []sim.Device, svc sim.Service, pol sim.Policy, cost float64) Source {
	return Source{Jobs: jobs, SimConfig: func(spec string, simSeed, _ uint64) (sim.Config, error) {
		return sim.Config{Devices: devices, Service: svc, Policy: pol, Seed: simSeed,
			Migration: sim.Migration{Decide: gainAbove(0), Cost: cost}}, nil
	}}
}

// firstDecision scouts the source's only trajectory and plays out its
// first migration decision.
func firstDecision(t *testing.T, src Source, opts Options) (Point, bool) {
	t.Helper()
	tr := &trajectory{opts: opts, src: src, jobs: src.Jobs, seed: 1, prog: &progress{}}
	if err := tr.scout(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(tr.decisions) == 0 {
		t.Fatal("the scenario makes no migration decision")
	}
	tr.chosen = []int{0}
	if err := tr.label(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(tr.points) == 0 {
		return Point{}, false
	}
	return tr.points[0], true
}

// TestScenarios are the migration classifier's three scenarios, as states
// of the simulator at a migration decision, labelled by playing the
// decision both ways. Each job takes a second of device time unless said
// otherwise.
func TestScenarios(t *testing.T) {
	two := func(speedB float64) []sim.Device {
		return []sim.Device{{Name: "a", Lanes: 1, Memory: 100, Speed: 1}, {Name: "b", Lanes: 1, Memory: 100, Speed: speedB}}
	}
	job := func(id int64, at float64) sim.Job {
		return sim.Job{ID: id, Arrival: at, Deadline: at + 5, Batch: 1}
	}
	// Strong imbalance, idle destination: six jobs queue on a, 0.1 s
	// apart, while b of the same speed idles. Moving the first waiting
	// job now ends it 0.1 s sooner than waiting for the next decision.
	var imbalance []sim.Job
	for i := range 6 {
		imbalance = append(imbalance, job(int64(i), 0.1*float64(i)))
	}
	// Balanced: b and a each run a job, and a holds one more. b frees
	// 10 ms before a does; the move costs 50 ms, so the job ends sooner
	// where it is.
	balanced := []sim.Job{job(0, 0), job(1, 0.01), job(2, 0.02)}
	// Light load: one job waits behind a nearly finished one on a, and b
	// is idle but half as fast.
	light := []sim.Job{job(0, 0), job(1, 0.99)}
	tests := []struct {
		name    string
		jobs    []sim.Job
		pol     sim.Policy
		devices []sim.Device
		cost    float64
		migrate bool
	}{
		{"strong imbalance, idle destination", imbalance, onFirst{}, two(1), 0.001, true},
		{"balanced", balanced, balancedPlacer{}, two(1), 0.05, false},
		{"light load", light, onFirst{}, two(0.5), 0.001, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := source(tt.jobs, tt.devices, fixed{Work: []float64{1}}, tt.pol, tt.cost)
			p, ok := firstDecision(t, src, Options{Horizon: 30, Objective: ObjectiveLatency, Tie: 1e-9})
			if !ok {
				t.Fatal("the decision is a near tie")
			}
			if p.Migrate != tt.migrate {
				t.Errorf("label migrate = %v (move %v, stay %v), want %v", p.Migrate, p.Move, p.Stay, tt.migrate)
			}
		})
	}
}

// balancedPlacer puts job 0 on b and every other job on a: b runs job 0
// and ends first, a runs job 1 and queues job 2.
type balancedPlacer struct{}

func (balancedPlacer) Name() string { return "balanced" }
func (balancedPlacer) Place(j *sim.Job, _ *sim.State) int {
	if j.ID == 0 {
		return 1
	}
	return 0
}

// TestScenarioObjectives checks the imbalance scenario's branches by hand:
// at 0.1 s jobs 0 and 1 are in the system; moving job 1 ends it at
// 0.1 + 0.001 + 1, staying moves it at the next decision (job 2's arrival,
// 0.2 s), ending it 0.1 s later. Job 0 ends at 1 either way.
func TestScenarioObjectives(t *testing.T) {
	devices := []sim.Device{{Name: "a", Lanes: 1, Memory: 100, Speed: 1}, {Name: "b", Lanes: 1, Memory: 100, Speed: 1}}
	var jobs []sim.Job
	for i := range 6 {
		at := 0.1 * float64(i)
		jobs = append(jobs, sim.Job{ID: int64(i), Arrival: at, Deadline: at + 5, Batch: 1})
	}
	p, ok := firstDecision(t, source(jobs, devices, fixed{Work: []float64{1}}, onFirst{}, 0.001), Options{Horizon: 30, Objective: ObjectiveLatency})
	if !ok {
		t.Fatal("near tie")
	}
	wantMove := (1 - 0.1) + (0.1 + 0.001 + 1 - 0.1)
	wantStay := (1 - 0.1) + (0.2 + 0.001 + 1 - 0.1)
	if math.Abs(p.Move-wantMove) > 1e-12 || math.Abs(p.Stay-wantStay) > 1e-12 || p.Judged != 2 || p.Time != 0.1 || p.JobID != 1 {
		t.Errorf("point = move %v stay %v, %d judged, at %v, job %d; want move %v stay %v, 2 judged, at 0.1, job 1",
			p.Move, p.Stay, p.Judged, p.Time, p.JobID, wantMove, wantStay)
	}
	// The SLO objective: no deadline is missed either way, a tie...
	if _, ok := firstDecision(t, source(jobs, devices, fixed{Work: []float64{1}}, onFirst{}, 0.001), Options{Horizon: 30, Objective: ObjectiveSLO}); ok {
		t.Error("the SLO objective labels a decision that misses no deadline either way")
	}
	// ...until job 1 must end by 1.15 s: moving it now meets that, and
	// waiting for the next decision misses it.
	jobs[1].Deadline = 1.15
	p, ok = firstDecision(t, source(jobs, devices, fixed{Work: []float64{1}}, onFirst{}, 0.001), Options{Horizon: 30, Objective: ObjectiveSLO})
	if !ok || p.Move != 0 || p.Stay != 1 || !p.Migrate {
		t.Errorf("SLO objective: point %+v (labelled %v), want move 0, stay 1, migrate", p, ok)
	}
}

// byModel places jobs of model 0 on device 1 and the rest on device 0.
type byModel struct{}

func (byModel) Name() string { return "by-model" }
func (byModel) Place(j *sim.Job, _ *sim.State) int {
	if j.Model == 0 {
		return 1
	}
	return 0
}

// TestArrivals is a move that helps the jobs in the system at the decision
// and hurts those that arrive after it. Device a runs job 0 (10 s) from 0
// to 10; job 1 (3 s) arrives on a at 0.1 and waits, while b idles: the
// decision is about moving job 1 to b. At 0.2 three jobs of 0.1 s arrive
// on b. Moved, job 1 runs on b from 0.101 to 3.101 and the three wait
// behind it, ending at 3.201, 3.301 and 3.401. Left, the three run from
// 0.2 to 0.5, when b, idle, takes job 1, which ends at 3.501. Job 0 ends
// at 10 either way. The jobs present at the decision favour the move
// (job 1 ends 0.4 s sooner); counting the arrivals, staying saves them
// 2.7 s, and the label flips.
func TestArrivals(t *testing.T) {
	devices := []sim.Device{{Name: "a", Lanes: 1, Memory: 100, Speed: 1}, {Name: "b", Lanes: 1, Memory: 100, Speed: 1}}
	svc := fixed{Work: []float64{0.1, 3, 10}}
	jobs := []sim.Job{
		{ID: 0, Arrival: 0, Model: 2, Batch: 1, Deadline: 100},
		{ID: 1, Arrival: 0.1, Model: 1, Batch: 1, Deadline: 3.3},
		{ID: 2, Arrival: 0.2, Model: 0, Batch: 1, Deadline: 1.2},
		{ID: 3, Arrival: 0.2, Model: 0, Batch: 1, Deadline: 1.2},
		{ID: 4, Arrival: 0.2, Model: 0, Batch: 1, Deadline: 1.2},
	}
	src := source(jobs, devices, svc, byModel{}, 0.001)
	present := (10 - 0.1) // job 0, either way
	arrived := func(ends ...float64) float64 {
		s := 0.0
		for _, e := range ends {
			s += e - 0.2
		}
		return s
	}
	tests := []struct {
		name       string
		opts       Options
		move, stay float64
		judged     int32
		migrate    bool
	}{
		{"latency, present jobs", Options{Horizon: 30, Objective: ObjectiveLatency},
			present + (3.101 - 0.1), present + (3.501 - 0.1), 2, true},
		{"latency, with arrivals", Options{Horizon: 30, Objective: ObjectiveLatency, Arrivals: true},
			present + (3.101 - 0.1) + arrived(3.201, 3.301, 3.401), present + (3.501 - 0.1) + arrived(0.3, 0.4, 0.5), 5, false},
		// Job 1 must end by 3.3: moved, it does; the three arrivals must
		// end by 1.2: behind job 1, none does.
		{"slo, present jobs", Options{Horizon: 30, Objective: ObjectiveSLO}, 0, 1, 2, true},
		{"slo, with arrivals", Options{Horizon: 30, Objective: ObjectiveSLO, Arrivals: true}, 3, 1, 5, false},
		// A horizon of 1 s ends at 1.1: job 0 counts 1 s either way, job
		// 1 too, and the arrivals count to their ends or to 1.1.
		{"latency, arrivals, short horizon", Options{Horizon: 1, Objective: ObjectiveLatency, Arrivals: true},
			1 + 1 + arrived(1.1, 1.1, 1.1), 1 + 1 + arrived(0.3, 0.4, 0.5), 5, false},
		// Arrivals after the horizon are not judged: a horizon of 0.05 s
		// ends before they come, and job 1 is not done by it either way,
		// a tie.
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, ok := firstDecision(t, src, tt.opts)
			if !ok {
				t.Fatal("the decision is a near tie")
			}
			if p.Time != 0.1 || p.JobID != 1 || p.Judged != tt.judged {
				t.Errorf("decision about job %d at %v judging %d jobs, want job 1 at 0.1 judging %d", p.JobID, p.Time, p.Judged, tt.judged)
			}
			if math.Abs(p.Move-tt.move) > 1e-9 || math.Abs(p.Stay-tt.stay) > 1e-9 || p.Migrate != tt.migrate {
				t.Errorf("move %v, stay %v, migrate %v; want move %v, stay %v, migrate %v", p.Move, p.Stay, p.Migrate, tt.move, tt.stay, tt.migrate)
			}
			if p.Alternatives != nil {
				t.Errorf("alternatives %v, asked for none", p.Alternatives)
			}
		})
	}
	if _, ok := firstDecision(t, src, Options{Horizon: 0.05, Objective: ObjectiveLatency, Arrivals: true}); ok {
		t.Error("a horizon before the arrivals: not a tie")
	}
	// The same fork judged the configured way and, for the compared
	// sample (here every point), the other ways: each verdict is what
	// labelling that way alone gives.
	opts := Options{Decisions: 1, Compare: 1, Horizon: 30, Objective: ObjectiveLatency, Alternatives: []Judge{{Horizon: 30, Arrivals: true}, {Horizon: 1, Arrivals: true}, {Horizon: 0.05}}}
	p, ok := firstDecision(t, src, opts)
	if !ok || len(p.Alternatives) != len(opts.Alternatives) {
		t.Fatalf("point %+v (labelled %v), want %d alternatives", p, ok, len(opts.Alternatives))
	}
	for k, j := range opts.Alternatives {
		alone, ok := firstDecision(t, src, Options{Horizon: j.Horizon, Arrivals: j.Arrivals, Objective: ObjectiveLatency})
		got := p.Alternatives[k]
		if got.Tie == ok || ok && (got.Move != alone.Move || got.Stay != alone.Stay || got.Migrate != alone.Migrate || got.Judged != alone.Judged) {
			t.Errorf("alternative %+v: %+v; labelled alone: %+v (labelled %v)", j, got, alone, ok)
		}
	}
}

// TestBranchesMeet judges arrivals after the branches have met again. On
// two devices of the same speed, a runs job 0 (1.2 s) from 0; job 1
// (0.3 s) arrives on a at 0.1, and the decision is about moving it to b.
// Moved, it ends at 0.401 and the cluster is empty from 1.2, when job 0
// ends; left, it runs after job 0, from 1.2 to 1.5. Job 2 arrives at 2,
// when both branches are empty: it would run alike in both, so it is
// not judged, and the objectives are those of jobs 0 and 1. The move
// branch, empty from 1.2, is not run on to job 2's arrival while the
// other is still busy, so the moment both are empty is found.
func TestBranchesMeet(t *testing.T) {
	devices := []sim.Device{{Name: "a", Lanes: 1, Memory: 100, Speed: 1}, {Name: "b", Lanes: 1, Memory: 100, Speed: 1}}
	jobs := []sim.Job{
		{ID: 0, Arrival: 0, Model: 0, Batch: 1, Deadline: 100},
		{ID: 1, Arrival: 0.1, Model: 1, Batch: 1, Deadline: 100},
		{ID: 2, Arrival: 2, Model: 1, Batch: 1, Deadline: 100},
	}
	src := source(jobs, devices, fixed{Work: []float64{1.2, 0.3}}, onFirst{}, 0.001)
	move, stay := (1.2-0.1)+(0.401-0.1), (1.2-0.1)+(1.5-0.1)
	for _, arrivals := range []bool{false, true} {
		p, ok := firstDecision(t, src, Options{Horizon: 30, Arrivals: arrivals, Objective: ObjectiveLatency})
		if !ok || p.Judged != 2 || math.Abs(p.Move-move) > 1e-9 || math.Abs(p.Stay-stay) > 1e-9 || !p.Migrate {
			t.Errorf("arrivals %v: point %+v (labelled %v), want 2 judged, move %v, stay %v, migrate", arrivals, p, ok, move, stay)
		}
	}
}

// randomWorkload is n seeded jobs of two models, mixed classes and
// deadlines, at about rate jobs a second.
func randomWorkload(seed uint64, n int, rate float64) []sim.Job {
	r := rand.New(rand.NewPCG(seed, 7))
	jobs := make([]sim.Job, n)
	t := 0.0
	for i := range jobs {
		t += r.ExpFloat64() / rate
		jobs[i] = sim.Job{ID: int64(i), Arrival: t, Class: sim.Class(r.IntN(2)), Model: int32(r.IntN(2)),
			Batch: int32(1 + r.IntN(4)), Deadline: t + 0.2 + 2*r.Float64()}
	}
	return jobs
}

// randomSource is a workload that queues on the first of three devices
// and migrates often.
func randomSource(n int) Source {
	devices := []sim.Device{{Name: "a", Lanes: 2, Memory: 12, Speed: 1}, {Name: "b", Lanes: 1, Memory: 8, Speed: 2}, {Name: "c", Lanes: 2, Memory: 8, Speed: 0.5}}
	return source(randomWorkload(3, n, 60), devices, noisy{fixed{Work: []float64{0.01, 0.025}}}, byDeadline{}, 0.003)
}

// TestBranchesReplayFromScratch plays every labelled point's two branches
// again without forking: each branch is simulated from the segment's
// start to its end with a rule that follows the behaviour rule up to the
// point's decision, forces it, and follows the Threshold rule after, and
// its objective is computed from the records, under the configured
// judgement and under each alternative of the compared sample. Judging
// the jobs present at the decision, it must be the point's. Judging the
// arrivals too, the replay counts every one before the horizon, where the
// labeller stops once the branches meet again: the difference between
// the branches must be the point's, and the point's objectives no more
// than the replay's, less where the branches met before the horizon.
func TestBranchesReplayFromScratch(t *testing.T) {
	src := randomSource(2400)
	tests := []struct {
		name string
		opts Options
	}{
		{"present jobs", Options{Decisions: 150, Horizon: 2, Objective: ObjectiveLatency, Tie: 0.001, Explore: 0.2, Seed: 5,
			Compare: 30, Alternatives: []Judge{{Horizon: 1}, {Horizon: 2, Arrivals: true}, {Horizon: 4, Arrivals: true}}}},
		{"arrivals", Options{Decisions: 150, Horizon: 1, Arrivals: true, Objective: ObjectiveLatency, Tie: 0.001, Explore: 0.2, Seed: 5,
			Compare: 30, Alternatives: []Judge{{Horizon: 1}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			points, st, err := Run(context.Background(), src, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(points) != opts.Decisions || st.Probes < int64(len(points)) {
				t.Fatalf("Run = %d points from %d probes, want %d", len(points), st.Probes, opts.Decisions)
			}
			seen := map[bool]int{}
			compared, met := 0, 0
			for i, p := range points {
				if p.Alternatives != nil {
					compared++
				}
				if i >= 40 && p.Alternatives == nil {
					continue
				}
				seen[p.Migrate]++
				tr := segments(src, opts, p.Pass)[p.Segment]
				if err := tr.setup(); err != nil {
					t.Fatal(err)
				}
				judges := []Judge{{Horizon: opts.Horizon, Arrivals: opts.Arrivals}}
				want := [][2]float64{{p.Move, p.Stay}}
				for k, v := range p.Alternatives {
					judges = append(judges, opts.Alternatives[k])
					want = append(want, [2]float64{v.Move, v.Stay})
				}
				got := [2][]float64{replay(t, tr, p, true, judges), replay(t, tr, p, false, judges)}
				for k, j := range judges {
					move, stay := got[0][k], got[1][k]
					if tol := 1e-9 * max(1, move, stay); !j.Arrivals && (math.Abs(move-want[k][0]) > tol || math.Abs(stay-want[k][1]) > tol) ||
						j.Arrivals && (math.Abs((move-stay)-(want[k][0]-want[k][1])) > tol || want[k][0] > move+tol || want[k][1] > stay+tol) {
						t.Errorf("point %d (pass %d segment %d, job %d at %v), judged %+v: replayed move %v, stay %v; labelled move %v, stay %v",
							i, p.Pass, p.Segment, p.JobID, p.Time, j, move, stay, want[k][0], want[k][1])
					}
					if j.Arrivals && want[k][1] < stay-1e-6 {
						met++
					}
				}
			}
			if arrivals := opts.Arrivals || slices.ContainsFunc(opts.Alternatives, func(j Judge) bool { return j.Arrivals }); arrivals && met == 0 {
				t.Error("no branches met before the horizon: the stop is not exercised")
			}
			if seen[true] == 0 || seen[false] == 0 {
				t.Errorf("the replayed points are of one label: %v", seen)
			}
			// About Compare points are compared: a binomial draw, here
			// well inside four standard deviations.
			if sd := math.Sqrt(float64(opts.Compare)); math.Abs(float64(compared-opts.Compare)) > 4*sd {
				t.Errorf("%d points compared, want about %d", compared, opts.Compare)
			}
		})
	}
}

// replay simulates tr's segment from its start to its end, taking or
// refusing the decision about p.JobID at p.Time, and returns its
// objective under each judge: its terms summed over the jobs in the
// system at the decision and, for a judge that counts arrivals, the jobs
// arriving after it and no later than the horizon.
func replay(t *testing.T, tr *trajectory, p Point, take bool, judges []Judge) []float64 {
	t.Helper()
	type job struct{ arrival, deadline float64 }
	var (
		fired   bool
		in      = map[int64]job{} // arrived, not done
		present = map[int64]bool{}
		ends    = map[int64]float64{}
		cfg     = tr.cfg
		at      = p.Time
	)
	cfg.Migration.Decide = migratorFunc(func(f *sim.MigrationFeatures) bool {
		switch {
		case fired:
			return tr.rule.Migrate(f)
		case f.Now == at && f.Job.ID == p.JobID:
			fired = true
			for id, j := range in {
				if j.arrival <= f.Now {
					present[id] = true
				}
			}
			return take
		}
		return tr.behaviour.Migrate(f)
	})
	i := 0
	m, err := sim.New(cfg, func() (*sim.Job, bool) {
		if i == len(tr.jobs) {
			return nil, false
		}
		j := tr.jobs[i]
		i++
		in[j.ID] = job{j.Arrival, j.Deadline}
		return &j, true
	}, func(r *sim.Record) error {
		delete(in, r.Job.ID)
		ends[r.Job.ID] = r.End
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Run(); err != nil {
		t.Fatal(err)
	}
	if !fired {
		t.Fatalf("the replay never reached the decision about job %d at %v", p.JobID, at)
	}
	out := make([]float64, len(judges))
	for k, jd := range judges {
		horizon := at + jd.Horizon
		for _, j := range tr.jobs {
			if !present[j.ID] && !(jd.Arrivals && j.Arrival > at && j.Arrival <= horizon) {
				continue
			}
			end := min(ends[j.ID], horizon)
			switch {
			case tr.opts.Objective == ObjectiveLatency:
				out[k] += end - max(at, j.Arrival)
			case end > j.Deadline:
				out[k]++
			}
		}
	}
	return out
}

type migratorFunc func(*sim.MigrationFeatures) bool

func (f migratorFunc) Migrate(m *sim.MigrationFeatures) bool { return f(m) }

// TestDeterministic labels the same source on one core and on two: the
// points must be the same, bit for bit, their judgements with arrivals
// and the alternatives too, and another seed must give other points.
func TestDeterministic(t *testing.T) {
	src := randomSource(1600)
	opts := Options{Decisions: 120, Horizon: 2, Arrivals: true, Objective: ObjectiveLatency, Tie: 0.001, Explore: 0.1, Seed: 9,
		Compare: 40, Alternatives: []Judge{{Horizon: 2}, {Horizon: 4, Arrivals: true}}}
	run := func(procs int, seed uint64) []Point {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		o := opts
		o.Seed = seed
		p, _, err := Run(context.Background(), src, o)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := run(1, 9), run(2, 9)
	if !reflect.DeepEqual(a, b) {
		t.Error("the points on one core differ from those on two")
	}
	if c := run(2, 10); reflect.DeepEqual(a, c) {
		t.Error("another seed gives the same points")
	}
}

// TestPassesAndBlocks asks for more points than one pass of a short
// workload has decisions: the labeller runs it again from other draws,
// and every point's block lies in its segment.
func TestPassesAndBlocks(t *testing.T) {
	src := randomSource(800)
	points, st, err := Run(context.Background(), src, Options{Decisions: 900, Horizon: 1, Objective: ObjectiveLatency, Tie: 0.001, Explore: 0.1, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if st.Passes < 2 {
		t.Errorf("%d passes for %d decisions a pass, want more", st.Passes, st.Decisions)
	}
	if int64(len(points)) != min(900, st.Probes-st.Ties) {
		t.Errorf("%d points from %d probes and %d ties, want min(900, the rest)", len(points), st.Probes, st.Ties)
	}
	passes := map[int32]bool{}
	for _, p := range points {
		passes[p.Pass] = true
		if p.Block/BlocksPerSegment != p.Segment || p.Block < 0 {
			t.Fatalf("point of segment %d in block %d", p.Segment, p.Block)
		}
	}
	if len(passes) < 2 {
		t.Errorf("points from passes %v, want several", passes)
	}
}

// TestRejects names each bad option.
func TestRejects(t *testing.T) {
	src := randomSource(100)
	good := Options{Decisions: 10, Horizon: 1, Objective: ObjectiveLatency}
	tests := []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"decisions", func(o *Options) { o.Decisions = 0 }, "want at least 1 decision"},
		{"horizon", func(o *Options) { o.Horizon = math.Inf(1) }, "positive horizon"},
		{"objective", func(o *Options) { o.Objective = "fast" }, `unknown objective "fast"`},
		{"tie", func(o *Options) { o.Tie = 1 }, "tie 1"},
		{"compare", func(o *Options) { o.Compare = -1 }, "sample of at least 0 points to compare, got -1"},
		{"alternative", func(o *Options) { o.Alternatives = []Judge{{Horizon: 1}, {Horizon: 0, Arrivals: true}} }, "alternative 2: want a positive horizon, got 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := good
			tt.edit(&o)
			if _, _, err := Run(context.Background(), src, o); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Run = %v, want an error containing %q", err, tt.want)
			}
		})
	}
	if _, _, err := Run(context.Background(), Source{SimConfig: src.SimConfig}, good); err == nil || !strings.Contains(err.Error(), "no jobs") {
		t.Errorf("Run without jobs = %v", err)
	}
}

// BenchmarkRollouts measures decisions played out both ways a second on
// a workload that queues and migrates often.
func BenchmarkRollouts(b *testing.B) {
	src := randomSource(20000)
	opts := Options{Decisions: 2000, Horizon: 2, Objective: ObjectiveLatency, Tie: 0.001, Explore: 0.1, Seed: 1}
	var probes int64
	for b.Loop() {
		_, st, err := Run(context.Background(), src, opts)
		if err != nil {
			b.Fatal(err)
		}
		probes += st.Probes
	}
	b.ReportMetric(float64(probes)/b.Elapsed().Seconds(), "rollouts/s")
}

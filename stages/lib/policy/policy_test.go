package policy

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/sim"
)

// fixed is a Service with exact, hand-friendly times: model m takes
// secs[m] × batch seconds, holds mem[m] memory, and k busy lanes each run
// slow[k] times slower (1 if absent).
type fixed struct {
	secs, mem []float64
	slow      map[int]float64
}

func (f fixed) Time(d int, m, p, b int32, u float64) float64 { return f.secs[m] * float64(b) }
func (f fixed) Predict(d int, m, p, b int32) float64         { return f.secs[m] * float64(b) }
func (f fixed) Memory(m, p, b int32) float64                 { return f.mem[m] }
func (f fixed) Contention(d, k int) float64 {
	if s, ok := f.slow[k]; ok {
		return s
	}
	return 1
}

// job is a scenario row: id, arrival, model, class, deadline.
type job struct {
	id       int64
	at       float64
	model    int32
	class    sim.Class
	deadline float64
}

// want is a job's expected device, start and end.
type want struct {
	dev        int32
	start, end float64
}

func simulate(t *testing.T, p sim.Policy, devs []sim.Device, svc sim.Service, jobs []job) map[int64]*sim.Record {
	t.Helper()
	return simulatePlaced(t, p, nil, devs, svc, jobs)
}

// simulatePlaced simulates p with its jobs placed by place (p's own
// placement where nil).
func simulatePlaced(t *testing.T, p sim.Policy, place sim.Placer, devs []sim.Device, svc sim.Service, jobs []job) map[int64]*sim.Record {
	t.Helper()
	i := 0
	next := func() (*sim.Job, bool) {
		if i == len(jobs) {
			return nil, false
		}
		j := jobs[i]
		i++
		return &sim.Job{ID: j.id, Arrival: j.at, Model: j.model, Class: j.class, Deadline: j.deadline, Batch: 1}, true
	}
	got := map[int64]*sim.Record{}
	_, err := sim.Run(sim.Config{Devices: devs, Service: svc, Policy: p, Placement: place, Seed: 1}, next, func(r *sim.Record) error {
		if got[r.Job.ID] != nil {
			return fmt.Errorf("job %d recorded twice", r.Job.ID)
		}
		c := *r // the record is the simulator's until emit returns
		got[r.Job.ID] = &c
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func check(t *testing.T, got map[int64]*sim.Record, want map[int64]want) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d jobs recorded, want %d", len(got), len(want))
	}
	for id, w := range want {
		r := got[id]
		if r == nil {
			t.Errorf("job %d: no record", id)
			continue
		}
		if r.Device != w.dev || math.Abs(r.Start-w.start) > 1e-9 || math.Abs(r.End-w.end) > 1e-9 {
			t.Errorf("job %d: device %d [%g, %g], want device %d [%g, %g]", id, r.Device, r.Start, r.End, w.dev, w.start, w.end)
		}
	}
}

// Scenario A: device 0 runs at speed 1, device 1 at speed 2, one lane
// each. Model 0 takes 1 s, model 1 takes 2 s (on the speed-1 device).
var (
	devsA = []sim.Device{{Name: "slow", Lanes: 1, Memory: 100, Speed: 1}, {Name: "fast", Lanes: 1, Memory: 100, Speed: 2}}
	svcA  = fixed{secs: []float64{1, 2}, mem: []float64{1, 1}}
	jobsA = []job{
		{1, 0, 0, sim.Interactive, 0.5},
		{2, 0, 1, sim.Batch, 10},
		{3, 0.1, 0, sim.Interactive, 1},
		{4, 0.2, 1, sim.Batch, 20},
		{5, 0.3, 0, sim.Interactive, 0.9},
		{6, 3, 0, sim.Interactive, 4},
	}
)

func TestHandComputedScenarioA(t *testing.T) {
	tests := []struct {
		policy string
		want   map[int64]want
	}{
		// fifo@backlog: backlogs tie at 0.1 s (0.9 each) and 0.3 s (1.7
		// each): the lower index wins. Job 6 arrives as job 5 ends
		// (completions first), so both devices are free and device 0,
		// the slow one, takes it.
		{"fifo@backlog", map[int64]want{1: {0, 0, 1}, 2: {1, 0, 1}, 3: {0, 1, 2}, 4: {1, 1, 2}, 5: {0, 2, 3}, 6: {0, 3, 4}}},
		// fifo places as greedy does (no job here waits for memory, so
		// the strict order changes nothing).
		{"fifo", map[int64]want{1: {1, 0, 0.5}, 2: {1, 0.5, 1.5}, 3: {0, 0.1, 1.1}, 4: {1, 1.5, 2.5}, 5: {0, 1.1, 2.1}, 6: {1, 3, 3.5}}},
		// round_robin: 0, 1, 0, 1, 0, 1 whatever the load.
		{"round_robin", map[int64]want{1: {0, 0, 1}, 2: {1, 0, 1}, 3: {0, 1, 2}, 4: {1, 1, 2}, 5: {0, 2, 3}, 6: {1, 3, 3.5}}},
		// edf@round_robin: round_robin's devices, edf's order: on device
		// 0, job 5 (deadline 0.9) overtakes job 3 (deadline 1).
		{"edf@round_robin", map[int64]want{1: {0, 0, 1}, 2: {1, 0, 1}, 3: {0, 2, 3}, 4: {1, 1, 2}, 5: {0, 1, 2}, 6: {1, 3, 3.5}}},
		// greedy: job 1 finishes first on the fast device (0.5 < 1); job 2
		// there at 0.5+1 = 1.5 < 2; job 3 on device 0 (1 < 0.4+1+0.5);
		// job 4 on device 1 (0.3+1+1 = 2.3 < 0.9+2); job 5 on device 0
		// (0.8+1 = 1.8 < 0.2+2+0.5).
		{"greedy", map[int64]want{1: {1, 0, 0.5}, 2: {1, 0.5, 1.5}, 3: {0, 0.1, 1.1}, 4: {1, 1.5, 2.5}, 5: {0, 1.1, 2.1}, 6: {1, 3, 3.5}}},
	}
	for _, tt := range tests {
		t.Run(tt.policy, func(t *testing.T) {
			check(t, simulateSpec(t, tt.policy, devsA, svcA, jobsA), tt.want)
		})
	}
}

// simulateSpec simulates a policy spec's policy and placement.
func simulateSpec(t *testing.T, spec string, devs []sim.Device, svc sim.Service, jobs []job) map[int64]*sim.Record {
	t.Helper()
	sp, err := ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Seed: 1}
	p, err := New(sp.Name, o)
	if err != nil {
		t.Fatal(err)
	}
	return simulatePlaced(t, p, sp.Placer(o), devs, svc, jobs)
}

// TestEarliestFinishTies: job 1 runs on the fast device (0.5 s against
// 1 s); job 2, arriving with it, would finish at 1 s on either device (the
// slow one idle, the fast one after job 1), and goes to the fast one,
// which runs it in half the time: a tie never falls to the first device
// by its place in the list. Placed by backlog alone, job 2 goes to the
// idle slow device.
func TestEarliestFinishTies(t *testing.T) {
	jobs := []job{{1, 0, 0, sim.Interactive, 9}, {2, 0, 0, sim.Interactive, 9}}
	fast := map[int64]want{1: {1, 0, 0.5}, 2: {1, 0.5, 1}}
	for _, tt := range []struct {
		spec string
		want map[int64]want
	}{
		{"fifo", fast},
		{"greedy", fast},
		{"edf", fast},
		{"fifo@backlog", map[int64]want{1: {0, 0, 1}, 2: {1, 0, 0.5}}},
	} {
		t.Run(tt.spec, func(t *testing.T) { check(t, simulateSpec(t, tt.spec, devsA, svcA, jobs), tt.want) })
	}
}

// Scenario B: two equal single-lane devices; edf reorders queues where
// greedy (same placement) keeps arrival order.
func TestHandComputedScenarioB(t *testing.T) {
	devs := []sim.Device{{Name: "a", Lanes: 1, Memory: 100, Speed: 1}, {Name: "b", Lanes: 1, Memory: 100, Speed: 1}}
	svc := fixed{secs: []float64{1, 2}, mem: []float64{1, 1}}
	jobs := []job{
		{1, 0, 1, sim.Batch, 100},
		{2, 0, 1, sim.Batch, 100},
		{3, 0.1, 1, sim.Batch, 50},
		{4, 0.2, 0, sim.Interactive, 100},
		{5, 0.3, 1, sim.Batch, 10},
		{6, 0.4, 0, sim.Interactive, 200},
	}
	// Placement (both policies): 1→a, 2→b, 3→a (3.9 tie), 4→b (2.8 < 4.8),
	// 5→b (4.7 < 5.7), 6→a (4.6 < 5.6). At 2 s device a holds [3 batch,
	// 6 interactive] and device b [4 interactive, 5 batch].
	tests := []struct {
		policy string
		want   map[int64]want
	}{
		{"greedy", map[int64]want{1: {0, 0, 2}, 2: {1, 0, 2}, 3: {0, 2, 4}, 4: {1, 2, 3}, 5: {1, 3, 5}, 6: {0, 4, 5}}},
		// edf: interactive 6 overtakes batch 3 on device a.
		{"edf", map[int64]want{1: {0, 0, 2}, 2: {1, 0, 2}, 3: {0, 3, 5}, 4: {1, 2, 3}, 5: {1, 3, 5}, 6: {0, 2, 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.policy, func(t *testing.T) {
			p, _ := New(tt.policy, Options{Seed: 1})
			check(t, simulate(t, p, devs, svc, jobs), tt.want)
		})
	}
}

// TestRandomScenario checks random against the placements its seeded
// generator makes, with times worked out for those placements.
func TestRandomScenario(t *testing.T) {
	p, _ := New("random", Options{Seed: 42})
	got := simulate(t, p, devsA, svcA, jobsA)
	// Replay the generator to learn the placements, then compute the
	// schedule by hand-rules: per-device FIFO, one lane.
	replay := NewRandom(42).(*Random)
	free := []float64{0, 0}
	speed := []float64{1, 2}
	want := map[int64]want{}
	for _, j := range jobsA {
		d := replay.rng.IntN(2)
		start := math.Max(j.at, free[d])
		end := start + svcA.secs[j.model]/speed[d]
		free[d] = end
		want[j.id] = struct {
			dev        int32
			start, end float64
		}{int32(d), start, end}
	}
	check(t, got, want)
	again := simulate(t, NewRandom(42), devsA, svcA, jobsA)
	for id, r := range got {
		if again[id].Device != r.Device {
			t.Errorf("job %d: device %d then %d with the same seed", id, r.Device, again[id].Device)
		}
	}
}

// TestContentionRetimesRunningJobs: one device, two lanes, each twice as
// slow while both are busy. A (2 s) runs alone until B (1 s) starts at 0.5
// with A 1.5 s from done; both then progress at half speed: B ends at 2.5
// (A has 0.5 left). C (1 s) takes B's lane; at 3.5 A ends and C, 0.5 done,
// finishes alone at full speed at 4.
func TestContentionRetimesRunningJobs(t *testing.T) {
	devs := []sim.Device{{Name: "cpu", Lanes: 2, Memory: 100, Speed: 1}}
	svc := fixed{secs: []float64{2, 1}, mem: []float64{1, 1}, slow: map[int]float64{2: 2}}
	jobs := []job{{1, 0, 0, sim.Batch, 9}, {2, 0.5, 1, sim.Batch, 9}, {3, 1, 1, sim.Batch, 9}}
	check(t, simulate(t, FIFO{}, devs, svc, jobs), map[int64]want{1: {0, 0, 3.5}, 2: {0, 0.5, 2.5}, 3: {0, 2.5, 4}})
}

// TestMemoryAdmission: one device, two lanes, memory 10. Job 1 (6) runs;
// job 2 (6) cannot fit beside it, job 3 (3) can. fifo makes job 3 wait
// behind job 2; greedy lets it overtake. Job 4 needs 20 and fits nowhere.
func TestMemoryAdmission(t *testing.T) {
	devs := []sim.Device{{Name: "gpu", Lanes: 2, Memory: 10, Speed: 1}}
	svc := fixed{secs: []float64{2, 1, 1}, mem: []float64{6, 3, 20}}
	jobs := []job{{1, 0, 0, sim.Batch, 9}, {2, 0.1, 0, sim.Batch, 9}, {3, 0.2, 1, sim.Batch, 9}, {4, 0.3, 2, sim.Batch, 9}}
	for _, tt := range []struct {
		policy string
		want   map[int64]want
	}{
		// fifo: 2 starts when 1 ends at 2; 3 then fits beside it.
		{"fifo", map[int64]want{1: {0, 0, 2}, 2: {0, 2, 4}, 3: {0, 2, 3}}},
		// greedy: 3 overtakes at 0.2; 2 still waits for 1.
		{"greedy", map[int64]want{1: {0, 0, 2}, 2: {0, 2, 4}, 3: {0, 0.2, 1.2}}},
	} {
		t.Run(tt.policy, func(t *testing.T) {
			p, _ := New(tt.policy, Options{Seed: 1})
			got := simulate(t, p, devs, svc, jobs)
			r4 := got[4]
			if r4 == nil || !r4.Rejected() || r4.Reason == "" {
				t.Errorf("job 4 (needs 20 of 10) = %+v, want rejected with a reason", r4)
			}
			delete(got, 4)
			check(t, got, tt.want)
		})
	}
}

func TestRegistry(t *testing.T) {
	for _, name := range Names() {
		p, err := New(name, Options{Seed: 1})
		if err != nil || p.Name() != name {
			t.Errorf("New(%q) = %v, %v", name, p, err)
		}
	}
	if _, err := New("sjf", Options{Seed: 1}); err == nil {
		t.Error("New(sjf) succeeded")
	}
}

// TestEDFKeyAgreesWithLess: the queue orders by Key; Less must say the same.
func TestEDFKeyAgreesWithLess(t *testing.T) {
	jobs := []*sim.Job{
		{Class: sim.Interactive, Deadline: 5}, {Class: sim.Interactive, Deadline: 1},
		{Class: sim.Batch, Deadline: 0.5}, {Class: sim.Batch, Deadline: 9},
	}
	var e EDF
	for _, a := range jobs {
		for _, b := range jobs {
			ka, kb := e.Key(a), e.Key(b)
			keyLess := ka.Major < kb.Major || ka.Major == kb.Major && ka.Minor < kb.Minor
			if keyLess != e.Less(a, b) {
				t.Errorf("Less(%+v, %+v) = %v, keys say %v", a, b, e.Less(a, b), keyLess)
			}
		}
	}
}

func TestSpecRoundTrips(t *testing.T) {
	for _, in := range []string{"fifo", "edf+batch", "greedy+split+migrate", "dynamic+migrate", "edf+batch+split+migrate",
		"fifo@backlog", "edf@round_robin+batch", "greedy@random+split+migrate", "learned@backlog",
		"learned~threshold", "learned@backlog+batch+split~free"} {
		sp, err := ParseSpec(in)
		if err != nil || sp.String() != in {
			t.Errorf("ParseSpec(%q) = %+v, %v; written back %q", in, sp, err, sp.String())
		}
	}
	if sp, _ := ParseSpec("batch_aware"); !sp.Batch {
		t.Errorf("batch_aware does not batch: %+v", sp)
	}
}

func TestSpecErrors(t *testing.T) {
	for _, tt := range []struct{ spec, want string }{
		{"fifo@finish", `"fifo@finish": unknown placement "finish"; the placements are backlog, random, round_robin`},
		{"fifo@", `"fifo@": unknown placement ""`},
		{"round_robin@backlog", `"round_robin@backlog": round_robin is itself a placement; only the policies that place by predicted earliest finish take @placement (batch_aware, dynamic, edf, fifo, greedy, learned)`},
		{"fifo+backlog", `"fifo+backlog": unknown option "backlog"`},
		{"fifo+batch@backlog", `"fifo+batch@backlog": unknown option "batch@backlog"`},
		{"lifo@backlog", `unknown policy "lifo"`},
		{"edf~threshold", `"edf~threshold": only a learned policy has ablations (~threshold, ~free)`},
		{"learned~network", `"learned~network": unknown ablation "network"; the ablations are threshold, free`},
		{"learned+migrate~free", `"learned+migrate~free": learned migrates by its network; drop +migrate`},
	} {
		_, err := ParseSpec(tt.spec)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseSpec(%q) = %v, want an error containing %q", tt.spec, err, tt.want)
		}
	}
}

// TestPredicts runs each policy that claims to predict nothing with a
// predictor twenty times too slow, and each that claims to predict with
// it too: the former must run exactly as with the service's own means,
// and the latter must not, on a workload where predictions matter.
func TestPredicts(t *testing.T) {
	jobs := randomWorkload(5, 1500)
	names := Names()
	for _, p := range Placements() {
		names = append(names, "fifo@"+p, "edf@"+p, "greedy@"+p)
	}
	for _, name := range names {
		sp, err := ParseSpec(name)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(name, func(t *testing.T) {
			exact := runAll(t, sp, jobs)
			cfg := specConfig(t, sp)
			cfg.Predictor = skewed{invSvc}
			ends := endsOf(t, cfg, jobs)
			same := len(ends) == len(exact.recs)
			for k := 0; same && k < len(ends); k++ {
				same = ends[k] == exact.recs[k].End
			}
			if same == sp.Predicts() {
				t.Errorf("Predicts() = %v, but with skewed predictions the run is the same: %v", sp.Predicts(), same)
			}
		})
	}
}

// endsOf runs cfg on copies of jobs and returns each record's end, in
// the order the records come.
func endsOf(t *testing.T, cfg sim.Config, jobs []*sim.Job) []float64 {
	t.Helper()
	var ends []float64
	i := 0
	if _, err := sim.Run(cfg, func() (*sim.Job, bool) {
		if i == len(jobs) {
			return nil, false
		}
		c := *jobs[i]
		i++
		return &c, true
	}, func(r *sim.Record) error { ends = append(ends, r.End); return nil }); err != nil {
		t.Fatal(err)
	}
	return ends
}

// skewed predicts model 0 twenty times slower than the service does.
type skewed struct{ svc sim.Service }

func (s skewed) Predict(d int, m, p, b int32) float64 {
	v := s.svc.Predict(d, m, p, b)
	if m == 0 {
		v *= 20
	}
	return v
}

// TestReads changes each setting in turn and configures every spec with
// it (Configure, and New for the policy): what the simulator is given
// changes exactly where Reads says the spec reads the setting, so that a
// key made of what it reads is neither too wide nor too narrow.
func TestReads(t *testing.T) {
	base := Options{Seed: 7, Weights: DefaultWeights()}
	changes := []struct {
		name string
		read func(Reads) bool
		set  func(*Settings, *Options)
	}{
		{"Batching", func(r Reads) bool { return r.Batching }, func(s *Settings, _ *Options) { s.Batching = sim.Batching{MaxBatch: 9, Window: 0.05} }},
		{"Split", func(r Reads) bool { return r.Split }, func(s *Settings, _ *Options) { s.Split = sim.Split{MinBatch: 5} }},
		{"MigrationCost", func(r Reads) bool { return r.MigrationCost }, func(s *Settings, _ *Options) { s.MigrationCost = 0.5 }},
		{"MinGain", func(r Reads) bool { return r.MinGain }, func(s *Settings, _ *Options) { s.MinGain = 0.3 }},
		{"Learned", func(r Reads) bool { return r.Learned }, func(s *Settings, _ *Options) {
			s.Learned = func() (sim.Migrator, error) { return Threshold{MinGain: 7}, nil }
		}},
		{"Serving", func(r Reads) bool { return r.Serving }, func(s *Settings, _ *Options) {
			s.Serving = Serving{Latency: func(n int, u float64) float64 { return 0.5 * float64(n) * (1 + u) }, Batch: 2, Window: 0.1}
		}},
		{"Weights", func(r Reads) bool { return r.Weights }, func(_ *Settings, o *Options) { o.Weights.Urgency = 9 }},
	}
	// configured is what the simulator is given: the policy, and the
	// options written out, a decision's latency by its value.
	configured := func(sp Spec, st Settings, o Options) (sim.Policy, string) {
		p, err := New(sp.Name, o)
		if err != nil {
			t.Fatal(err)
		}
		cfg := sim.Config{Policy: p}
		if err := sp.Configure(&cfg, st); err != nil {
			t.Fatal(err)
		}
		m := cfg.Migration
		latency := "none"
		if m.Latency != nil {
			latency = fmt.Sprint(m.Latency(1, 0.5))
		}
		return cfg.Policy, fmt.Sprintf("batching %+v split %+v decide %#v cost %v latency %s batch %d window %v",
			cfg.Batching, cfg.Split, m.Decide, m.Cost, latency, m.Batch, m.Window)
	}
	for _, sp := range specs() {
		wasPolicy, was := configured(sp, invSettings, base)
		for _, c := range changes {
			st, o := invSettings, base
			c.set(&st, &o)
			p, now := configured(sp, st, o)
			if changed := now != was || !reflect.DeepEqual(p, wasPolicy); changed != c.read(sp.Reads()) {
				t.Errorf("%s: changing %s changes its configuration: %v; Reads() = %+v", sp, c.name, changed, sp.Reads())
			}
		}
	}
}

// TestAblationsChangeOneThing: each ablation of the learned policy is the
// learned policy with one thing changed. With the network standing in as
// the Threshold rule, learned and learned~threshold run alike, job for
// job; with answers that cost nothing, learned and learned~free do; and
// with answers that take time, learned~free runs otherwise, and so does
// edf+migrate, which asks its rule at once and stops at the first no.
func TestAblationsChangeOneThing(t *testing.T) {
	jobs := randomWorkload(11, 3000) // light: devices fall idle, and decisions are frequent
	st := invSettings
	st.MinGain = 0.004
	st.Learned = func() (sim.Migrator, error) { return Threshold{MinGain: st.MinGain}, nil }
	free := st
	free.Serving.Latency = func(int, float64) float64 { return 0 }
	ends := func(spec string, st Settings) []float64 {
		t.Helper()
		sp, err := ParseSpec(spec)
		if err != nil {
			t.Fatal(err)
		}
		cfg := specConfig(t, sp)
		cfg.Migration = sim.Migration{}
		if err := sp.Configure(&cfg, st); err != nil {
			t.Fatal(err)
		}
		return endsOf(t, cfg, jobs)
	}
	for _, tt := range []struct {
		a, b     string
		stA, stB Settings
		same     bool
		what     string
	}{
		{"learned", "learned~threshold", st, st, true, "the network is the Threshold rule"},
		{"learned", "learned~free", free, st, true, "answers cost nothing either way"},
		{"learned", "learned~free", st, st, false, "answers take time"},
		{"learned~threshold", "edf+migrate", st, st, false, "edf+migrate asks at once and stops at its first no"},
	} {
		a, b := ends(tt.a, tt.stA), ends(tt.b, tt.stB)
		if same := slices.Equal(a, b); same != tt.same {
			t.Errorf("%s against %s (%s): same runs %v, want %v", tt.a, tt.b, tt.what, same, tt.same)
		}
	}
}

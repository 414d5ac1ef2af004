package sim

import (
	"math"
	"testing"
)

// TestVector checks each feature's place and value on features built by
// hand, with values distinct enough that a swap shows.
func TestVector(t *testing.T) {
	f := MigrationFeatures{
		Job:  &Job{ID: 7, Arrival: 1, Deadline: 12.5, Class: Interactive},
		From: 2, To: 0, Now: 10,
		FromBusy: 0.75, ToBusy: 0.5, FromQueued: 3, FromBacklog: 4.5, ToBacklog: 0.25,
		FromWait: 1.5, PredictFrom: 2, PredictTo: 0.5, Cost: 0.125,
	}
	want := map[string]float32{
		"from_busy": 0.75, "to_busy": 0.5, "from_queued": 3, "from_backlog_s": 4.5, "to_backlog_s": 0.25,
		"from_wait_s": 1.5, "predict_from_s": 2, "move_finish_s": 0.625, "slack_s": 2.5, "interactive": 1,
	}
	var v [NumFeatures]float32
	f.Vector(&v)
	for i, name := range FeatureNames {
		if w, ok := want[name]; !ok || v[i] != w {
			t.Errorf("feature %d (%s) = %v, want %v (known: %v)", i, name, v[i], w, ok)
		}
	}
	if len(want) != NumFeatures {
		t.Errorf("%d features checked, want %d", len(want), NumFeatures)
	}
	f.Job.Class, f.Now = Batch, 13
	f.Vector(&v)
	if v[8] != -0.5 || v[9] != 0 {
		t.Errorf("a late batch job: slack_s %v, interactive %v; want -0.5 and 0", v[8], v[9])
	}
}

// stateWatcher is a Migrator that checks, at each decision, the features
// against the State they describe, and moves every job.
type stateWatcher struct {
	t         *testing.T
	m         *Sim
	cost      float64
	decisions int
}

func (w *stateWatcher) Migrate(f *MigrationFeatures) bool {
	w.decisions++
	s := w.m.State()
	from, to, j := f.From, f.To, f.Job
	var v [NumFeatures]float32
	f.Vector(&v)
	interactive := float32(0)
	if j.Class == Interactive {
		interactive = 1
	}
	want := [NumFeatures]float32{
		float32(float64(s.Busy(from)) / float64(s.Device(from).Lanes)),
		float32(float64(s.Busy(to)) / float64(s.Device(to).Lanes)),
		float32(s.Queued(from)),
		float32(s.Backlog(from)),
		float32(s.Backlog(to)),
		v[5], // the State does not show when lanes free: checked below
		float32(s.Predict(from, j)),
		float32(w.cost + s.Predict(to, j)),
		float32(j.Deadline - s.Now()),
		interactive,
	}
	if f.Now != s.Now() || v != want {
		w.t.Errorf("decision %d at %v (the state at %v): features %v, the state says %v", w.decisions, f.Now, s.Now(), v, want)
	}
	idle := s.Busy(from) < s.Device(from).Lanes
	if wait := v[5]; wait < 0 || idle && wait != 0 || math.IsInf(float64(wait), 0) {
		w.t.Errorf("decision %d: from_wait_s %v with %d of %d lanes busy", w.decisions, wait, s.Busy(from), s.Device(from).Lanes)
	}
	return true
}

// TestFeaturesMatchTheState runs a simulation that moves jobs and checks
// every decision's features against the State the Migrator sees.
func TestFeaturesMatchTheState(t *testing.T) {
	two := []Device{{Name: "a", Lanes: 2, Memory: 6, Speed: 1}, {Name: "b", Lanes: 1, Memory: 8, Speed: 2}}
	w := &stateWatcher{t: t, cost: 0.005}
	cfg := Config{Devices: two, Service: jitter{Fixed: 0.01, PerSample: 0.02}, Policy: byDeadline{}, Seed: 9,
		Migration: Migration{Decide: w, Cost: w.cost}}
	m, err := New(cfg, (&source{jobs: forkWorkload(2, 2000)}).next, func(*Record) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	w.m = m
	st, err := m.Run()
	if err != nil {
		t.Fatal(err)
	}
	if w.decisions < 100 || st.Migrations != int64(w.decisions) {
		t.Errorf("%d decisions, %d moves; want over 100, all moved", w.decisions, st.Migrations)
	}
}

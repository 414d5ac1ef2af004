package sim

import (
	"container/heap"
	"math"
	"strings"
	"testing"
)

// calm is a Service whose lanes never slow each other down.
type calm struct{ jitter }

func (calm) Contention(d, k int) float64 { return 1 }

// serviceTimes times each batch as a simulation of svc would (its lanes
// never slowing each other): a Replay with it must give exactly the
// simulation's records.
func serviceTimes(svc Service, devs []Device, seed uint64) func(d, lane int, jobs []*Job, samples int32) (float64, error) {
	return func(d, lane int, jobs []*Job, samples int32) (float64, error) {
		h := jobs[0]
		part := -1
		if h.split != nil {
			part = d
		}
		return svc.Time(d, h.Model, h.Precision, samples, Variate(seed, h.ID, part)) / devs[d].Speed, nil
	}
}

// TestMachineReplaysTheSimulation runs the same jobs simulated and on an
// machine that takes the simulation's times: the records must be the
// same, micro-batches, splits, migrations and decisions that take time
// included, so the policies decide the same way on either clock.
func TestMachineReplaysTheSimulation(t *testing.T) {
	two := []Device{{Name: "a", Lanes: 2, Memory: 6, Speed: 1}, {Name: "b", Lanes: 2, Memory: 8, Speed: 2}}
	tests := []struct {
		name    string
		policy  Policy
		latency float64
	}{
		{"fifo", halves{}, 0},
		{"ranked", byDeadline{}, 0},
		{"deciding", byDeadline{}, 0.003},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := calm{jitter{Fixed: 0.01, PerSample: 0.02}}
			cfg := Config{Devices: two, Service: svc, Policy: tt.policy, Seed: 9,
				Batching: Batching{MaxBatch: 4, Window: 0.01}, Split: Split{MinBatch: 3}, Migration: Migration{Decide: gainOver(0), Cost: 0.005}}
			if tt.latency > 0 {
				cfg.Migration.Latency = func(n int, _ float64) float64 { return tt.latency * float64(n) }
				cfg.Migration.Batch, cfg.Migration.Window = 3, 0.002
			}
			jobs := forkWorkload(1, 2000)
			want := collect(t, cfg, jobs)
			x := &Replay{Time: serviceTimes(svc, two, cfg.Seed)}
			cfg.Machine = x
			got := collect(t, cfg, jobs)
			if d := diff(got, want); d != "" {
				t.Fatal(d)
			}
			if x.Started() == 0 || x.Running() != 0 {
				t.Errorf("the machine started %d batches and has %d unfinished", x.Started(), x.Running())
			}
		})
	}
}

// late is a Machine whose clock is always behind by a fixed lag when it
// reaches a time, and whose batches take a fixed time: a scheduler that
// handles every event late.
type late struct {
	Replay
	lag, run float64
}

func (l *late) Start(d, lane int, jobs []*Job, samples int32) error {
	heap.Push(&l.running, Done{Device: d, Lane: lane, End: l.now + l.run})
	return nil
}

func (l *late) Wait(t float64) (Done, bool, error) {
	if len(l.running) > 0 && l.running[0].End <= t+l.lag {
		d := heap.Pop(&l.running).(Done)
		l.now = max(l.now, d.End+l.lag) // heard of late
		return d, true, nil
	}
	if !math.IsInf(t, 1) {
		l.now = max(l.now, t+l.lag)
	}
	return Done{}, false, nil
}

// TestMachineClockIsTheRecords checks that with a machine the records
// hold its clock's times: a job starts when the scheduler got to it, late,
// and ends when its batch ended, not when the scheduler heard.
func TestMachineClockIsTheRecords(t *testing.T) {
	x := &late{lag: 0.25, run: 1}
	cfg := Config{Devices: []Device{{Name: "d", Lanes: 1, Memory: 10, Speed: 1}}, Service: unit{}, Policy: first{}, Machine: x}
	got := collect(t, cfg, []*Job{{ID: 1, Arrival: 0}, {ID: 2, Arrival: 0.5}, {ID: 3, Arrival: 5}})
	// Job 1 arrives at 0, handled at 0.25, ends at 1.25, heard of at 1.5,
	// when job 2 (handled at 0.75) starts; job 3 is handled at 5.25.
	want := [][2]float64{{0.25, 1.25}, {1.5, 2.5}, {5.25, 6.25}}
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i, r := range got {
		if r.Start != want[i][0] || r.End != want[i][1] {
			t.Errorf("job %d ran [%v, %v], want %v", r.Job.ID, r.Start, r.End, want[i])
		}
	}
}

// badEnd reports a batch end on a lane that runs nothing.
type badEnd struct{ Replay }

func (b *badEnd) Wait(t float64) (Done, bool, error) {
	return Done{Device: 0, Lane: 1, End: b.now}, true, nil
}

func TestMachineErrors(t *testing.T) {
	dev := []Device{{Name: "d", Lanes: 2, Memory: 10, Speed: 1}}
	cfg := Config{Devices: dev, Service: unit{}, Policy: first{}, Machine: &badEnd{}}
	_, err := Run(cfg, feed(&Job{ID: 1, Arrival: 0}), func(*Record) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "lane 1, which runs no batch") {
		t.Errorf("err = %v, want a batch end on an idle lane refused", err)
	}
	cfg.Machine = &Replay{Time: serviceTimes(unit{}, dev, 0)}
	m, err := New(cfg, feed(&Job{ID: 1, Arrival: 0}), func(*Record) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Fork(feed(), func(*Record) error { return nil }, nil); err == nil || !strings.Contains(err.Error(), "cannot be forked") {
		t.Errorf("fork err = %v, want a refusal", err)
	}
	for _, bad := range []float64{-1, math.NaN(), math.Inf(1)} {
		cfg.Machine = &Replay{Time: func(int, int, []*Job, int32) (float64, error) { return bad, nil }}
		_, err := Run(cfg, feed(&Job{ID: 1, Arrival: 0}), func(*Record) error { return nil })
		if err == nil || !strings.Contains(err.Error(), "replay: batch of job 1 on device 0 lane 0 takes") {
			t.Errorf("a batch taking %v s: err = %v, want it refused", bad, err)
		}
	}
}

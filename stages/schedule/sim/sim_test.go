package sim

import (
	"errors"
	"strings"
	"testing"
)

type unit struct{}

func (unit) Time(d int, m, p, b int32, u float64) float64 { return 1 }
func (unit) Predict(d int, m, p, b int32) float64         { return 1 }
func (unit) Memory(m, p, b int32) float64                 { return 1 }
func (unit) Contention(d, k int) float64                  { return 1 }

type first struct{}

func (first) Name() string               { return "first" }
func (first) Place(j *Job, s *State) int { return 0 }

type nameOnly struct{}

func (nameOnly) Name() string { return "name-only" }

func feed(jobs ...*Job) func() (*Job, bool) {
	return func() (*Job, bool) {
		if len(jobs) == 0 {
			return nil, false
		}
		j := jobs[0]
		jobs = jobs[1:]
		return j, true
	}
}

func TestRunRejectsBadInput(t *testing.T) {
	ok := []Device{{Name: "d", Lanes: 1, Memory: 1, Speed: 1}}
	tests := []struct {
		name string
		cfg  Config
		jobs []*Job
		want string
	}{
		{"no devices", Config{Service: unit{}, Policy: first{}}, nil, "no devices"},
		{"zero lanes", Config{Devices: []Device{{Name: "d", Memory: 1, Speed: 1}}, Service: unit{}, Policy: first{}}, nil, "device 0 (d)"},
		{"zero speed", Config{Devices: []Device{{Name: "d", Lanes: 1, Memory: 1}}, Service: unit{}, Policy: first{}}, nil, "speed > 0"},
		{"policy that cannot place", Config{Devices: ok, Service: unit{}, Policy: nameOnly{}}, nil, "does not place"},
		{"arrivals out of order", Config{Devices: ok, Service: unit{}, Policy: first{}},
			[]*Job{{ID: 1, Arrival: 5}, {ID: 2, Arrival: 4}}, "job 2 arrives at 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Run(tt.cfg, feed(tt.jobs...), func(*Record) error { return nil })
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestEmitErrorStopsTheRun(t *testing.T) {
	boom := errors.New("disk full")
	calls := 0
	_, err := Run(Config{Devices: []Device{{Name: "d", Lanes: 1, Memory: 1, Speed: 1}}, Service: unit{}, Policy: first{}},
		feed(&Job{ID: 1}, &Job{ID: 2, Arrival: 1}, &Job{ID: 3, Arrival: 2}),
		func(*Record) error { calls++; return boom })
	if !errors.Is(err, boom) || calls != 1 {
		t.Errorf("err = %v after %d records, want the emitter's error after the first", err, calls)
	}
}

func TestStatsAndMakespan(t *testing.T) {
	st, err := Run(Config{Devices: []Device{{Name: "d", Lanes: 1, Memory: 1, Speed: 2}}, Service: unit{}, Policy: first{}},
		feed(&Job{ID: 1}, &Job{ID: 2}, &Job{ID: 3, Arrival: 10}), func(*Record) error { return nil })
	// Speed 2: each job takes 0.5 s; 1 in [0, 0.5], 2 in [0.5, 1], 3 in [10, 10.5].
	if err != nil || st.Jobs != 3 || st.Rejected != 0 || st.Makespan != 10.5 {
		t.Errorf("stats = %+v, %v; want 3 jobs, makespan 10.5", st, err)
	}
}

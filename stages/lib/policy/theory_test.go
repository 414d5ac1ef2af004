package policy

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/sim"
)

// exponential is a Service with exponential times of mean 1 s: with Poisson
// arrivals a FIFO device is an M/M/c queue, whose answers are known.
type exponential struct{}

func (exponential) Time(d int, m, p, b int32, u float64) float64 { return -math.Log1p(-u) }
func (exponential) Predict(d int, m, p, b int32) float64         { return 1 }
func (exponential) Memory(m, p, b int32) float64                 { return 1 }
func (exponential) Contention(d, k int) float64                  { return 1 }

// observer is FIFO that counts, at each arrival, the jobs the simulator
// holds (waiting or running): by PASTA, Poisson arrivals see the time
// average, so the mean count is L in Little's law L = λW.
type observer struct {
	FIFO
	seen, n float64
}

func (o *observer) Place(j *sim.Job, s *sim.State) int {
	for d := range s.Devices() {
		o.seen += float64(s.Queued(d) + s.Busy(d))
	}
	o.n++
	return o.FIFO.Place(j, s)
}

// TestQueueingTheory checks the simulator against M/M/1 and M/M/2 (Erlang
// C): mean time in system, utilization equal to the offered load, and
// Little's law between the simulator's own state and the records. With
// 400k jobs the standard error of the mean sojourn is about 1.5% at these
// loads (its autocorrelation included), so 5% is over three errors.
func TestQueueingTheory(t *testing.T) {
	if testing.Short() {
		t.Skip("long run")
	}
	erlangC := func(c int, a float64) float64 {
		sum, term := 0.0, 1.0
		for k := range c {
			if k > 0 {
				term *= a / float64(k)
			}
			sum += term
		}
		top := term * a / float64(c) * float64(c) / (float64(c) - a)
		return top / (sum + top)
	}
	tests := []struct {
		name   string
		lanes  int
		lambda float64
		want   float64 // mean time in system, 1/μ = 1
	}{
		{"M/M/1 at 0.7", 1, 0.7, 1 / (1 - 0.7)},
		{"M/M/2 at 0.7", 2, 1.4, erlangC(2, 1.4)/(2-1.4) + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const n = 400_000
			r := rand.New(rand.NewPCG(9, 9))
			at, i := 0.0, 0
			var sojourn, busy, last float64
			obs := &observer{}
			_, err := sim.Run(sim.Config{
				Devices: []sim.Device{{Name: "d", Lanes: tt.lanes, Memory: 1e9, Speed: 1}},
				Service: exponential{}, Policy: obs, Seed: 5,
			}, func() (*sim.Job, bool) {
				if i == n {
					return nil, false
				}
				i++
				at += r.ExpFloat64() / tt.lambda
				return &sim.Job{ID: int64(i), Arrival: at, Batch: 1}, true
			}, func(rec *sim.Record) error {
				sojourn += rec.End - rec.Job.Arrival
				busy += rec.End - rec.Start
				last = max(last, rec.End)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("mean time in system %.4f (theory %.4f), utilization %.4f (load %.4f)", sojourn/n, tt.want, busy/last/float64(tt.lanes), tt.lambda/float64(tt.lanes))
			if got := sojourn / n; math.Abs(got-tt.want)/tt.want > 0.05 {
				t.Errorf("mean time in system %.4f, theory %.4f", got, tt.want)
			}
			if l, lw := obs.seen/obs.n, tt.lambda*sojourn/n; math.Abs(l-lw)/lw > 0.05 {
				t.Errorf("Little's law: arrivals see %.4f jobs in the system, λW = %.4f", l, lw)
			}
			rho := tt.lambda / float64(tt.lanes)
			if got := busy / last / float64(tt.lanes); math.Abs(got-rho) > 0.01 {
				t.Errorf("utilization %.4f, offered load %.4f", got, rho)
			}
		})
	}
}

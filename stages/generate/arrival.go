package generate

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// arrivals yields the arrival times of one workload, in seconds, strictly
// from its own random stream.
type arrivals interface {
	// next returns the time of the next arrival; times never decrease.
	next() float64
}

// newArrivals builds the process a validated Arrival describes.
func newArrivals(a Arrival, r *rand.Rand, src rand.Source) arrivals {
	switch a.Process {
	case ProcessBursty:
		if a.Bursty.Model == BurstyMMPP {
			return newMMPP(a.Rate, a.Bursty, r)
		}
		return newGammaRenewal(a.Rate, a.Bursty.CV, src)
	case ProcessDiurnal:
		return &diurnal{
			r:     r,
			rate:  a.Rate,
			amp:   a.Diurnal.Amplitude,
			omega: 2 * math.Pi / a.Diurnal.Period.Seconds(),
			max:   a.Rate * (1 + a.Diurnal.Amplitude),
		}
	default:
		return &poisson{r: r, rate: a.Rate}
	}
}

// poisson has exponential inter-arrival times of mean 1/rate.
type poisson struct {
	r    *rand.Rand
	rate float64
	t    float64
}

func (p *poisson) next() float64 {
	p.t += p.r.ExpFloat64() / p.rate
	return p.t
}

// gammaRenewal has independent gamma inter-arrival times with shape 1/cv²
// and mean 1/rate: the coefficient of variation is cv, bursty above 1, more
// regular than Poisson below it.
type gammaRenewal struct {
	g distuv.Gamma
	t float64
}

func newGammaRenewal(rate, cv float64, src rand.Source) *gammaRenewal {
	shape := 1 / (cv * cv)
	// gonum's Beta is the rate parameter: mean = Alpha/Beta = 1/rate.
	return &gammaRenewal{g: distuv.Gamma{Alpha: shape, Beta: shape * rate, Src: src}}
}

func (g *gammaRenewal) next() float64 {
	g.t += g.g.Rand()
	return g.t
}

// mmpp is a two-state Markov-modulated Poisson process. It spends
// exponential sojourns in a high state (mean MeanBurst, rate ratio× the low
// rate) and a low state (mean MeanBurst·(1−h)/h, so the long-run fraction of
// time in the high state is h). The state rates are set so the long-run mean
// rate h·λH + (1−h)·λL equals the configured rate.
type mmpp struct {
	r          *rand.Rand
	rates      [2]float64 // low, high
	meanStay   [2]float64 // mean sojourn per state, seconds
	high       int        // current state: 0 low, 1 high
	t, switchT float64
}

func newMMPP(rate float64, b Bursty, r *rand.Rand) *mmpp {
	h := b.HighFraction
	low := rate / (h*b.RateRatio + 1 - h)
	burst := b.MeanBurst.Seconds()
	m := &mmpp{
		r:        r,
		rates:    [2]float64{low, low * b.RateRatio},
		meanStay: [2]float64{burst * (1 - h) / h, burst},
	}
	// Start in the stationary distribution so the rate is the same from the
	// first second; the sojourn is memoryless, so a fresh one is exact.
	if r.Float64() < h {
		m.high = 1
	}
	m.switchT = r.ExpFloat64() * m.meanStay[m.high]
	return m
}

func (m *mmpp) next() float64 {
	for {
		// The exponential gap is memoryless: when it would cross a state
		// switch, restart from the switch with the new state's rate.
		gap := m.r.ExpFloat64() / m.rates[m.high]
		if m.t+gap < m.switchT {
			m.t += gap
			return m.t
		}
		m.t = m.switchT
		m.high ^= 1
		m.switchT = m.t + m.r.ExpFloat64()*m.meanStay[m.high]
	}
}

// diurnal is a non-homogeneous Poisson process with rate
// λ(t) = rate·(1 + amp·sin(ωt)), drawn by thinning (Lewis and Shedler): a
// homogeneous process at the peak rate proposes times, each kept with
// probability λ(t)/peak. Over whole periods the mean rate is rate; at most
// 1 + amp proposals are drawn per arrival on average.
type diurnal struct {
	r                *rand.Rand
	rate, amp, omega float64
	max              float64
	t                float64
}

func (d *diurnal) next() float64 {
	for {
		d.t += d.r.ExpFloat64() / d.max
		if d.r.Float64()*d.max < d.rate*(1+d.amp*math.Sin(d.omega*d.t)) {
			return d.t
		}
	}
}

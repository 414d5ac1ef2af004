package servicetime

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Contention is how much lanes sharing one device slow each other down, as
// the profile measured it: the median, over the runs of k sessions running
// at once, of a run's latency over the median of its model's session
// alone. A Contention is immutable
// and safe for concurrent use.
type Contention struct {
	device string
	basis  string
	// sessions are the measured session counts, ascending, sessions[0] = 1;
	// factors[i] is the slowdown at sessions[i], at least 1, factors[0] = 1.
	sessions []int
	factors  []float64
}

// unmeasured is the contention of a device the profile has latencies but
// no contention rows for: no slowdown, for want of evidence of one.
func unmeasured(device string) *Contention {
	return &Contention{device: device, sessions: []int{1}, factors: []float64{1}}
}

// Measured reports whether the profile measured this device's contention:
// whether it ran more than one session at once there. When it did not,
// Factor is 1 for every k, which understates the slowdown of lanes that
// share the device; a report should say so.
func (c *Contention) Measured() bool { return len(c.sessions) > 1 }

// Device returns the device the contention was measured on.
func (c *Contention) Device() string { return c.device }

// String describes the measurement: the configuration it ran and the
// slowdown at each measured session count, or that there was none.
func (c *Contention) String() string {
	if !c.Measured() {
		return fmt.Sprintf("%s: contention not measured, factor 1", c.device)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s:", c.device, c.basis)
	for i, k := range c.sessions {
		fmt.Fprintf(&b, " k=%d×%.3f", k, c.factors[i])
	}
	return b.String()
}

// Factor returns the slowdown of each of k lanes running at once on the
// device, relative to one lane alone: 1 for k <= 1, the measured ratio at a
// measured k, linear interpolation between measured k, and beyond the
// largest measured k the line through the last two measured points, whose
// slope is floored at 0 (more lanes never speed each other up). It never
// returns less than 1.
func (c *Contention) Factor(k int) float64 {
	s, f := c.sessions, c.factors
	n := len(s)
	switch {
	case k <= 1 || n == 1:
		return 1
	case k >= s[n-1]:
		slope := (f[n-1] - f[n-2]) / float64(s[n-1]-s[n-2])
		return f[n-1] + float64(k-s[n-1])*max(0, slope)
	}
	// s[0] = 1 < k < s[n-1]: find s[i-1] < k <= s[i]. There are a handful
	// of measured counts, so a scan is as fast as a search.
	i := 1
	for s[i] < k {
		i++
	}
	w := float64(k-s[i-1]) / float64(s[i]-s[i-1])
	return (1-w)*f[i-1] + w*f[i]
}

// newContention computes a device's factors from one contention
// measurement's latencies, by model and session count; every model must
// have k = 1, its baseline. The factor at k is the median, over every run
// of every model at k, of the run's latency over its model's median alone:
// with one model, the median at k over the median alone.
func newContention(device, basis string, byModel map[string]map[int][]float64) *Contention {
	c := &Contention{device: device, basis: basis}
	ratios := map[int][]float64{}
	for _, m := range slices.Sorted(maps.Keys(byModel)) {
		byK := byModel[m]
		base := median(byK[1])
		for _, k := range slices.Sorted(maps.Keys(byK)) {
			for _, l := range byK[k] {
				ratios[k] = append(ratios[k], l/base)
			}
		}
	}
	c.sessions = slices.Sorted(maps.Keys(ratios))
	for _, k := range c.sessions {
		// A ratio below 1 is timing noise around "no slowdown": k sessions
		// cannot finish sooner than one alone on the same cores.
		c.factors = append(c.factors, max(1, median(ratios[k])))
	}
	c.factors[0] = 1 // exactly, whatever the rounding of base/base
	return c
}

// median is the usual sample median: the middle value, or the mean of the
// two middle values of an even count. It is the Hazen quantile at ½, the
// definition Curve.Quantile uses. It sorts a copy, leaving lat as it was.
func median(lat []float64) float64 {
	x := slices.Sorted(slices.Values(lat))
	n := len(x)
	if n%2 == 1 {
		return x[n/2]
	}
	return (x[n/2-1] + x[n/2]) / 2
}

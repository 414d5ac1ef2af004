package placement

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// Rule is a threshold on one feature, the baselines the network is scored
// against: migrate when x[Feature] > Threshold, or, when Above is false,
// when x[Feature] < Threshold. A hand-written rule such as the simulator's
// "migrate when the gain exceeds min_gain" is one, and BestRule finds the
// best one on a training split.
//
// A rule has no probability of its own. It predicts, on each side of its
// threshold, the share of training points labelled migrate there
// (Laplace-smoothed, (positives+1)/(points+2)), so that its log loss and
// calibration mean what the network's do.
type Rule struct {
	Feature   int
	Above     bool
	Threshold float64
	// PMigrate and PStay are the rule's probabilities of migrate on its
	// migrate side and on its stay side.
	PMigrate, PStay float64
}

// String describes the rule, for example "x[3] > 0.25".
func (r Rule) String() string {
	op := ">"
	if !r.Above {
		op = "<"
	}
	return fmt.Sprintf("x[%d] %s %g", r.Feature, op, r.Threshold)
}

// NewRule returns the rule migrating when x[feature] is above (or below)
// threshold, with its probabilities taken from the training points x, y.
func NewRule(feature int, above bool, threshold float64, x [][Inputs]float32, y []bool) (Rule, error) {
	r := Rule{Feature: feature, Above: above, Threshold: threshold}
	if err := r.fit(x, y); err != nil {
		return Rule{}, fmt.Errorf("placement: rule %v: %w", r, err)
	}
	return r, nil
}

// fit sets the rule's probabilities from the training points.
func (r *Rule) fit(x [][Inputs]float32, y []bool) error {
	switch {
	case r.Feature < 0 || r.Feature >= Inputs:
		return fmt.Errorf("feature %d: want 0 to %d", r.Feature, Inputs-1)
	case len(x) != len(y):
		return fmt.Errorf("%d feature rows and %d labels", len(x), len(y))
	}
	if err := checkFeatures(x); err != nil {
		return err
	}
	var n, pos [2]int // index 1: the migrate side
	for i := range x {
		side := 0
		if r.migrate(&x[i]) {
			side = 1
		}
		n[side]++
		if y[i] {
			pos[side]++
		}
	}
	r.PStay = float64(pos[0]+1) / float64(n[0]+2)
	r.PMigrate = float64(pos[1]+1) / float64(n[1]+2)
	return nil
}

func (r Rule) migrate(x *[Inputs]float32) bool {
	v := float64(x[r.Feature])
	if r.Above {
		return v > r.Threshold
	}
	return v < r.Threshold
}

// Predictions returns the rule's predictions for x: the feature's value
// (negated for a rule that migrates below its threshold) is the score, and
// the side of the threshold gives the decision and P.
func (r Rule) Predictions(scorer string, x [][Inputs]float32) Predictions {
	pr := Predictions{Scorer: scorer, Score: make([]float64, len(x)), P: make([]float64, len(x)), Migrate: make([]bool, len(x))}
	for i := range x {
		v := float64(x[i][r.Feature])
		if !r.Above {
			v = -v
		}
		pr.Score[i] = v
		pr.Migrate[i] = r.migrate(&x[i])
		pr.P[i] = r.PStay
		if pr.Migrate[i] {
			pr.P[i] = r.PMigrate
		}
	}
	return pr
}

// BestRule returns the single-feature threshold with the highest accuracy
// on the training points x, y, over every feature, both directions and
// every threshold halfway between two consecutive distinct values. Ties
// go to the lower feature, then to the lower threshold, then to Above.
func BestRule(x [][Inputs]float32, y []bool) (Rule, error) {
	r, err := bestRule(x, y)
	if err != nil {
		return Rule{}, fmt.Errorf("placement: best rule: %w", err)
	}
	return r, nil
}

func bestRule(x [][Inputs]float32, y []bool) (Rule, error) {
	if len(x) != len(y) {
		return Rule{}, fmt.Errorf("%d feature rows and %d labels", len(x), len(y))
	}
	if err := checkFeatures(x); err != nil {
		return Rule{}, err
	}
	totalPos := 0
	for _, v := range y {
		if v {
			totalPos++
		}
	}
	totalNeg := len(y) - totalPos
	type point struct {
		v   float32
		pos bool
	}
	pts := make([]point, len(x))
	best, bestCorrect := Rule{}, -1
	for f := range Inputs {
		for i := range x {
			pts[i] = point{x[i][f], y[i]}
		}
		slices.SortFunc(pts, func(a, b point) int { return cmp.Compare(a.v, b.v) })
		// Cut after each run of equal values: below holds the points up
		// to the cut.
		var posBelow, negBelow int
		for i := 0; i < len(pts)-1; i++ {
			if pts[i].pos {
				posBelow++
			} else {
				negBelow++
			}
			if pts[i].v == pts[i+1].v {
				continue
			}
			t := (float64(pts[i].v) + float64(pts[i+1].v)) / 2
			above := negBelow + totalPos - posBelow // migrate above the cut
			below := posBelow + totalNeg - negBelow // migrate below it
			if above > bestCorrect {
				best, bestCorrect = Rule{Feature: f, Above: true, Threshold: t}, above
			}
			if below > bestCorrect {
				best, bestCorrect = Rule{Feature: f, Above: false, Threshold: t}, below
			}
		}
	}
	if bestCorrect < 0 {
		return Rule{}, errors.New("no feature takes two different values")
	}
	if err := best.fit(x, y); err != nil {
		return Rule{}, err
	}
	return best, nil
}

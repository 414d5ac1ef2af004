package opcost

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Scored is one held-out configuration: what was measured and predicted.
type Scored struct {
	Model          string
	Batch, Threads int
	Latency        time.Duration
	Predicted      time.Duration
}

// Err is the prediction's error relative to the measurement.
func (s Scored) Err() float64 { return s.Predicted.Seconds()/s.Latency.Seconds() - 1 }

// Scores summarises predictions of held-out configurations.
type Scores struct {
	// MAPE is the mean absolute percentage error, in percent.
	MAPE float64
	// Within10 is the share of configurations predicted within ±10%.
	Within10 float64
	// Configs are the predictions, by model, threads and batch.
	Configs []Scored
}

// LeaveOneModelOut fits a model on every model's samples but one and
// predicts that one's, each model held out in turn: how well the costs
// learned on other architectures predict one never profiled.
func LeaveOneModelOut(samples []Sample) (Scores, error) {
	var models []string
	for _, s := range samples {
		if !slices.Contains(models, s.Model) {
			models = append(models, s.Model)
		}
	}
	slices.Sort(models)
	if len(models) < 2 {
		return Scores{}, fmt.Errorf("opcost: leave one model out: %d models, want at least 2", len(models))
	}
	var sc Scores
	for _, out := range models {
		var train, test []Sample
		for _, s := range samples {
			if s.Model == out {
				test = append(test, s)
			} else {
				train = append(train, s)
			}
		}
		m, err := Fit(train)
		if err != nil {
			return Scores{}, fmt.Errorf("opcost: leave %s out: %w", out, err)
		}
		for _, s := range test {
			p, err := m.Predict(s.Ops, s.Threads)
			if err != nil {
				return Scores{}, fmt.Errorf("opcost: leave %s out: %w", out, err)
			}
			sc.Configs = append(sc.Configs, Scored{s.Model, s.Batch, s.Threads, s.Latency, p})
		}
	}
	slices.SortStableFunc(sc.Configs, func(a, b Scored) int {
		if a.Model != b.Model {
			return strings.Compare(a.Model, b.Model)
		}
		if a.Threads != b.Threads {
			return a.Threads - b.Threads
		}
		return a.Batch - b.Batch
	})
	return Summarize(sc.Configs), nil
}

// Summarize scores predictions: their MAPE and share within ±10%.
func Summarize(configs []Scored) Scores {
	sc := Scores{Configs: configs}
	var within int
	for _, c := range configs {
		e := math.Abs(c.Err())
		sc.MAPE += 100 * e
		if e <= 0.10 {
			within++
		}
	}
	if n := float64(len(configs)); n > 0 {
		sc.MAPE /= n
		sc.Within10 = float64(within) / n
	}
	return sc
}

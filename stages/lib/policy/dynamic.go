package policy

import "github.com/mlsched/mlsched/stages/lib/sim"

// Weights weigh the terms of the dynamic policy's score; they are the
// schedule.dynamic section of pipeline.yaml.
type Weights struct {
	// Class rewards interactive work.
	Class float64 `koanf:"class"`
	// Urgency rewards a group whose oldest job is near its deadline.
	Urgency float64 `koanf:"urgency"`
	// Batch rewards a group with many samples to batch.
	Batch float64 `koanf:"batch"`
	// Service penalizes a long predicted batch time.
	Service float64 `koanf:"service"`
	// Memory penalizes a batch that holds much of the device's memory.
	Memory float64 `koanf:"memory"`
}

// DefaultWeights put class and urgency first, then batching, with light
// penalties for long and memory-hungry batches.
func DefaultWeights() Weights {
	return Weights{Class: 1, Urgency: 2, Batch: 0.5, Service: 0.5, Memory: 0.25}
}

// Dynamic always micro-batches and chooses the next batch by a weighted
// score of several objectives. Each term is in [0, 1] and belongs to the
// group's oldest job h and the batch b it would lead (its compatible
// samples, up to the largest batch), on device d at time t:
//
//	class    1 for interactive, 0 for batch
//	urgency  1 − slack/SLO, where slack = deadline(h) − t − predicted(b)
//	         and SLO = deadline(h) − arrival(h); 0 when the slack is
//	         negative, since h misses its deadline whatever runs now
//	batch    samples(b) / largest batch
//	service  min(1, predicted(b) / SLO)
//	memory   memory(b) / memory(d)
//
// score = W.Class·class + W.Urgency·urgency + W.Batch·batch
// − W.Service·service − W.Memory·memory; the highest score runs, the oldest
// group on ties. Predictions are the profile table's means (a learned
// predictor replaces them once the train stage exists). Placement is
// BatchAware's.
type Dynamic struct{ W Weights }

var (
	_ sim.Placer      = Dynamic{}
	_ sim.GroupPicker = Dynamic{}
	_ sim.Splitter    = Dynamic{}
)

// Name implements sim.Policy.
func (Dynamic) Name() string { return "dynamic" }

// Place implements sim.Placer.
func (Dynamic) Place(j *sim.Job, s *sim.State) int { return earliestBatchedFinish(j, s) }

// Split implements sim.Splitter: the parts are predicted to end together.
func (Dynamic) Split(j *sim.Job, s *sim.State) []int32 { return splitEvenly(j, s) }

// Pick implements sim.GroupPicker.
func (p Dynamic) Pick(d int, groups []sim.Group, s *sim.State) int {
	best := -1
	var bestScore float64
	for i, g := range groups {
		sc := p.Score(d, g, s)
		if best < 0 || sc > bestScore || (sc == bestScore && older(g.Head, groups[best].Head)) {
			best, bestScore = i, sc
		}
	}
	return best
}

// Score is group g's score on device d now.
func (p Dynamic) Score(d int, g sim.Group, s *sim.State) float64 {
	h := g.Head
	limit := s.MaxBatch()
	samples := int32(min(g.Samples, int64(limit)))
	samples = max(samples, h.Batch) // a job larger than the limit runs alone
	pred := s.PredictBatch(d, h, samples)
	slo := h.Deadline - h.Arrival
	var class, urgency, service float64
	if h.Class == sim.Interactive {
		class = 1
	}
	if slo > 0 {
		if slack := h.Deadline - s.Now() - pred; slack >= 0 {
			urgency = max(0, 1-slack/slo)
		}
		service = min(1, pred/slo)
	} else {
		service = 1
	}
	batch := float64(samples) / float64(max(limit, samples))
	memory := min(1, s.MemoryOf(h, samples)/s.Device(d).Memory)
	return p.W.Class*class + p.W.Urgency*urgency + p.W.Batch*batch - p.W.Service*service - p.W.Memory*memory
}

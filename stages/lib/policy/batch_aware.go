package policy

import "github.com/mlsched/mlsched/stages/lib/sim"

// BatchAware always micro-batches and prefers work that batches: a job
// joins the device where it is predicted to finish first, counting only
// what it adds to a batch of compatible jobs already waiting there, and
// each device runs next the group of compatible jobs with the most samples
// to batch (up to the largest batch), the oldest group first on ties. A
// lone job may wait while bigger groups keep coming: the price of its
// throughput, which the SLO figures show.
type BatchAware struct{}

var (
	_ sim.Placer      = BatchAware{}
	_ sim.GroupPicker = BatchAware{}
	_ sim.Splitter    = BatchAware{}
)

// Name implements sim.Policy.
func (BatchAware) Name() string { return "batch_aware" }

// Place implements sim.Placer.
func (BatchAware) Place(j *sim.Job, s *sim.State) int { return earliestBatchedFinish(j, s) }

// Pick implements sim.GroupPicker.
func (BatchAware) Pick(d int, groups []sim.Group, s *sim.State) int {
	limit := int64(s.MaxBatch())
	best := -1
	var bestN int64
	for i, g := range groups {
		n := min(g.Samples, limit)
		if best < 0 || n > bestN || (n == bestN && older(g.Head, groups[best].Head)) {
			best, bestN = i, n
		}
	}
	return best
}

// Split implements sim.Splitter: the parts are predicted to end together.
func (BatchAware) Split(j *sim.Job, s *sim.State) []int32 { return splitEvenly(j, s) }

// earliestBatchedFinish is the device where j is predicted to finish first
// when it joins the compatible jobs waiting there: the device's backlog
// plus the time j adds to their batch, or its own time if it cannot join.
func earliestBatchedFinish(j *sim.Job, s *sim.State) int {
	return argmin(j, s, func(d int) float64 { return s.Backlog(d) + addedTime(j, s, d) })
}

// addedTime is what j adds to the time of the batch it would join on
// device d: the predicted time of the merged batch less that of the batch
// without it, or j's own predicted time when no batch can take it.
func addedTime(j *sim.Job, s *sim.State, d int) float64 {
	w := s.Compatible(d, j)
	if w == 0 || w+int64(j.Batch) > int64(s.MaxBatch()) {
		return s.Predict(d, j)
	}
	return s.PredictBatch(d, j, int32(w)+j.Batch) - s.PredictBatch(d, j, int32(w))
}

// older orders jobs by arrival, then id: a total order for ties.
func older(a, b *sim.Job) bool {
	if a.Arrival != b.Arrival {
		return a.Arrival < b.Arrival
	}
	return a.ID < b.ID
}

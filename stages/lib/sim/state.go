package sim

// State is the simulation as a policy sees it.
type State struct {
	cfg      Config
	devs     []deviceState
	events   timers
	slot     []int32 // device d's timer slot; its lane i is slot[d]+1+i
	seq      uint64
	stamps   uint64
	now      float64
	ranker   Ranker
	strict   bool
	placer   Placer
	picker   GroupPicker
	splitter Splitter
	batching bool
	grouped  bool // devices keep groups: batching or a GroupPicker
	transit  []transfer
	tHead    int
	stats    Stats
	emit     func(*Record) error
	err      error
	rec      Record      // the record being emitted
	batch    BatchRecord // the batch being emitted
	feat     MigrationFeatures
	members  []*Job  // the batch being formed
	views    []Group // the groups offered to a GroupPicker
	viewOf   []*group
	freeJobs []*Job // parts of split jobs, for reuse
	// Decisions that take time (decide.go).
	asked   []decision
	askedAt float64
	flights []*flight // sent, by the time their answers take effect
	spare   []*flight // landed, for reuse
	fseq    uint64
	feats   []MigrationFeatures // a batch's features, as the Migrator sees them
}

// Now is the current virtual time.
func (s *State) Now() float64 { return s.now }

// Devices is the number of devices.
func (s *State) Devices() int { return len(s.devs) }

// Device describes device d.
func (s *State) Device(d int) Device { return s.devs[d].Device }

// Fits reports whether job j can ever run on device d.
func (s *State) Fits(d int, j *Job) bool {
	return s.memory(j) <= s.devs[d].Memory
}

// Predict is the predicted service time of j on device d alone.
func (s *State) Predict(d int, j *Job) float64 {
	return s.predictOwn(d, j) / s.devs[d].Speed
}

// PredictBatch is the predicted time on device d alone of a batch of
// samples of j's model and precision, led by j.
func (s *State) PredictBatch(d int, j *Job, samples int32) float64 {
	return s.predict(d, j, samples) / s.devs[d].Speed
}

// predict is the predicted time of a batch of samples led by j on device
// d's profiled device (before its speed): the Predictor's, or the
// Service's, scaled by j's prediction error.
func (s *State) predict(d int, j *Job, samples int32) float64 {
	var p float64
	if s.cfg.Predictor != nil {
		p = s.cfg.Predictor.Predict(d, j.Model, j.Precision, samples)
	} else {
		p = s.cfg.Service.Predict(d, j.Model, j.Precision, samples)
	}
	if e := s.cfg.PredictionError; e > 0 {
		p *= 1 + e*(2*PredictionVariate(s.cfg.Seed, j.ID)-1)
	}
	return p
}

// predictOwn is predict of j's own batch on device d, kept since j was
// queued there.
func (s *State) predictOwn(d int, j *Job) float64 {
	if j.predOn == int32(d)+1 {
		return j.pred
	}
	return s.predict(d, j, j.Batch)
}

// MemoryOf is what a batch of samples of j's model and precision holds.
func (s *State) MemoryOf(j *Job, samples int32) float64 {
	return s.cfg.Service.Memory(j.Model, j.Precision, samples)
}

// Backlog is the predicted time until device d has worked off everything it
// holds, per lane: the predicted remaining time of its running batches and
// its queued work (each job as if alone), spread over its lanes.
func (s *State) Backlog(d int) float64 {
	ds := &s.devs[d]
	var left float64
	for i := range ds.lanes {
		if len(ds.lanes[i].jobs) > 0 {
			left += max(0, ds.lanes[i].predEnd-s.now)
		}
	}
	return (left + ds.queued/ds.Speed) / float64(ds.Lanes)
}

// Queued is the number of jobs waiting on device d.
func (s *State) Queued(d int) int { return s.devs[d].waiting }

// Busy is the number of busy lanes of device d.
func (s *State) Busy(d int) int { return s.devs[d].busy }

// MaxBatch is the largest micro-batch, in samples: 1 without batching.
func (s *State) MaxBatch() int32 {
	if !s.batching {
		return 1
	}
	return s.cfg.Batching.MaxBatch
}

// Compatible is the samples waiting on device d that job j could batch
// with (0 without batching or a GroupPicker).
func (s *State) Compatible(d int, j *Job) int64 {
	if !s.grouped {
		return 0
	}
	if g := s.devs[d].groups[kindOf(j)]; g != nil {
		return g.samples
	}
	return 0
}

package sim

// Policy is a scheduling policy. Its behaviour comes from the small
// interfaces below; every policy is a Placer.
type Policy interface {
	Name() string
}

// Placer picks the device whose queue an arriving job joins. The simulator
// moves a job placed on a device too small for it to the first device that
// holds it, so a Placer may ignore memory.
type Placer interface {
	Place(j *Job, s *State) int
}

// Ranker orders a device's queue: Less(a, b) is true when a runs before b.
// Without a Ranker a queue is FIFO. Less must be a strict weak order that
// never depends on time.
type Ranker interface {
	Less(a, b *Job) bool
}

// KeyRanker is a Ranker whose order is that of a key computed once per job,
// so a queue compares keys without calling back into the policy. Less must
// agree with the keys' order.
type KeyRanker interface {
	Ranker
	Key(j *Job) RankKey
}

// RankKey orders jobs by Major, then Minor, both ascending.
type RankKey struct {
	Major int64
	Minor float64
}

// StrictOrder, when it returns true, keeps a device from starting a later
// job while the first in order waits for memory (no overtaking). Policies
// without it start the first job in order that fits: work-conserving.
type StrictOrder interface {
	StrictOrder() bool
}

// GroupPicker chooses, whenever a lane of device d can start work, which
// group of compatible waiting jobs (same model, precision and class) runs
// next; the group's oldest job leads the batch. groups holds the device's
// groups whose oldest job fits the free memory, in a fixed order; Pick
// returns an index into it, or -1 to start nothing yet. A GroupPicker
// replaces the device queue's order (a Ranker is then ignored), and its
// choices may depend on time.
type GroupPicker interface {
	Pick(d int, groups []Group, s *State) int
}

// Group is a set of compatible jobs waiting on one device, as a GroupPicker
// sees it.
type Group struct {
	// Head is the oldest job of the group.
	Head *Job
	// Jobs and Samples count the group's jobs and their samples.
	Jobs    int
	Samples int64
}

// Splitter divides a large job across devices (Config.Split): Split
// returns the samples each device runs, indexed by device, summing to the
// job's batch. A device given 0 runs no part; a job given to one device
// alone runs whole. Each part must fit its device's memory.
type Splitter interface {
	Split(j *Job, s *State) []int32
}

// Predictor estimates the service time of a batch of a model on device d's
// profiled device (Config.Predictor), as Service.Predict does for the
// ground truth. Its answer depends on its arguments alone: the simulator
// may keep one rather than ask again.
type Predictor interface {
	Predict(d int, model, precision, batch int32) float64
}

// Migrator decides whether a waiting job moves to a device with an idle
// lane (Config.Migration).
type Migrator interface {
	Migrate(f *MigrationFeatures) bool
}

// MigrationFeatures describe one candidate move: the job that device From
// would start next, which device To, idle and with nothing waiting, could
// take.
type MigrationFeatures struct {
	Job      *Job
	From, To int
	// Now is the time of the decision.
	Now float64
	// FromBusy and ToBusy are the fractions of each device's lanes busy.
	FromBusy, ToBusy float64
	// FromQueued is the number of jobs waiting on From.
	FromQueued int
	// FromBacklog and ToBacklog are State.Backlog of each device.
	FromBacklog, ToBacklog float64
	// FromWait is the predicted time until a lane of From frees for the
	// job (0 if one is idle).
	FromWait float64
	// PredictFrom and PredictTo are the job's predicted service time on
	// each device alone.
	PredictFrom, PredictTo float64
	// Cost is the time a moved job spends in transit.
	Cost float64
}

// Gain is the predicted reduction of the job's end time from moving it:
// its predicted end where it is minus its predicted end after the move.
func (f *MigrationFeatures) Gain() float64 {
	return (f.FromWait + f.PredictFrom) - (f.Cost + f.PredictTo)
}

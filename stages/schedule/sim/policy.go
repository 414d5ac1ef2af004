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

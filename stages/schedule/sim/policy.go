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

// StrictOrder, when it returns true, keeps a device from starting a later
// job while the first in order waits for memory (no overtaking). Policies
// without it start the first job in order that fits: work-conserving.
type StrictOrder interface {
	StrictOrder() bool
}

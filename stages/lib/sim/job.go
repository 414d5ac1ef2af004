package sim

// Class is a job's service class.
type Class uint8

// The job classes.
const (
	Interactive Class = iota
	Batch
)

// Job is one request as the simulator sees it. Model and Precision index the
// caller's lists; the simulator only passes them to the Service model.
type Job struct {
	ID        int64
	Arrival   float64 // seconds
	Deadline  float64 // seconds; the SLO is met when the job ends by then
	Class     Class
	Model     int32
	Precision int32
	Batch     int32

	// The simulator's bookkeeping, reset when the job arrives.
	stamp    uint64 // of its live queue entries; 0 when not waiting
	migrated bool
	deciding bool   // a migration decision about it is asked and unanswered
	split    *split // on the parts of a split job
	// What the job's own batch holds (mem, once hasMem) and its predicted
	// time on the device it was last queued on (pred, on device predOn-1;
	// predOn 0 is none): kept rather than asked again of the Service and
	// the Predictor, whose answers depend on their arguments alone, as a
	// waiting job is placed, queued, taken and started.
	mem    float64
	hasMem bool
	pred   float64
	predOn int32
}

// Record is what happened to one job.
type Record struct {
	Job    *Job
	Device int32 // -1 when rejected
	Lane   int32
	// BatchID numbers the batches the simulator started, from 1; BatchSize
	// is the samples in the batch the job ran in: its own, or a micro-batch's.
	BatchID   int64
	BatchSize int32
	Start     float64
	End       float64
	// Migrated is true when the job (or a part of it) moved between device
	// queues before it ran.
	Migrated bool
	// SplitParts is the number of parts the job ran as: 1 when whole, 0
	// when rejected. A split job's Device, Lane, BatchID, BatchSize and End
	// are those of its last part to end, Start that of its first to start.
	SplitParts int32
	Reason     string // why a rejected job ran nowhere
}

// Rejected reports whether the job fit on no device.
func (r *Record) Rejected() bool { return r.Device < 0 }

// BatchRecord is one batch run on one lane.
type BatchRecord struct {
	Device, Lane     int32
	BatchID          int64
	Model, Precision int32
	// Jobs is the number of jobs (or parts) in the batch, Samples their
	// samples.
	Jobs, Samples int32
	Memory        float64
	Start, End    float64
}

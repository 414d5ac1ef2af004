package metrics

import (
	"fmt"
	"slices"
)

// Row is one job of a trace as a trace file holds it, for a simulation
// that is summarized without writing one (a schedule sweep point): what
// NewTrace and Append build is the Trace that ReadTrace would read from
// the same rows written and read back, field for field.
type Row struct {
	JobID int64
	// Class is a class code, Interactive or Batch.
	Class uint8
	// Device indexes the trace's devices; NoDevice for a rejected job.
	Device    int16
	BatchSize int32
	// The times, as the trace's columns of the same names.
	Arrival, Start, End, Wait, Service, E2E float64
	SLOMet, Rejected                        bool
}

// NewTrace starts an empty trace of policy on the cluster's devices, in
// order, with room for n rows.
func NewTrace(policy string, devices []string, n int) *Trace {
	t := &Trace{Policy: policy, Devices: slices.Clone(devices)}
	t.JobID = make([]int64, 0, n)
	t.Class = make([]uint8, 0, n)
	t.Device = make([]int16, 0, n)
	t.BatchSize = make([]int32, 0, n)
	t.SLOMet = make([]bool, 0, n)
	t.Rejected = make([]bool, 0, n)
	for _, s := range t.times() {
		*s = make([]float64, 0, n)
	}
	return t
}

// Append adds r as the trace's next row, in the order a file would hold
// it; Finish then orders the rows by job id.
func (t *Trace) Append(r Row) {
	t.JobID = append(t.JobID, r.JobID)
	t.Class = append(t.Class, r.Class)
	t.Device = append(t.Device, r.Device)
	t.BatchSize = append(t.BatchSize, r.BatchSize)
	t.Arrival = append(t.Arrival, r.Arrival)
	t.Start = append(t.Start, r.Start)
	t.End = append(t.End, r.End)
	t.Wait = append(t.Wait, r.Wait)
	t.Service = append(t.Service, r.Service)
	t.E2E = append(t.E2E, r.E2E)
	t.SLOMet = append(t.SLOMet, r.SLOMet)
	t.Rejected = append(t.Rejected, r.Rejected)
}

// Finish orders the appended rows by job id, as ReadTrace does, and
// checks that no job appears twice.
func (t *Trace) Finish() error {
	if err := t.sortByID("trace of " + t.Policy); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}

// ClassCode is the class code of a class name (generatespec's), and
// whether it names one.
func ClassCode(name string) (uint8, bool) {
	c := classCode([]byte(name))
	return uint8(c), c >= 0
}

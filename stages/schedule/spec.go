package schedule

import (
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// The stage's configuration and its files are declared in package
// schedulespec, which the command line links without the simulator; these
// are the same types and constants, as os.FileMode is fs.FileMode.
type (
	Config        = schedulespec.Config
	Device        = schedulespec.Device
	Memory        = schedulespec.Memory
	Batching      = schedulespec.Batching
	Splitting     = schedulespec.Splitting
	Migration     = schedulespec.Migration
	Sweep         = schedulespec.Sweep
	TraceRow      = schedulespec.TraceRow
	BatchRow      = schedulespec.BatchRow
	ClusterRow    = schedulespec.ClusterRow
	BoundsRow     = schedulespec.BoundsRow
	RunRow        = schedulespec.RunRow
	SweepRow      = schedulespec.SweepRow
	ServingRow    = schedulespec.ServingRow
	StudyRow      = schedulespec.StudyRow
	Studies       = schedulespec.Studies
	CapacityRow   = schedulespec.CapacityRow
	Real          = schedulespec.Real
	RealRunRow    = schedulespec.RealRunRow
	RealRepeatRow = schedulespec.RealRepeatRow
	DispatchRow   = schedulespec.DispatchRow
)

// Device kinds, file names and limits: schedulespec's.
const (
	KindMeasured         = schedulespec.KindMeasured
	KindDeclared         = schedulespec.KindDeclared
	MaxLanes             = schedulespec.MaxLanes
	MaxReplications      = schedulespec.MaxReplications
	MaxSweepLoad         = schedulespec.MaxSweepLoad
	ClusterFile          = schedulespec.ClusterFile
	BoundsFile           = schedulespec.BoundsFile
	RunsFile             = schedulespec.RunsFile
	SweepFile            = schedulespec.SweepFile
	CapacityFile         = schedulespec.CapacityFile
	TraceFile            = schedulespec.TraceFile
	DevicesFile          = schedulespec.DevicesFile
	ServingFile          = schedulespec.ServingFile
	StudiesFile          = schedulespec.StudiesFile
	RealDir              = schedulespec.RealDir
	RealRunsFile         = schedulespec.RealRunsFile
	RealRepeatsFile      = schedulespec.RealRepeatsFile
	DispatchFile         = schedulespec.DispatchFile
	SimDir               = schedulespec.SimDir
	ReplayDir            = schedulespec.ReplayDir
	FasterDir            = schedulespec.FasterDir
	SlowerDir            = schedulespec.SlowerDir
	DrawsDir             = schedulespec.DrawsDir
	StudyPredictionError = schedulespec.StudyPredictionError
	StudyDecisionCost    = schedulespec.StudyDecisionCost
	PredictorLearned     = schedulespec.PredictorLearned
	PredictorTable       = schedulespec.PredictorTable
)

// DefaultConfig is schedulespec.DefaultConfig.
func DefaultConfig() Config { return schedulespec.DefaultConfig() }

// RealRunDir is schedulespec.RealRunDir.
func RealRunDir(policy string, u float64) string { return schedulespec.RealRunDir(policy, u) }

// RealDrawDir is schedulespec.RealDrawDir.
func RealDrawDir(policy string, u float64, draw int) string {
	return schedulespec.RealDrawDir(policy, u, draw)
}

// RealRepeatDir is schedulespec.RealRepeatDir.
func RealRepeatDir(policy string, u float64, repeat int) string {
	return schedulespec.RealRepeatDir(policy, u, repeat)
}

// ReplicationFile is schedulespec.ReplicationFile.
func ReplicationFile(policy string, k int, name string) string {
	return schedulespec.ReplicationFile(policy, k, name)
}

// unitConfig is the part of the section a single simulation depends on:
// all of it but the lists of policies, the load, the replications and the
// sweep, which say which simulations to run (a Unit names one).
func unitConfig(c Config) Config {
	c.Policies, c.Load, c.Replications, c.Sweep, c.Studies, c.Real = nil, 0, 0, Sweep{}, Studies{}, Real{}
	return c
}

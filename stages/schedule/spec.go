package schedule

import (
	"github.com/mlsched/mlsched/stages/lib/policy"
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
	BandFasterDir        = schedulespec.BandFasterDir
	BandSlowerDir        = schedulespec.BandSlowerDir
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

// unitConfig is the part of the section a simulation of spec depends on:
// the cluster, the memory model and the predictor, and of the options'
// settings those that spec reads (policy.Spec.Reads), so that changing
// one reruns only the simulations it changes. The lists of policies, the
// load, the replications, the sweep, the studies and the real runs say
// which simulations to run (a Unit names one), and are left out too.
func unitConfig(c Config, spec string) Config {
	c.Policies, c.Load, c.Replications, c.Sweep, c.Studies, c.Real = nil, 0, 0, Sweep{}, Studies{}, Real{}
	ps, err := policy.ParseSpec(spec)
	if err != nil {
		return c // Validate let no such spec through; keep every setting
	}
	r := ps.Reads()
	if !r.Batching {
		// max_batch also sets how far the learned predictor is tabulated
		// (cluster.New), which changes none of its predictions.
		c.Batching = Batching{}
	}
	if !r.Split {
		c.Splitting = Splitting{}
	}
	if !r.MigrationCost {
		c.Migration.Cost = 0
	}
	if !r.MinGain {
		c.Migration.MinGain = 0
	}
	c.Learned.Ablations = false // which simulations to run, not how one runs
	switch {
	case !r.Serving:
		c.Learned = schedulespec.Learned{}
	case !r.Learned:
		c.Learned.Cache = schedulespec.Cache{} // the Threshold rule in the network's place caches nothing
	}
	if !r.Weights {
		c.Dynamic = policy.Weights{}
	}
	return c
}

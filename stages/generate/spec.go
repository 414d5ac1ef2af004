package generate

import "github.com/mlsched/mlsched/stages/spec/generatespec"

// The stage's configuration is declared in package generatespec, which the
// command line links without the stage's code; these are the same types
// and constants, as os.FileMode is fs.FileMode.
type (
	Config   = generatespec.Config
	Workload = generatespec.Workload
	Arrival  = generatespec.Arrival
	Bursty   = generatespec.Bursty
	Diurnal  = generatespec.Diurnal
	Classes  = generatespec.Classes
	Class    = generatespec.Class
)

// Names and limits of the configuration: generatespec's.
const (
	ProcessPoisson   = generatespec.ProcessPoisson
	ProcessBursty    = generatespec.ProcessBursty
	ProcessDiurnal   = generatespec.ProcessDiurnal
	BurstyGamma      = generatespec.BurstyGamma
	BurstyMMPP       = generatespec.BurstyMMPP
	MaxJobs          = generatespec.MaxJobs
	MaxBatchSize     = generatespec.MaxBatchSize
	MaxGammaCV       = generatespec.MaxGammaCV
	WorkloadTrain    = generatespec.WorkloadTrain
	WorkloadEval     = generatespec.WorkloadEval
	ClassInteractive = generatespec.ClassInteractive
	ClassBatch       = generatespec.ClassBatch
)

// DefaultConfig is generatespec.DefaultConfig.
func DefaultConfig() Config { return generatespec.DefaultConfig() }

package profile

import "github.com/mlsched/mlsched/stages/spec/profilespec"

// The stage's configuration is declared in package profilespec, which the
// command line links without the stage's code; these are the same types
// and constants, as os.FileMode is fs.FileMode.
type (
	Config     = profilespec.Config
	Model      = profilespec.Model
	MatMul     = profilespec.MatMul
	Contention = profilespec.Contention
	Serving    = profilespec.Serving
	Operators  = profilespec.Operators
	Sample     = profilespec.Sample
	Summary    = profilespec.Summary
	MachineRow = profilespec.MachineRow
)

// Names and limits of the configuration and the rows: profilespec's.
const (
	FP32 = profilespec.FP32
	FP16 = profilespec.FP16

	ProviderCPU  = profilespec.ProviderCPU
	ProviderCUDA = profilespec.ProviderCUDA

	MinLatencyS    = profilespec.MinLatencyS
	MaxLatencyS    = profilespec.MaxLatencyS
	KindInference  = profilespec.KindInference
	KindMatMul     = profilespec.KindMatMul
	KindContention = profilespec.KindContention
	KindServing    = profilespec.KindServing
	ServingModel   = profilespec.ServingModel
	KindProvider   = profilespec.KindProvider
	SourceMeasured = profilespec.SourceMeasured
	SamplesFile    = profilespec.SamplesFile
	SummaryFile    = profilespec.SummaryFile
	MachineFile    = profilespec.MachineFile
)

// ModelFile is profilespec.ModelFile.
func ModelFile(name, precision string) string { return profilespec.ModelFile(name, precision) }

// DefaultConfig is profilespec.DefaultConfig.
func DefaultConfig() Config { return profilespec.DefaultConfig() }

package profile

import "github.com/mlsched/mlsched/stages/spec/profilespec"

// The stage's configuration is declared in package profilespec, which the
// command line links without the stage's code; these are the same types
// and constants, as os.FileMode is fs.FileMode.
type (
	Config     = profilespec.Config
	MatMul     = profilespec.MatMul
	Contention = profilespec.Contention
)

// Names and limits of the configuration: profilespec's.
const (
	FP32 = profilespec.FP32
	FP16 = profilespec.FP16

	ProviderCPU  = profilespec.ProviderCPU
	ProviderCUDA = profilespec.ProviderCUDA
)

// DefaultConfig is profilespec.DefaultConfig.
func DefaultConfig() Config { return profilespec.DefaultConfig() }

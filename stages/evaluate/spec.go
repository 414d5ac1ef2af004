package evaluate

import (
	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/spec/evaluatespec"
)

// The stage's configuration is declared in package evaluatespec, which the
// command line links without the stage's code; these are the same types
// and constants, as os.FileMode is fs.FileMode.
type (
	Config       = evaluatespec.Config
	Indifference = evaluatespec.Indifference
	Timeline     = evaluatespec.Timeline
)

// Output file names: evaluatespec's.
const (
	MetricsFile = evaluatespec.MetricsFile
	ReportMD    = evaluatespec.ReportMD
	ReportHTML  = evaluatespec.ReportHTML
	ChartsDir   = evaluatespec.ChartsDir
)

// DefaultConfig is evaluatespec.DefaultConfig.
func DefaultConfig() Config { return evaluatespec.DefaultConfig() }

// MetricRow is one row of metrics.parquet: section.MetricRow, which every
// section of the report writes.
type MetricRow = section.MetricRow

package section

import (
	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/lib/metrics"
)

// Section is one part of the report: what it reads, the rows it adds to
// metrics.parquet and the Markdown it renders. A section is a value made
// afresh for each report, so that it can keep what it read for the steps
// after.
type Section interface {
	// Name names the section in the registry, which refuses two of the
	// same name, and in the stage's errors.
	Name() string
	// Read reads what the section shows beyond ev: the files of the
	// upstream artifacts that it alone reads (nothing for most), or what
	// it works out from ev once. Read sees the simulations summarized but
	// not yet compared.
	Read(ev *Evaluation) error
	// Rows are the section's numbers for metrics.parquet, every number
	// it renders; nil for none.
	Rows(ev *Evaluation) []MetricRow
	// Render builds the section. One without a Title has nothing to say
	// in this run, and the report leaves it out.
	Render(ev *Evaluation) (report.Section, error)
}

// Comparer is a section that sets simulated policies against others
// beside the baselines (the learned policies against their counterparts,
// say): the stage compares its pairs as it does the baselines'
// (Analysis.Paired), from the replications' values and per-job series it
// keeps once the traces are released.
type Comparer interface {
	Section
	// Pairs are the pairs to compare, both of each simulated; called
	// after Read.
	Pairs(ev *Evaluation) []Pair
	// Compared hands the section each pair's differences (Policy minus
	// Other, metrics.CompareAll's), in the order of Pairs.
	Compared(diffs [][]metrics.Difference)
}

// Pair is two simulated policy specs to compare on the same jobs.
type Pair struct{ Policy, Other string }

// Annotator is a section that sees every row of metrics.parquet, all the
// sections' in their final order, before they are written, and may fill
// in their Previous (the change since an earlier run does).
type Annotator interface {
	Section
	Annotate(rows []MetricRow)
}

package profile

import (
	"context"
	"fmt"

	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/onnxgraph"
	"github.com/mlsched/mlsched/stages/lib/opcost"
	"github.com/mlsched/mlsched/stages/lib/opcost/nodeprof"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
)

// OperatorRow is a row of operators.parquet (profilespec.OperatorRow).
type OperatorRow = profilespec.OperatorRow

// timeOperators times each node of one series' model (profile.operators)
// at each of batches, after the series' timed runs and apart from them:
// one session per batch size with onnxruntime's profiler on, warmup
// untimed runs, then runs whose fastest gives the nodes' kernel times
// (package nodeprof). The profiler's own work slows a run, so none of
// these runs is a sample; the train stage calibrates the nodes' sum to
// the series' timed latencies instead.
func timeOperators(ctx context.Context, tg target, model []byte, entry catalog.Model, precision string, batches []int, threads, warmup, runs int) ([]OperatorRow, error) {
	g, err := onnxgraph.Parse(model)
	if err != nil {
		return nil, err
	}
	var rows []OperatorRow
	for _, b := range batches {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		nt, err := nodeprof.Profile(g, model, int(entry.BatchAxis), nodeprof.Run{Batch: b, Threads: threads, Warmup: warmup, Runs: runs}, "")
		if err != nil {
			return nil, fmt.Errorf("batch %d: %w", b, err)
		}
		c := opcost.Config{Device: tg.device, Model: entry.Name, Precision: precision, Batch: b, Threads: threads}
		rows = append(rows, opcost.Rows(c, opcost.OpsOf(nt.Pass, nt))...)
	}
	return rows, nil
}

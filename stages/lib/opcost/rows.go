package opcost

import (
	"fmt"
	"time"

	"github.com/mlsched/mlsched/stages/spec/profilespec"
)

// Config names one profiled configuration of a model.
type Config struct {
	Device, Model, Precision string
	Batch, Threads           int
}

// Rows are a configuration's nodes as rows of the profile's
// operators.parquet.
func Rows(c Config, ops []Op) []profilespec.OperatorRow {
	rows := make([]profilespec.OperatorRow, len(ops))
	for i, o := range ops {
		rows[i] = profilespec.OperatorRow{Device: c.Device, Model: c.Model, Precision: c.Precision, Batch: int32(c.Batch), Threads: int32(c.Threads),
			Index: int32(i), Node: o.Name, Op: o.Op, After: o.After, From: int32(o.From), FLOPs: o.FLOPs,
			BytesRead: o.BytesRead, BytesWritten: o.BytesWritten, Kernel: !o.Fused, TimeS: o.Time.Seconds()}
	}
	return rows
}

// FromRows reads operators.parquet's rows back into configurations, in
// the order they first appear, each with its nodes. A configuration's
// rows must be consecutive and numbered from 0, each node coming after
// (From) one before it; the error names the row (from 1) at fault.
func FromRows(rows []profilespec.OperatorRow) ([]Config, [][]Op, error) {
	var cs []Config
	var ops [][]Op
	for i, r := range rows {
		c := Config{r.Device, r.Model, r.Precision, int(r.Batch), int(r.Threads)}
		if r.Index == 0 {
			cs, ops = append(cs, c), append(ops, nil)
		}
		last := len(cs) - 1
		bad := func(format string, args ...any) error {
			return fmt.Errorf("row %d (%s %s %s batch %d threads %d, node %q): %s", i+1, c.Device, c.Model, c.Precision, c.Batch, c.Threads, r.Node, fmt.Sprintf(format, args...))
		}
		switch {
		case last < 0 || cs[last] != c || int(r.Index) != len(ops[last]):
			return nil, nil, bad("index %d does not follow the row before", r.Index)
		case r.From < 0 || r.From > r.Index || (r.From == 0) != (r.After == ""):
			return nil, nil, bad("from %d with after %q", r.From, r.After)
		case r.From > 0 && ops[last][r.From-1].Op != r.After:
			return nil, nil, bad("after %q, but node %d is a %s", r.After, r.From-1, ops[last][r.From-1].Op)
		case r.Op == "" || r.FLOPs < 0 || r.BytesRead < 0 || r.BytesWritten < 0 || !(r.TimeS >= 0 && r.TimeS < profilespec.MaxLatencyS):
			return nil, nil, bad("op %q, flops %d, bytes %d and %d, time_s %g", r.Op, r.FLOPs, r.BytesRead, r.BytesWritten, r.TimeS)
		}
		ops[last] = append(ops[last], Op{Op: r.Op, Name: r.Node, After: r.After, From: int(r.From), FLOPs: r.FLOPs,
			BytesRead: r.BytesRead, BytesWritten: r.BytesWritten, Fused: !r.Kernel, Time: time.Duration(r.TimeS*float64(time.Second) + 0.5)})
	}
	return cs, ops, nil
}

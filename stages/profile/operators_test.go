package profile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/lib/opcost"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
)

// TestOperatorsTimesEachNode profiles the mlp with profile.operators on
// and off: on, operators.parquet holds each node of every fp32
// configuration at the operator batch sizes the series measured (not 8,
// which it does not; not fp16), readable back into configurations whose
// Gemms count four times the FLOPs at batch 4 as at 1; and the timed
// samples are the same rows, run for run, as with it off (the profiled
// runs add none). Off, there is no operators.parquet.
func TestOperatorsTimesEachNode(t *testing.T) {
	if testing.Short() {
		t.Skip("measures inference")
	}
	lib := library(t)
	cfg := DefaultConfig()
	cfg.Models = profilespec.ZooModels("mlp")
	cfg.Precisions = []string{FP32, FP16}
	cfg.BatchSizes = []int{1, 2, 4}
	cfg.Threads = []int{1}
	cfg.Warmup, cfg.Repeats, cfg.MinRepeats, cfg.MaxRepeats, cfg.MinTime = 1, 5, 5, 5, 0
	cfg.MatMul = MatMul{Sizes: []int{16}, Repeats: 1}
	cfg.Contention = Contention{Models: []string{"mlp"}, Batch: 1, Sessions: []int{1}, Repeats: 1, Rounds: 1}
	cfg.Serving = Serving{}
	counts := map[bool]map[string]int{}
	for _, on := range []bool{false, true} {
		c := cfg
		if on {
			c.Operators = Operators{BatchSizes: []int{1, 4, 8}, Runs: 3}
		}
		dir := t.TempDir()
		if err := Run(context.Background(), c, 1, lib, "", Output{Dir: dir, Metadata: map[string]string{parquetio.KeyStage: "profile"}}); err != nil {
			t.Fatal(err)
		}
		samples, err := parquetio.ReadAll[Sample](filepath.Join(dir, SamplesFile))
		if err != nil {
			t.Fatal(err)
		}
		counts[on] = map[string]int{}
		for _, s := range samples {
			counts[on][fmt.Sprintf("%s %s %s batch %d threads %d x%d", s.Kind, s.Model, s.Precision, s.Batch, s.Threads, s.Concurrency)]++
		}
		path := filepath.Join(dir, profilespec.OperatorsFile)
		if !on {
			if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("operators off: %s is there (%v)", profilespec.OperatorsFile, err)
			}
			continue
		}
		rows, err := parquetio.ReadAll[OperatorRow](path)
		if err != nil {
			t.Fatal(err)
		}
		cs, ops, err := opcost.FromRows(rows)
		if err != nil {
			t.Fatal(err)
		}
		want := []opcost.Config{{Device: "cpu", Model: "mlp", Precision: FP32, Batch: 1, Threads: 1}, {Device: "cpu", Model: "mlp", Precision: FP32, Batch: 4, Threads: 1}}
		if !reflect.DeepEqual(cs, want) {
			t.Fatalf("configurations %+v, want %+v", cs, want)
		}
		var gemm [2]int64
		for i, nodes := range ops {
			var sum time.Duration
			for _, o := range nodes {
				sum += o.Time
				if o.Op == "Gemm" || o.Op == "MatMul" {
					gemm[i] += o.FLOPs
				}
			}
			if sum <= 0 || sum > time.Second {
				t.Errorf("%+v: the nodes' times sum to %v", cs[i], sum)
			}
		}
		if gemm[0] <= 0 || gemm[1] != 4*gemm[0] {
			t.Errorf("the matrix products' FLOPs: %d at batch 1, %d at batch 4; want four times", gemm[0], gemm[1])
		}
	}
	if !reflect.DeepEqual(counts[false], counts[true]) {
		t.Errorf("the timed samples differ with profile.operators on:\noff %v\non  %v", counts[false], counts[true])
	}
}

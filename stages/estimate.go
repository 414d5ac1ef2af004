package stages

import (
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/mlsched/mlsched/pipeline"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// Bytes per row of the big Parquet files, rounded up from a full run's
// store (docs/artifacts.md, "How big the artifacts are", has the measured
// sizes): they guard against a typo that would fill the disk, not a close
// fit.
const (
	jobRowBytes      = 22
	traceRowBytes    = 47
	devicesRowBytes  = 21 // per job, splits included
	sweepPointBytes  = 10 << 10
	fileOverheadByte = 16 << 10 // footer and page headers of a small file
)

// generateEstimate is generate's output size: each workload's jobs, or
// for an imported workload the file's own size (its jobs.parquet takes
// fewer bytes a job than a CSV row, and about as many as its Parquet).
// path resolves an import path as the stage does.
type generateEstimate struct {
	cfg  generatespec.Config
	reps int // schedule.replications
	path func(string) string
}

var _ pipeline.OutputEstimator = generateEstimate{}

// EstimateOutput implements pipeline.OutputEstimator.
func (e generateEstimate) EstimateOutput(map[string]*pipeline.Manifest) (int64, string) {
	var b float64
	var parts []string
	for _, nw := range e.cfg.Workloads() {
		w := struct {
			name string
			w    generatespec.Workload
		}{nw.Name, *nw.W}
		if w.w.Import != "" {
			fi, err := os.Stat(e.path(w.w.Import))
			if err == nil {
				b += float64(fi.Size())
			}
			parts = append(parts, fmt.Sprintf("generate.%s.import's size", w.name))
			continue
		}
		n := 1
		if w.name == generatespec.WorkloadEval {
			n = generatespec.EvalWorkloads(e.cfg, e.reps)
		}
		b += float64(n) * float64(w.w.Jobs) * jobRowBytes
		if n > 1 {
			parts = append(parts, fmt.Sprintf("%d replications × generate.%s.jobs = %d jobs × about %d B a job", n, w.name, w.w.Jobs, jobRowBytes))
		} else {
			parts = append(parts, fmt.Sprintf("generate.%s.jobs = %d jobs × about %d B a job", w.name, w.w.Jobs, jobRowBytes))
		}
	}
	return clampBytes(b + 3*fileOverheadByte), strings.Join(parts, " + ")
}

// scheduleEstimate is schedule's output size: a trace and a devices file
// per policy and replication, of the eval workload's jobs (as many as
// generate's output holds), and a memo entry per sweep point.
type scheduleEstimate struct{ cfg schedulespec.Config }

var _ pipeline.OutputEstimator = scheduleEstimate{}

// EstimateOutput implements pipeline.OutputEstimator.
func (e scheduleEstimate) EstimateOutput(in map[string]*pipeline.Manifest) (int64, string) {
	var jobs int64
	if m := in[Generate]; m != nil {
		for _, f := range m.Files {
			if f.Path == generatespec.JobsFile(generatespec.WorkloadEval) && f.Rows > 0 {
				jobs = f.Rows
			}
		}
	}
	runs := float64(len(e.cfg.Policies)) * float64(e.cfg.Replications)
	points := float64(len(e.cfg.Policies)) * float64(len(e.cfg.Sweep.Loads))
	b := runs*float64(jobs)*(traceRowBytes+devicesRowBytes) + runs*2*fileOverheadByte + points*sweepPointBytes
	return clampBytes(b), fmt.Sprintf("%d policies × %d replications × %d eval jobs × about %d B a job, and %.0f sweep points",
		len(e.cfg.Policies), e.cfg.Replications, jobs, traceRowBytes+devicesRowBytes, points)
}

func clampBytes(b float64) int64 {
	if b >= math.MaxInt64 || math.IsNaN(b) {
		return math.MaxInt64
	}
	return int64(b)
}

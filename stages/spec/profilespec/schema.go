package profilespec

import (
	"errors"
	"fmt"
	"math"

	"github.com/mlsched/mlsched/stages/lib/ident"
)

// The range of a sample's latency. A run of one model takes more than a
// nanosecond and less than an hour on any hardware; a value outside is a
// unit mistake, and a latency near float64's limits (1e300) overflows the
// simulator's sums of predicted times.
const (
	MinLatencyS = 1e-9
	MaxLatencyS = 3600.0
)

// Sample is one timed run: a row of samples.parquet. Every latency the
// profile measured is kept, so later stages draw service times from the
// measured distribution rather than from a summary of it.
type Sample struct {
	// Kind is KindInference, KindMatMul, KindContention or KindServing.
	Kind string `parquet:"kind,dict"`
	// Backend is what executed the run: "onnxruntime" or "gonum".
	Backend string `parquet:"backend,dict"`
	// Provider is the onnxruntime execution provider ("go" for gonum).
	Provider string `parquet:"provider,dict"`
	// Device is the hardware: "cpu" here; imported rows name their own.
	Device string `parquet:"device,dict"`
	// Model is a catalog model, "matmul", or ServingModel.
	Model string `parquet:"model,dict"`
	// Precision is "fp32" or "fp16".
	Precision string `parquet:"precision,dict"`
	// Batch is the batch size (for matmul, the matrix size n; for
	// serving, the decisions in one call).
	Batch int32 `parquet:"batch"`
	// Threads is the intra-op thread count of the run.
	Threads int32 `parquet:"threads"`
	// Concurrency is how many sessions ran at once (1 but for contention).
	Concurrency int32 `parquet:"concurrency"`
	// Repeat numbers the timed runs of one configuration from 0.
	Repeat int32 `parquet:"repeat"`
	// LatencyS is the run's wall-clock time in seconds.
	LatencyS float64 `parquet:"latency_s"`
	// Source is "measured", or "import:<file>" for imported rows.
	Source string `parquet:"source,dict"`
}

// Validate reports the first value of s that no later stage can use: a
// kind other than inference, matmul, contention or serving; an empty
// backend, provider, device or model; a precision other than fp32 or fp16;
// a batch, thread count or concurrency below 1; a device name outside
// package ident's rule; a latency that is not a number of seconds in
// [MinLatencyS, MaxLatencyS]; or a serving row that is not one call of
// the placement network as the schedule stage serves it (model
// ServingModel, fp32, one thread, concurrency 1). The error starts with
// the samples.parquet column at fault ("column batch: ..."); the caller
// adds the file and row.
//
// The profile stage checks imported rows with it, and the schedule stage's
// service model the rows it reads, so a file one accepts the other does.
func (s Sample) Validate() error {
	switch {
	case s.Kind != KindInference && s.Kind != KindMatMul && s.Kind != KindContention && s.Kind != KindServing:
		return fmt.Errorf("column kind: want %s, %s, %s or %s, got %q", KindInference, KindMatMul, KindContention, KindServing, s.Kind)
	case s.Backend == "":
		return errors.New("column backend: empty")
	case s.Provider == "":
		return errors.New("column provider: empty")
	case s.Device == "":
		return errors.New("column device: empty")
	case !ident.Valid(s.Device):
		// schedule.cluster's profile_device names it, under the same rule.
		return fmt.Errorf("column device: %w", ident.Check(s.Device))
	case s.Model == "":
		return errors.New("column model: empty")
	case s.Precision != FP32 && s.Precision != FP16:
		return fmt.Errorf("column precision: want %s or %s, got %q", FP32, FP16, s.Precision)
	case s.Batch < 1:
		return fmt.Errorf("column batch: must be at least 1, got %d", s.Batch)
	case s.Threads < 1:
		return fmt.Errorf("column threads: must be at least 1, got %d", s.Threads)
	case s.Concurrency < 1:
		return fmt.Errorf("column concurrency: must be at least 1, got %d", s.Concurrency)
	case !finite(s.LatencyS) || s.LatencyS <= 0:
		return fmt.Errorf("column latency_s: must be a positive finite number of seconds, got %v", s.LatencyS)
	case s.LatencyS < MinLatencyS || s.LatencyS > MaxLatencyS:
		return fmt.Errorf("column latency_s: must be from %g s to %g s (one run of one model), got %v", MinLatencyS, MaxLatencyS, s.LatencyS)
	}
	if s.Kind == KindServing {
		// The schedule stage serves one network, in fp32, on one thread
		// of the caller's: rows of anything else would be charged as if
		// they were that.
		switch {
		case s.Model != ServingModel:
			return fmt.Errorf("column model: a %s row times the placement network, want %q, got %q", KindServing, ServingModel, s.Model)
		case s.Precision != FP32:
			return fmt.Errorf("column precision: a %s row times the placement network in %s, got %q", KindServing, FP32, s.Precision)
		case s.Threads != 1:
			return fmt.Errorf("column threads: a %s row times the serving path's one intra-op thread, got %d", KindServing, s.Threads)
		case s.Concurrency != 1:
			return fmt.Errorf("column concurrency: a %s row times one call alone, got %d", KindServing, s.Concurrency)
		}
	}
	return nil
}

// The kinds of samples.
const (
	KindInference  = "inference"
	KindMatMul     = "matmul"
	KindContention = "contention"
	// KindServing rows time the learned policy's serving path, one call
	// of Batch decisions each (profile.serving): the distribution
	// schedule.learned.cost: profile charges a batch of decisions from.
	KindServing = "serving"
	// KindProvider rows of the summary say which execution providers exist.
	KindProvider = "provider"
)

// ServingModel is the model column of KindServing rows: the train stage's
// placement network, served by package placementnet.
const ServingModel = "placement"

// SourceMeasured marks rows measured by this stage on this machine.
const SourceMeasured = "measured"

// Summary is one configuration's statistics: a row of summary.parquet.
type Summary struct {
	Kind        string `parquet:"kind,dict"`
	Backend     string `parquet:"backend,dict"`
	Provider    string `parquet:"provider,dict"`
	Device      string `parquet:"device,dict"`
	Model       string `parquet:"model,dict"`
	Precision   string `parquet:"precision,dict"`
	Batch       int32  `parquet:"batch"`
	Threads     int32  `parquet:"threads"`
	Concurrency int32  `parquet:"concurrency"`
	Source      string `parquet:"source,dict"`
	// Supported is false when the configuration could not run at all (an
	// fp16 model the CPU provider has no kernels for, an absent GPU
	// provider); Note says why, and the statistics are zero.
	Supported bool    `parquet:"supported"`
	Note      string  `parquet:"note"`
	Count     int64   `parquet:"count"`
	MeanS     float64 `parquet:"mean_s"`
	P50S      float64 `parquet:"p50_s"`
	P95S      float64 `parquet:"p95_s"`
	P99S      float64 `parquet:"p99_s"`
	StddevS   float64 `parquet:"stddev_s"`
	// Spread is p95/p50: near 1 on a quiet machine.
	Spread float64 `parquet:"spread"`
	// SamplesPerS is throughput in samples (batch items) per second over all
	// concurrent sessions, from the mean latency.
	SamplesPerS float64 `parquet:"samples_per_s"`
	// GFLOPS is useful arithmetic per second at the median latency: the
	// catalog's FLOPs per sample times the batch, or 2n³ for matmul.
	GFLOPS float64 `parquet:"gflops"`
}

// MachineRow is one observation of how busy the machine was while the
// profile measured it: a row of machine.parquet. The profile observes the
// machine before its first measurement, after each part (a model's
// series, the contention rounds, the serving path, the products) and so
// after its last; each row's CPU figures cover the interval since the
// observation before it, the first's an idle wait before anything was
// measured. A figure that cannot be observed on this machine (no /proc,
// as on an OS other than Linux) is NaN.
type MachineRow struct {
	// Seq numbers the observations from 0, in the order they were taken.
	Seq int32 `parquet:"seq"`
	// During names what the profile measured in the row's interval
	// (DuringBefore for the first, which measured nothing).
	During string `parquet:"during"`
	// ElapsedS is the time from the first observation's start to this
	// one, in seconds; IntervalS the length of the row's interval.
	ElapsedS  float64 `parquet:"elapsed_s"`
	IntervalS float64 `parquet:"interval_s"`
	// Cores is the number of cores the CPU fractions are of: the cpuN
	// lines of /proc/stat, else the cores Go sees.
	Cores int32 `parquet:"cores"`
	// Load1, Load5 and Load15 are /proc/loadavg's 1-, 5- and 15-minute
	// load averages at the observation. They count the profile's own
	// sessions once it runs: before it, they say what else ran; during
	// it, OthersCPU does.
	Load1  float64 `parquet:"load1"`
	Load5  float64 `parquet:"load5"`
	Load15 float64 `parquet:"load15"`
	// OthersCPU is the fraction of all cores' time in the interval that
	// other processes used: /proc/stat's busy time less this process's
	// own CPU time (getrusage), in [0, 1]. SelfCPU is this process's own
	// share, and Steal the share a hypervisor gave to other machines
	// (/proc/stat's steal; 0 where the kernel has no such column). The
	// three are NaN for an interval shorter than a tenth of a second: too
	// few ticks to count.
	OthersCPU float64 `parquet:"others_cpu"`
	SelfCPU   float64 `parquet:"self_cpu"`
	Steal     float64 `parquet:"steal"`
	// ReferenceS is the median of five timings of a fixed computation
	// (a ReferenceN×ReferenceN float64 product in pure Go, on one
	// goroutine), taken after the observation: over the profile its
	// spread says whether this process got a core when it asked.
	ReferenceS float64 `parquet:"reference_s"`
}

// ReferenceN is the size of MachineRow's reference computation, a
// ReferenceN×ReferenceN float64 product: 4.2 million operations, a few
// milliseconds on one core.
const ReferenceN = 128

// DuringBefore is the During of machine.parquet's first row: the idle
// wait before the profile measured anything.
const DuringBefore = "before"

// Output file names.
const (
	SamplesFile = "samples.parquet"
	SummaryFile = "summary.parquet"
	// MachineFile holds how busy the machine was while the profile
	// measured it (MachineRow); a profile that measured nothing (an
	// import alone) has none, and neither has one made before it was
	// recorded.
	MachineFile = "machine.parquet"
)

// ModelFile names the .onnx file of a model build, in the stage's output.
func ModelFile(name, precision string) string {
	if precision == FP32 {
		return name + ".onnx"
	}
	return name + "-" + precision + ".onnx"
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// OperatorsFile holds the per-node times of profile.operators.
const OperatorsFile = "operators.parquet"

// OperatorRow is one node of a model at one configuration, as
// onnxruntime's profiler timed it: a row of operators.parquet. The
// figures are onnxgraph's for the node at the batch size; the rows of a
// configuration are its nodes that run per run, in the file's order
// (those folded into constants are left out: they cost nothing).
type OperatorRow struct {
	Device    string `parquet:"device,dict"`
	Model     string `parquet:"model,dict"`
	Precision string `parquet:"precision,dict"`
	Batch     int32  `parquet:"batch"`
	Threads   int32  `parquet:"threads"`
	// Index numbers the configuration's rows from 0.
	Index int32 `parquet:"index"`
	// Node is the node's name in the file, Op its operator.
	Node string `parquet:"node"`
	Op   string `parquet:"op,dict"`
	// After is the operator of the node that computes its first input
	// that changes from run to run ("" for the graph's input), and From
	// 1 + that node's Index (0 with After ""): what it may be fused into.
	After string `parquet:"after,dict"`
	From  int32  `parquet:"from"`
	FLOPs int64  `parquet:"flops"`
	// BytesRead and BytesWritten are its inputs' and outputs' sizes in
	// the graph's element types.
	BytesRead    int64 `parquet:"bytes_read"`
	BytesWritten int64 `parquet:"bytes_written"`
	// Kernel says a kernel's time went to the node; false for a node
	// onnxruntime fused into another's kernel.
	Kernel bool `parquet:"kernel"`
	// TimeS is its kernels' time in the fastest profiled run, in seconds
	// (the profiler counts whole microseconds).
	TimeS float64 `parquet:"time_s"`
}

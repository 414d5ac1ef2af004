package generate

import (
	"math"
	"math/rand/v2"

	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
)

// Precisions: generatespec's.
const (
	PrecisionFP32 = generatespec.PrecisionFP32
	PrecisionFP16 = generatespec.PrecisionFP16
)

// StatsFile is the name of the per-workload statistics table.
const StatsFile = "stats.parquet"

// JobsFile returns the name of the file holding workload's jobs
// (generatespec.JobsFile).
func JobsFile(workload string) string { return generatespec.JobsFile(workload) }

// Job is one row of a jobs-<workload>.parquet file. Every column but the
// id and the two times is dictionary-encoded: it takes one value per
// (class, model, batch size, precision) at most. Ids are delta-encoded.
type Job struct {
	// ID is unique across all workloads of a run (see the package doc).
	ID int64 `parquet:"job_id,delta"`
	// ArrivalS is the arrival time in seconds from the start of the workload.
	ArrivalS float64 `parquet:"arrival_s"`
	// Class is ClassInteractive or ClassBatch.
	Class string `parquet:"class,dict"`
	// SLOS is the class's latency objective in seconds.
	SLOS float64 `parquet:"slo_s,dict"`
	// Model is a catalog model name.
	Model string `parquet:"model,dict"`
	// BatchSize is the number of samples the job runs.
	BatchSize int32 `parquet:"batch_size,dict"`
	// Precision is PrecisionFP32 or PrecisionFP16.
	Precision string `parquet:"precision,dict"`
	// MemoryMiB is the job's memory need: weights plus the batch's inputs and
	// activations, scaled for fp16, in MiB.
	MemoryMiB float64 `parquet:"memory_mib,dict"`
	// TaskGFLOP is the job's work, batch size × the model's FLOPs per sample.
	TaskGFLOP float64 `parquet:"task_gflop,dict"`
	// IntensityFLOPPerByte is the job's roofline arithmetic intensity: its
	// FLOPs over the bytes it moves (the same bytes as its memory need).
	IntensityFLOPPerByte float64 `parquet:"intensity_flop_per_byte,dict"`
	// DeadlineS is ArrivalS + SLOS.
	DeadlineS float64 `parquet:"deadline_s"`
}

// classSpec is a Class prepared for sampling.
type classSpec struct {
	name     string
	slo      float64 // seconds
	min, max int
	// lnLo and lnSpan describe log-uniform draws over [min, max+1):
	// b = ⌊exp(lnLo + u·lnSpan)⌋ has P(b) = ln((b+1)/b) / lnSpan.
	lnLo, lnSpan float64
}

func newClassSpec(name string, c Class) classSpec {
	lo, hi := math.Log(float64(c.BatchMin)), math.Log(float64(c.BatchMax)+1)
	return classSpec{name: name, slo: c.SLO.Seconds(), min: c.BatchMin, max: c.BatchMax, lnLo: lo, lnSpan: hi - lo}
}

// modelSpec holds one model's per-job constants.
type modelSpec struct {
	name       string
	cumWeight  float64 // cumulative weight up to and including this model
	flops      float64 // per sample
	weightB    float64 // fp32 weight bytes
	perSampleB float64 // fp32 input + activation bytes per sample
	// fp32 and fp16 say which precisions the model runs in: the zoo's
	// both, a file's the one it holds.
	fp32, fp16 bool
}

// fp16Job says whether a job of the model drawn in fp16 (or not) runs in
// fp16: as drawn where the model runs in both precisions, in its one
// precision where it runs in one (a file's).
func (m *modelSpec) fp16Job(drawn bool) bool {
	if m.fp32 && m.fp16 {
		return drawn
	}
	return m.fp16
}

// specOf is a catalog model's modelSpec, without a weight.
func specOf(m catalog.Model) modelSpec {
	return modelSpec{
		name:       m.Name,
		flops:      float64(m.FLOPsPerSample),
		weightB:    float64(m.WeightBytes),
		perSampleB: float64(m.InputBytesPerSample + m.ActivationBytesPerSample),
		fp32:       m.HasPrecision(catalog.FP32),
		fp16:       m.HasPrecision(catalog.FP16),
	}
}

// population is the job distribution shared by the workloads: class,
// model, batch size and precision, drawn independently of arrival times.
type population struct {
	interactive     float64
	fp16            float64
	fp16BytesFactor float64
	classes         [2]classSpec // interactive, batch
	models          []modelSpec  // catalog order, zero weights dropped
	totalWeight     float64
}

func newPopulation(c Config, cat *catalog.Catalog) population {
	p := population{
		interactive:     c.InteractiveFraction,
		fp16:            c.FP16Fraction,
		fp16BytesFactor: c.FP16BytesFactor,
		classes: [2]classSpec{
			newClassSpec(ClassInteractive, c.Classes.Interactive),
			newClassSpec(ClassBatch, c.Classes.Batch),
		},
	}
	// Catalog order, not map order, so the cumulative weights and hence the
	// draws are the same on every run.
	for _, m := range cat.All() {
		w := c.Models[m.Name]
		if w <= 0 {
			continue
		}
		p.totalWeight += w
		spec := specOf(m)
		spec.cumWeight = p.totalWeight
		p.models = append(p.models, spec)
	}
	return p
}

// draw fills every field of j except ID and ArrivalS, consuming exactly four
// values from r in a fixed order (class, model, batch size, precision) so a
// job's attributes depend only on its position in the stream. It returns the
// indexes of the class and model for the statistics.
func (p *population) draw(r *rand.Rand, j *Job) (class, model int) {
	uClass, uModel, uBatch, uPrec := r.Float64(), r.Float64(), r.Float64(), r.Float64()
	if uClass >= p.interactive {
		class = 1
	}
	c := &p.classes[class]
	target := uModel * p.totalWeight
	for model < len(p.models)-1 && target >= p.models[model].cumWeight {
		model++
	}
	b := int(math.Exp(c.lnLo + uBatch*c.lnSpan))
	b = min(max(b, c.min), c.max) // exp rounding at the range ends
	m := &p.models[model]
	p.fill(j, c.name, c.slo, m, b, m.fp16Job(uPrec < p.fp16))
	return class, model
}

// fill sets every field of j but ID and ArrivalS from its class, SLO,
// model, batch size and precision: the catalog's figures give its memory
// need, task size and intensity (see the package doc).
func (p *population) fill(j *Job, class string, slo float64, m *modelSpec, b int, fp16 bool) {
	scale, prec := 1.0, PrecisionFP32
	if fp16 {
		scale, prec = p.fp16BytesFactor, PrecisionFP16
	}
	flops := float64(b) * m.flops
	bytes := (m.weightB + float64(b)*m.perSampleB) * scale

	j.Class = class
	j.SLOS = slo
	j.Model = m.name
	j.BatchSize = int32(b)
	j.Precision = prec
	j.MemoryMiB = bytes / (1 << 20)
	j.TaskGFLOP = flops / 1e9
	j.IntensityFLOPPerByte = flops / bytes
	j.DeadlineS = j.ArrivalS + slo
}

// catalogModels is every catalog model as a modelSpec, in catalog order,
// without weights: an imported workload's jobs may name any of them.
func catalogModels(cat *catalog.Catalog) []modelSpec {
	var out []modelSpec
	for _, m := range cat.All() {
		out = append(out, specOf(m))
	}
	return out
}

package generate

import "math"

// Stat is one row of stats.parquet, a tidy table: one measured value per
// (workload, statistic, label). Label names the category for per-class,
// per-model and per-precision statistics and is empty otherwise.
type Stat struct {
	// Workload is WorkloadTrain, WorkloadEval or generatespec.WorkloadHoldout.
	Workload string `parquet:"workload,dict"`
	// Replication is the eval workload's replication (from 1), and 1 for
	// the train workload.
	Replication int32 `parquet:"replication"`
	// Statistic names the measurement, e.g. "interarrival_cv".
	Statistic string `parquet:"statistic,dict"`
	// Label is the category for per-category statistics, e.g. "resnet50".
	Label string `parquet:"label,dict"`
	// Value is the measurement.
	Value float64 `parquet:"value"`
}

// Statistic names in stats.parquet, in the order they are written.
const (
	StatJobs              = "jobs"
	StatDurationS         = "duration_s"
	StatMeanRate          = "mean_rate_per_s"
	StatInterarrivalMeanS = "interarrival_mean_s"
	StatInterarrivalCV    = "interarrival_cv"
	StatClassJobs         = "class_jobs"
	StatClassFraction     = "class_fraction"
	StatModelJobs         = "model_jobs"
	StatModelFraction     = "model_fraction"
	StatPrecisionJobs     = "precision_jobs"
	StatPrecisionFraction = "precision_fraction"
	StatMeanBatchSize     = "mean_batch_size"
	StatMeanMemoryMiB     = "mean_memory_mib"
	StatMeanTaskGFLOP     = "mean_task_gflop"
)

// stats accumulates one workload's statistics job by job, so no job has to
// be kept. Inter-arrival gaps are measured from time 0, so the n gaps of n
// jobs sum to the last arrival time.
type stats struct {
	jobs      int64
	last      float64
	gapMean   float64 // Welford running mean of gaps
	gapM2     float64 // Welford sum of squared deviations
	classes   [2]int64
	models    []int64 // indexed like population.models
	fp16      int64
	batchSum  float64
	memorySum float64
	gflopSum  float64
}

func newStats(models int) *stats { return &stats{models: make([]int64, models)} }

// add records job j, drawn as class and model by population.draw.
func (s *stats) add(j *Job, class, model int) {
	s.jobs++
	gap := j.ArrivalS - s.last
	s.last = j.ArrivalS
	d := gap - s.gapMean
	s.gapMean += d / float64(s.jobs)
	s.gapM2 += d * (gap - s.gapMean)
	s.classes[class]++
	s.models[model]++
	if j.Precision == PrecisionFP16 {
		s.fp16++
	}
	s.batchSum += float64(j.BatchSize)
	s.memorySum += j.MemoryMiB
	s.gflopSum += j.TaskGFLOP
}

// rows renders the statistics of workload as Stat rows in a fixed order;
// models are the models s.models counts, in its order.
func (s *stats) rows(workload string, rep int, p *population, models []modelSpec) []Stat {
	n := float64(s.jobs)
	var rows []Stat
	add := func(statistic, label string, v float64) {
		rows = append(rows, Stat{Workload: workload, Replication: int32(rep), Statistic: statistic, Label: label, Value: v})
	}
	cv := math.NaN() // undefined for a single job
	if s.jobs > 1 {
		cv = math.Sqrt(s.gapM2/(n-1)) / s.gapMean
	}
	add(StatJobs, "", n)
	add(StatDurationS, "", s.last)
	add(StatMeanRate, "", n/s.last)
	add(StatInterarrivalMeanS, "", s.gapMean)
	add(StatInterarrivalCV, "", cv)
	for i, c := range p.classes {
		add(StatClassJobs, c.name, float64(s.classes[i]))
		add(StatClassFraction, c.name, float64(s.classes[i])/n)
	}
	for i, m := range models {
		add(StatModelJobs, m.name, float64(s.models[i]))
		add(StatModelFraction, m.name, float64(s.models[i])/n)
	}
	for _, pr := range []struct {
		name string
		jobs int64
	}{{PrecisionFP32, s.jobs - s.fp16}, {PrecisionFP16, s.fp16}} {
		add(StatPrecisionJobs, pr.name, float64(pr.jobs))
		add(StatPrecisionFraction, pr.name, float64(pr.jobs)/n)
	}
	add(StatMeanBatchSize, "", s.batchSum/n)
	add(StatMeanMemoryMiB, "", s.memorySum/n)
	add(StatMeanTaskGFLOP, "", s.gflopSum/n)
	return rows
}

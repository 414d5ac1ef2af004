package schedulespec

import (
	"fmt"
	"math"
	"path"
	"strconv"
)

// Output file names. The per-policy files live in a subdirectory named
// after the policy (PolicyFile).
const (
	ClusterFile  = "cluster.parquet"
	BoundsFile   = "bounds.parquet"
	RunsFile     = "runs.parquet"
	SweepFile    = "sweep.parquet"
	CapacityFile = "capacity.parquet"
	TraceFile    = "trace.parquet"
	DevicesFile  = "devices.parquet"
	// ServingFile is beside a learned policy's trace: what serving its
	// network's decisions did in each replication (ServingRow).
	ServingFile = "serving.parquet"
	// StudiesFile holds the studies' simulations (StudyRow).
	StudiesFile = "studies.parquet"
	// RealDir holds the real runs (schedule.real): RealRunsFile, the real
	// cluster's ClusterFile, and each run's directory (RealRunDir).
	RealDir      = "real"
	RealRunsFile = "real/runs.parquet"
	// RealRepeatsFile lists the runs of schedule.real.repeats beyond each
	// slice's first (RealRepeatRow), when there are any.
	RealRepeatsFile = "real/repeats.parquet"
	// FasterDir and SlowerDir, in a real run's directory, hold its slice
	// simulated with every service time shorter and longer by
	// schedule.real.sensitivity.
	FasterDir = "sim-faster"
	SlowerDir = "sim-slower"
	// BandFasterDir and BandSlowerDir, in a real run's directory, hold its
	// slice simulated with every service time shorter and longer by the
	// profile's run-to-run variation (RealRunRow.Variation): the edges of
	// the prediction band.
	BandFasterDir = "band-faster"
	BandSlowerDir = "band-slower"
	// DrawsDir, in a real run's directory, holds its slice simulated with
	// the other seeds of schedule.real.draws, one directory each
	// (RealDrawDir).
	DrawsDir = "sim-draws"
	// DispatchFile is beside a real run's trace: its batches as they ran
	// (DispatchRow).
	DispatchFile = "dispatch.parquet"
	// SimDir is the subdirectory of a real run's directory that holds the
	// simulation of the same jobs.
	SimDir = "sim"
	// ReplayDir is the subdirectory of a real run's directory that holds
	// the replay: the simulator's decisions on the same jobs with each
	// batch taking the time the real run measured (sim.Replay).
	ReplayDir = "replay"
)

// RealRunDir is the directory, relative to the stage's output, of the real
// run of policy at offered load u: real/<policy>/load-<u>.
func RealRunDir(policy string, u float64) string {
	return path.Join(RealDir, policy, "load-"+strconv.FormatFloat(u, 'g', -1, 64))
}

// RealRepeatDir is the directory of the repeat'th real run of the policy
// at load u (2 and on; the first is RealRunDir's).
func RealRepeatDir(policy string, u float64, repeat int) string {
	return path.Join(RealRunDir(policy, u), "repeat-"+strconv.Itoa(repeat))
}

// RealDrawDir is the directory of the real run of the policy at load u's
// slice simulated with the draw'th seed (2 and on; the first is the plain
// simulation's, SimDir).
func RealDrawDir(policy string, u float64, draw int) string {
	return path.Join(RealRunDir(policy, u), DrawsDir, strconv.Itoa(draw))
}

// RealRunRow is one row of real/runs.parquet: a policy run for real on a
// slice of the eval workload, and simulated on the same slice.
type RealRunRow struct {
	// Policy is the policy spec, Load the offered load (a fraction of the
	// real cluster's capacity), ScheduleLoad the factor the jobs' arrival
	// times were divided by.
	Policy       string  `parquet:"policy"`
	Load         float64 `parquet:"load"`
	ScheduleLoad float64 `parquet:"schedule_load"`
	// Jobs is the number of jobs in the slice: the first eval jobs that
	// arrive within SpanS seconds at the load.
	Jobs  int64   `parquet:"jobs"`
	SpanS float64 `parquet:"span_s"`
	// WallS is how long the real run took, from its first arrival to its
	// last job's end.
	WallS float64 `parquet:"wall_s"`
	// Trace, Devices and Dispatch are the real run's files, SimTrace and
	// SimDevices the simulation's, relative to the artifact. The traces
	// share TraceRow's schema, the devices files BatchRow's.
	Trace      string `parquet:"trace"`
	Devices    string `parquet:"devices"`
	Dispatch   string `parquet:"dispatch"`
	SimTrace   string `parquet:"sim_trace"`
	SimDevices string `parquet:"sim_devices"`
	// ReplayTrace and ReplayDevices are the replay's files: the same
	// jobs and policy simulated with each batch taking the time the real
	// run measured for the batch its lead job led on that device.
	// ReplayMissed counts the replay's batches the real run had no such
	// batch for (the decisions parted), which took the profile's mean.
	ReplayTrace   string `parquet:"replay_trace"`
	ReplayDevices string `parquet:"replay_devices"`
	ReplayMissed  int64  `parquet:"replay_missed"`
	// Sensitivity is schedule.real.sensitivity; where it is not 0, the
	// slice was simulated again with every service time 1 - Sensitivity
	// times the profile's (FasterTrace, FasterDevices) and 1 +
	// Sensitivity times (SlowerTrace, SlowerDevices).
	Sensitivity   float64 `parquet:"sensitivity"`
	FasterTrace   string  `parquet:"faster_trace"`
	FasterDevices string  `parquet:"faster_devices"`
	SlowerTrace   string  `parquet:"slower_trace"`
	SlowerDevices string  `parquet:"slower_devices"`
	// Variation is the profile's run-to-run variation of a service time,
	// a fraction, as VariationFrom says it was measured: repeated timings
	// of one configuration spread over the profile. Where it is not 0, the
	// slice was simulated again with every service time 1 - Variation
	// times the profile's (BandFasterTrace, BandFasterDevices) and 1 +
	// Variation times (BandSlowerTrace, BandSlowerDevices): how far the
	// prediction band reaches beyond the draws' spread.
	Variation         float64 `parquet:"variation"`
	VariationFrom     string  `parquet:"variation_from"`
	BandFasterTrace   string  `parquet:"band_faster_trace"`
	BandFasterDevices string  `parquet:"band_faster_devices"`
	BandSlowerTrace   string  `parquet:"band_slower_trace"`
	BandSlowerDevices string  `parquet:"band_slower_devices"`
	// Draws is schedule.real.draws; the slice's simulations with the
	// draws' seeds 2 to Draws are in DrawsDir/<k>/ beside SimTrace
	// (RealDrawDir), each a trace and a devices file.
	Draws int64 `parquet:"draws"`
	// LateEvents counts the events due at a time (arrivals, batching
	// timers) the real scheduler handled, and LateP50S, LateP99S and
	// LateMaxS say how late it handled them.
	LateEvents int64   `parquet:"late_events"`
	LateP50S   float64 `parquet:"late_p50_s"`
	LateP99S   float64 `parquet:"late_p99_s"`
	LateMaxS   float64 `parquet:"late_max_s"`
	// Bound counts the batches whose size was new to their lane, so that
	// their tensors were made during the run.
	Bound int64 `parquet:"bound"`
	// WarmRuns is how many untimed runs warmed the lanes' sessions before
	// the run's clock started (each session at its largest batch size,
	// until a run faulted no page in; none where an earlier run had),
	// taking WarmS seconds; WarmFaulting counts the sessions still
	// faulting pages in when they stopped.
	WarmRuns     int64   `parquet:"warm_runs"`
	WarmS        float64 `parquet:"warm_s"`
	WarmFaulting int64   `parquet:"warm_faulting"`
}

// RealRepeatRow is a real run of a slice beyond its first: the same jobs,
// policy and devices run again (schedule.real.repeats). Its files share
// the first run's schemas; it has no simulation of its own, the first
// run's being the same jobs'.
type RealRepeatRow struct {
	Policy string  `parquet:"policy"`
	Load   float64 `parquet:"load"`
	// Repeat numbers the run: 2 and on.
	Repeat int32 `parquet:"repeat"`
	Jobs   int64 `parquet:"jobs"`
	// WallS is how long the run took, from its first arrival to its last
	// job's end.
	WallS float64 `parquet:"wall_s"`
	// Trace, Devices and Dispatch are the run's files, relative to the
	// artifact.
	Trace    string `parquet:"trace"`
	Devices  string `parquet:"devices"`
	Dispatch string `parquet:"dispatch"`
}

// DispatchRow is one row of a real run's dispatch.parquet: a batch as it
// ran, in the order batches started. Times are seconds on the run's clock,
// the jobs' time: StartS is the trace's start (the policy's decision),
// HandedS when the scheduler handed the batch to the lane, PickedS when
// the lane's worker took it, RunS when the jobs' inputs were concatenated
// into one tensor and onnxruntime's Run began, EndS when Run returned (the
// trace's end), NoticedS when the scheduler heard of it.
type DispatchRow struct {
	BatchID   int64   `parquet:"batch_id,delta"`
	Device    string  `parquet:"device,dict"`
	Lane      int32   `parquet:"lane,dict"`
	Model     string  `parquet:"model,dict"`
	Precision string  `parquet:"precision,dict"`
	Jobs      int32   `parquet:"jobs,dict"`
	Samples   int32   `parquet:"samples,dict"`
	StartS    float64 `parquet:"start_s"`
	HandedS   float64 `parquet:"handed_s"`
	PickedS   float64 `parquet:"picked_s"`
	RunS      float64 `parquet:"run_s"`
	EndS      float64 `parquet:"end_s"`
	NoticedS  float64 `parquet:"noticed_s"`
	// Bound is true when the batch's size was new to its lane.
	Bound bool `parquet:"bound"`
	// ProfileMeanS is the profile's mean latency of the batch's model,
	// precision and size on the device's profile curve, alone: what the
	// simulator's draw for it centres on before contention.
	ProfileMeanS float64 `parquet:"profile_mean_s"`
	// Busy is the number of the device's lanes busy when the batch
	// started, itself included.
	Busy int32 `parquet:"busy,dict"`
	// Faults is how many pages the lane's thread faulted in during the
	// batch's Run (-1 where the system does not count them): memory
	// onnxruntime had not used before, which its warm runs did not pay.
	Faults int64 `parquet:"faults"`
}

// The studies of StudyRow.
const (
	StudyPredictionError = "prediction_error"
	StudyDecisionCost    = "decision_cost"
)

// PolicyFile returns the path, relative to the stage's output, of one of a
// policy's files (TraceFile or DevicesFile).
func PolicyFile(policy, name string) string { return path.Join(policy, name) }

// ReplicationFile returns the path of one of a policy's files in
// replication k (from 1) of schedule.replications.
func ReplicationFile(policy string, k int, name string) string {
	if k == 1 {
		return PolicyFile(policy, name)
	}
	return path.Join(policy, fmt.Sprintf("rep-%d", k), name)
}

// TraceRow is one row of <policy>/trace.parquet: what happened to one job.
// Rows are in completion order (rejected jobs at their arrival). Times are
// seconds on the simulated clock, which starts with the workload.
type TraceRow struct {
	// JobID is the job's id in the eval workload.
	JobID int64 `parquet:"job_id,delta"`
	// Policy is the policy simulated.
	Policy string `parquet:"policy,dict"`
	// Device and DeviceKind name the device that ran the job and its kind
	// (measured or declared); both are empty for a rejected job.
	Device     string `parquet:"device,dict"`
	DeviceKind string `parquet:"device_kind,dict"`
	// Lane is the device's lane, from 0; -1 for a rejected job.
	Lane int32 `parquet:"lane,dict"`
	// BatchID numbers the batches a simulation started, from 1, and
	// BatchSize is the samples of the batch as run; both are 0 for a
	// rejected job, which ran in none.
	BatchID   int64 `parquet:"batch_id,delta"`
	BatchSize int32 `parquet:"batch_size,dict"`
	// Class is the job's (its model, precision and batch size are in the
	// eval workload, by JobID).
	Class string `parquet:"class,dict"`
	// ArrivalS is the arrival time as simulated: the workload's divided by
	// schedule.load.
	ArrivalS float64 `parquet:"arrival_s,split"`
	// StartS and EndS bound the job's run; both equal ArrivalS for a
	// rejected job.
	StartS float64 `parquet:"start_s,split"`
	EndS   float64 `parquet:"end_s,split"`
	// WaitS is StartS - ArrivalS, ServiceS is EndS - StartS (including any
	// slowdown from lanes sharing the device), and E2ES is EndS - ArrivalS.
	WaitS    float64 `parquet:"wait_s,uncompressed"`
	ServiceS float64 `parquet:"service_s,uncompressed"`
	E2ES     float64 `parquet:"e2e_s,uncompressed"`
	// SLOMet is true when the job ended by its deadline (arrival plus its
	// SLO); never for a rejected job.
	SLOMet bool `parquet:"slo_met"`
	// Migrated is true when the job moved from the queue it joined to
	// another device's before it ran (the policy's +migrate option).
	Migrated bool `parquet:"migrated"`
	// SplitParts is the number of parts the job ran as across devices (the
	// +split option): 1 for a job run whole, 0 for a rejected job. For a
	// split job Device, Lane, BatchID, BatchSize and EndS are those of the
	// part that finished last, StartS that of the part that started first.
	SplitParts int32 `parquet:"split_parts,dict"`
	// Rejected is true when the job fit on no device; Reason says why and
	// is null otherwise.
	Rejected bool   `parquet:"rejected"`
	Reason   string `parquet:"reason,optional,dict"`
}

// BatchRow is one row of <policy>/devices.parquet: one batch run on one
// lane, in completion order. Without micro-batching each job (or each part
// of a split job) runs as its own batch, so Jobs is 1 and Samples its batch
// size; a micro-batch merges Jobs jobs of one model, precision and class.
type BatchRow struct {
	// Device and DeviceKind name the device; Lane is its lane, from 0.
	Device     string `parquet:"device,dict"`
	DeviceKind string `parquet:"device_kind,dict"`
	Lane       int32  `parquet:"lane,dict"`
	// BatchID is the batch's number, as in the trace.
	BatchID int64 `parquet:"batch_id,delta"`
	// Jobs is the number of jobs in the batch, Samples their samples.
	Jobs    int32 `parquet:"jobs,dict"`
	Samples int32 `parquet:"samples,dict"`
	// MemoryMiB is what the batch held on the device while it ran.
	MemoryMiB float64 `parquet:"memory_mib,dict"`
	// StartS and EndS bound the lane's busy interval.
	StartS float64 `parquet:"start_s"`
	EndS   float64 `parquet:"end_s"`
}

// ClusterRow is one row of cluster.parquet: a device as simulated.
type ClusterRow struct {
	// Device is the device's name, Kind measured or declared.
	Device string `parquet:"device"`
	Kind   string `parquet:"kind"`
	// ProfileDevice and Threads select the profile curves the device's
	// service times come from.
	ProfileDevice string `parquet:"profile_device"`
	Threads       int32  `parquet:"threads"`
	// Lanes, MemoryMiB and Speed are as configured.
	Lanes     int32   `parquet:"lanes"`
	MemoryMiB float64 `parquet:"memory_mib,dict"`
	Speed     float64 `parquet:"speed"`
	// ContentionMeasured is true when the lanes' slowdown comes from the
	// profile's contention rows; false for a declared device and for a
	// measured one the profile ran no concurrent sessions on, whose factors
	// are then all 1.
	ContentionMeasured bool `parquet:"contention_measured"`
	// ContentionFactors[k-1] is the slowdown of each of k busy lanes
	// relative to one alone, for k = 1..Lanes (the first is always 1).
	ContentionFactors []float64 `parquet:"contention_factors,list"`
	// EffectiveLanes is the device's throughput in lone lanes,
	// max over k of k/factor(k): what the bound counts it as.
	EffectiveLanes float64 `parquet:"effective_lanes"`
	// ContentionNote describes where the factors come from.
	ContentionNote string `parquet:"contention_note"`
}

// RunRow is one row of runs.parquet: one simulation of the whole eval
// workload whose trace the artifact holds, in the order of
// schedule.policies, then by replication.
type RunRow struct {
	// Policy is the policy spec and Replication the replication, from 1.
	Policy      string `parquet:"policy"`
	Replication int32  `parquet:"replication"`
	// Jobs is the number of jobs simulated, Load the factor their arrival
	// times were divided by (schedule.load).
	Jobs int64   `parquet:"jobs"`
	Load float64 `parquet:"load"`
	// Trace and Devices are the simulation's files, relative to the
	// artifact.
	Trace   string `parquet:"trace"`
	Devices string `parquet:"devices"`
}

// ServingRow is a row of a learned policy's serving.parquet, one for each
// replication in order: how the placement network's decisions were served
// in that simulation. (A schedule artifact made before the rows were
// gathered in one file has replication k's in rep-k/serving.parquet.) Every
// count is a function of the simulation, the same whichever evaluator
// computed the answers (schedule.learned.evaluator); the evaluator and
// the wall-clock time spent in it are in the manifest's notes
// (serving:<policy>), apart from the reproducible files.
type ServingRow struct {
	Policy      string `parquet:"policy"`
	Replication int32  `parquet:"replication"`
	// Decisions were asked, sent in Batches (MeanBatch decisions each);
	// Migrations were made.
	Decisions  int64   `parquet:"decisions"`
	Batches    int64   `parquet:"batches"`
	MeanBatch  float64 `parquet:"mean_batch"`
	Migrations int64   `parquet:"migrations"`
	// CacheHits were answered from the decision cache (HitRate of the
	// decisions); CacheChanged of them would have gone the other way
	// evaluated exactly (with schedule.learned.cache.audit; else 0).
	CacheHits    int64   `parquet:"cache_hits"`
	HitRate      float64 `parquet:"hit_rate"`
	CacheChanged int64   `parquet:"cache_changed"`
	// Evaluated points went through the network in Calls calls.
	Evaluated int64 `parquet:"evaluated"`
	Calls     int64 `parquet:"calls"`
	// CostS and CostP99S are the median and 99th percentile of the
	// simulated time charged a batch of one decision, seconds: equal for
	// a fixed charge. CostSource says what was charged (CostServing,
	// CostTightLoop or CostConfigured; schedule.learned.cost).
	CostS      float64 `parquet:"cost_s"`
	CostP99S   float64 `parquet:"cost_p99_s"`
	CostSource string  `parquet:"cost_source,dict"`
}

// The sources of what the simulated clock charges a batch of the learned
// policy's decisions (ServingRow.CostSource).
const (
	// CostServing is a draw from the profile's timing of the serving
	// path (samples of kind serving) at the batch's size, keyed to the
	// replication's seed and the batch's ordinal: schedule.learned.cost:
	// profile.
	CostServing = "serving"
	// CostTightLoop is the profile's mean latency of the zoo's mlp, the
	// placement network's shape timed in a tight loop, at the batch's
	// size: schedule.learned.cost: profile with a profile that has no
	// serving rows (an older or imported one).
	CostTightLoop = "tight_loop"
	// CostConfigured is the fixed duration schedule.learned.cost gives.
	CostConfigured = "configured"
)

// NoteRealSkipped is the schedule manifest's note that lists, comma
// separated, the policies of schedule.real.policies not run for real
// because the real cluster has one device: a policy that migrates has
// nowhere to move a job to there, and would run as its queue order alone,
// repeating another real run.
const NoteRealSkipped = "real:skipped"

// StudyRow is one row of studies.parquet: one simulation of a study
// (schedule.studies), the first Jobs eval jobs at schedule.load,
// summarized. Rows are by study, then in the order of schedule.policies,
// then by predictor, error and cost.
type StudyRow struct {
	// Study is StudyPredictionError or StudyDecisionCost.
	Study  string `parquet:"study,dict"`
	Policy string `parquet:"policy,dict"`
	// Replication is the replication, from 1: its own workload and
	// draws, shared by every condition of the study in it.
	Replication int32 `parquet:"replication"`
	// Predictor and PredictionError are what the policy predicted with
	// (sim.Config.PredictionError's 1 ± e per job); PredictionMAPE is
	// how far those predictions were from the profile's means over the
	// jobs simulated, on every device each fits: the mean of
	// |prediction / mean − 1|, 0 for the exact means.
	Predictor       string  `parquet:"predictor,dict"`
	PredictionError float64 `parquet:"prediction_error"`
	PredictionMAPE  float64 `parquet:"prediction_mape"`
	// DecisionCost is a learned policy's schedule.learned.cost value,
	// DecisionCostS the median charge of a batch of one decision in
	// seconds, and DecisionCostSource what was charged (as
	// ServingRow.CostSource); empty and 0 for other policies.
	DecisionCost       string  `parquet:"decision_cost,dict"`
	DecisionCostS      float64 `parquet:"decision_cost_s"`
	DecisionCostSource string  `parquet:"decision_cost_source,dict"`
	// The rest are as in SweepRow.
	Jobs                     int64   `parquet:"jobs"`
	SLOAttainment            float64 `parquet:"slo_attainment"`
	InteractiveSLOAttainment float64 `parquet:"interactive_slo_attainment"`
	MeanE2ES                 float64 `parquet:"mean_e2e_s"`
	P99E2ES                  float64 `parquet:"p99_e2e_s"`
	ThroughputJobsPerS       float64 `parquet:"throughput_jobs_per_s"`
	GoodputJobsPerS          float64 `parquet:"goodput_jobs_per_s"`
}

// SweepRow is one row of sweep.parquet: one simulation of the load sweep or
// of the capacity search, the first jobs of the eval workload offered at
// Load, summarized. Rows are in the order of schedule.policies, then by
// replication, then by load.
type SweepRow struct {
	// Policy is the policy spec and Replication the replication, from 1.
	Policy      string `parquet:"policy,dict"`
	Replication int32  `parquet:"replication"`
	// Load is the offered load, as a fraction of the capacity of the
	// cluster for these jobs (the lower bound's work over the span of
	// their arrivals); ScheduleLoad is the factor their arrival times were
	// divided by to offer it.
	Load         float64 `parquet:"load"`
	ScheduleLoad float64 `parquet:"schedule_load"`
	// Search is true for a point of the capacity search, false for one of
	// the grid (schedule.sweep.loads).
	Search bool `parquet:"search"`
	// Jobs is the number of jobs simulated.
	Jobs int64 `parquet:"jobs"`
	// SLOAttainment is the fraction of the jobs that met their SLO
	// (rejected ones never do); InteractiveSLOAttainment that of the
	// interactive jobs, NaN when there are none.
	SLOAttainment            float64 `parquet:"slo_attainment"`
	InteractiveSLOAttainment float64 `parquet:"interactive_slo_attainment"`
	// MeanE2ES and P99E2ES summarize the completed jobs' end-to-end
	// latency (nearest-rank P99).
	MeanE2ES float64 `parquet:"mean_e2e_s"`
	P99E2ES  float64 `parquet:"p99_e2e_s"`
	// ThroughputJobsPerS and GoodputJobsPerS are the completed jobs, and
	// those that met their SLO, per second of makespan.
	ThroughputJobsPerS float64 `parquet:"throughput_jobs_per_s"`
	GoodputJobsPerS    float64 `parquet:"goodput_jobs_per_s"`
}

// TargetAttainment is the attainment the capacity search holds to
// schedule.sweep.target: the interactive jobs', or all jobs' where the
// point had no interactive job.
func (r SweepRow) TargetAttainment() float64 {
	if math.IsNaN(r.InteractiveSLOAttainment) {
		return r.SLOAttainment
	}
	return r.InteractiveSLOAttainment
}

// CapacityRow is one row of capacity.parquet: the highest load one policy
// sustains in one replication, in the order of schedule.policies, then by
// replication. A load is sustained when it and every lower load tried keep
// the interactive SLO attainment at Target or above (that of all jobs, for
// a workload without interactive jobs). The search assumes attainment falls
// as load rises: it brackets the crossing with the grid and bisects.
type CapacityRow struct {
	// Policy is the policy spec and Replication the replication, from 1.
	Policy      string `parquet:"policy"`
	Replication int32  `parquet:"replication"`
	// Target and Tolerance are schedule.sweep's.
	Target    float64 `parquet:"target"`
	Tolerance float64 `parquet:"tolerance"`
	// SustainedLoad is the highest load found sustained, as a fraction of
	// capacity; 0 when none was. FailedLoad is the lowest load found not
	// sustained above it, or +Inf when every load tried, up to
	// MaxSweepLoad, was. The search narrows the two to Tolerance apart;
	// without a search they are neighbours on the grid.
	SustainedLoad float64 `parquet:"sustained_load"`
	FailedLoad    float64 `parquet:"failed_load"`
	// Points is the number of simulations the search added to the grid's.
	Points int32 `parquet:"points"`
	// Dips is how many grid loads below SustainedLoad miss the target:
	// attainment is not monotone in load there (0 where it is).
	Dips int32 `parquet:"dips"`
}

// BoundsRow is a row of bounds.parquet, one per replication, in order:
// lower bounds on what any policy can achieve with the replication's
// workload on the cluster at its load, from the predicted (mean) service
// times. See the package doc for the derivation; they bound the expected
// makespan and mean latency, and a simulation's ground-truth draws can
// land below them.
type BoundsRow struct {
	// Replication is the replication (from 1) whose eval workload this is.
	Replication int32 `parquet:"replication"`
	// Load is the schedule load the workload is offered at (arrival times
	// divided by it), and OfferedLoad that load as a fraction of the
	// cluster's capacity, as the sweep defines it.
	Load        float64 `parquet:"load"`
	OfferedLoad float64 `parquet:"offered_load"`
	// LastArrivalS is the last job's arrival, at Load: the span over which
	// the jobs are offered, whose rate is Jobs / LastArrivalS.
	LastArrivalS float64 `parquet:"last_arrival_s"`
	// Jobs is the workload's size; UnfitJobs of them fit on no device
	// (every policy rejects them) and are left out of the bounds.
	Jobs      int64 `parquet:"jobs,dict"`
	UnfitJobs int64 `parquet:"unfit_jobs"`
	// WorkS is the sum over jobs of the job's predicted time alone on its
	// fastest device (mean / speed); EffectiveLanes is the sum of the
	// devices' effective lanes.
	WorkS          float64 `parquet:"work_s"`
	EffectiveLanes float64 `parquet:"effective_lanes"`
	// ProfiledWorkS is the sum over jobs of the smallest predicted time on
	// a device's profile (before speed); SpeedCapacity is the sum of
	// speed × effective lanes.
	ProfiledWorkS float64 `parquet:"profiled_work_s"`
	SpeedCapacity float64 `parquet:"speed_capacity"`
	// WorkLBS is max(WorkS/EffectiveLanes, ProfiledWorkS/SpeedCapacity):
	// the cluster cannot get through the work faster.
	WorkLBS float64 `parquet:"work_lb_s"`
	// ArrivalLBS is the largest over jobs of arrival plus fastest time:
	// no job ends sooner.
	ArrivalLBS float64 `parquet:"arrival_lb_s"`
	// MakespanLBS is max(WorkLBS, ArrivalLBS).
	MakespanLBS float64 `parquet:"makespan_lb_s"`
	// MeanLatencyLBS is the mean over jobs of the fastest time alone.
	MeanLatencyLBS float64 `parquet:"mean_latency_lb_s"`
}

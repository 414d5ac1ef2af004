package sim

// NumFeatures is the number of inputs a learned migration rule takes.
const NumFeatures = 10

// FeatureNames name the inputs of a learned migration rule, in the order
// Vector writes them:
//
//	from_busy       fraction of the source's lanes busy, in [0, 1]
//	to_busy         fraction of the destination's lanes busy, in [0, 1]
//	from_queued     jobs waiting on the source, the candidate included
//	from_backlog_s  the source's Backlog, seconds
//	to_backlog_s    the destination's Backlog, seconds
//	from_wait_s     predicted time until a lane of the source frees, seconds
//	                (0 if one is idle)
//	predict_from_s  the job's predicted service time on the source, seconds
//	move_finish_s   the move's cost plus the job's predicted service time
//	                on the destination: when it would end if moved to the
//	                idle destination, seconds from now
//	slack_s         the job's deadline minus now, seconds (negative once
//	                it has passed)
//	interactive     1 for an interactive job, 0 for a batch job
//
// Training and serving both build their inputs with Vector, so a model is
// fed the features it was trained on.
var FeatureNames = [NumFeatures]string{
	"from_busy", "to_busy", "from_queued", "from_backlog_s", "to_backlog_s",
	"from_wait_s", "predict_from_s", "move_finish_s", "slack_s", "interactive",
}

// Vector writes f's features into dst in the order of FeatureNames.
func (f *MigrationFeatures) Vector(dst *[NumFeatures]float32) {
	var interactive float32
	if f.Job.Class == Interactive {
		interactive = 1
	}
	*dst = [NumFeatures]float32{
		float32(f.FromBusy), float32(f.ToBusy), float32(f.FromQueued), float32(f.FromBacklog), float32(f.ToBacklog),
		float32(f.FromWait), float32(f.PredictFrom), float32(f.Cost + f.PredictTo), float32(f.Job.Deadline - f.Now), interactive,
	}
}

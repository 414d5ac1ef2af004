package sim

// Variate is the uniform variate in [0, 1) of the ground-truth draw of
// job id's batch when the job leads it (part -1), or of its part on device
// part when the job is split: a SplitMix64 hash of seed, id and part.
//
// Keying the draw to the job, not to the order of events, gives common
// random numbers: a job run alone at the same size takes the same
// quantile of its device's measured distribution under every policy, so a
// comparison between policies sees their scheduling, not their luck.
func Variate(seed uint64, id int64, part int) float64 {
	x := splitmix64(seed ^ splitmix64(uint64(id)) ^ splitmix64(uint64(part)+0x9e3779b97f4a7c15))
	return float64(x>>11) * 0x1p-53
}

func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// DecisionVariate is the uniform variate in [0, 1) of the time the
// ordinal'th batch of migration decisions takes to answer
// (Migration.Latency), counting from 1: a hash of seed and the ordinal
// apart from Variate's and PredictionVariate's. Batches are counted in the
// order they are sent, which the simulation fixes, so the same inputs
// charge the same times; and two policies asking their decisions alike
// (the learned policy and its ablations) draw the same quantile for
// their n'th batch.
func DecisionVariate(seed, ordinal uint64) float64 {
	x := splitmix64(seed ^ splitmix64(ordinal^0x2545f4914f6cdd1d) ^ 0x632be59bd9b4e019)
	return float64(x>>11) * 0x1p-53
}

// PredictionVariate is the uniform variate in [0, 1) of job id's
// prediction error (Config.PredictionError): a hash of seed and id apart
// from Variate's, so that how wrong a prediction is says nothing of the
// draw it predicts.
func PredictionVariate(seed uint64, id int64) float64 {
	x := splitmix64(seed ^ splitmix64(uint64(id)^0x5851f42d4c957f2d) ^ 0xd1b54a32d192ed03)
	return float64(x>>11) * 0x1p-53
}

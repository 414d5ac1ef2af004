package policy

import "github.com/mlsched/mlsched/stages/lib/sim"

// LearnedBase is the policy whose placement and order Learned takes, and
// of its counterparts (Spec.Counterparts).
const LearnedBase = "edf"

// Learned is the learned policy: it places and orders jobs as EDF does,
// and every migration decision is the train stage's placement network's
// (Settings.Learned), served through onnxruntime. Set against edf (no
// migration) and edf+migrate (the Threshold rule), it shows what the
// network decides differently, and what that buys.
type Learned struct{ EDF }

var (
	_ sim.Placer    = Learned{}
	_ sim.KeyRanker = Learned{}
	_ sim.Splitter  = Learned{}
)

// Name implements sim.Policy.
func (Learned) Name() string { return "learned" }

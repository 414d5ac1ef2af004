package policy

import "github.com/mlsched/mlsched/stages/lib/sim"

// Threshold is the migration rule of the +migrate option until a learned
// one replaces it: a job moves when the move is predicted to end it more
// than MinGain seconds sooner, its transit included (benefit beyond cost).
type Threshold struct {
	MinGain float64
}

var _ sim.Migrator = Threshold{}

// Migrate implements sim.Migrator.
func (t Threshold) Migrate(f *sim.MigrationFeatures) bool { return f.Gain() > t.MinGain }

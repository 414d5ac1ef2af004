package predictorfit

import "github.com/mlsched/mlsched/stages/lib/predictor"

// The model this package fits is package predictor's: these are its types
// and names, as os.FileMode is fs.FileMode.
type (
	Model      = predictor.Model
	File       = predictor.File
	Query      = predictor.Query
	Feature    = predictor.Feature
	Linear     = predictor.Linear
	Tree       = predictor.Tree
	Series     = predictor.Series
	TableGroup = predictor.TableGroup
)

// The candidate kinds and the file's format and targets: predictor's.
const (
	KindAuto      = predictor.KindAuto
	KindTable     = predictor.KindTable
	KindCART      = predictor.KindCART
	KindForest    = predictor.KindForest
	KindLogLinear = predictor.KindLogLinear
	KindBoost     = predictor.KindBoost
	KindAffine    = predictor.KindAffine
	Format        = predictor.Format
	TargetLog     = predictor.TargetLog
	TargetTable   = predictor.TargetTable
)

// Kinds are the candidates in the order they are trained, scored and
// listed (predictor.Kinds).
var Kinds = predictor.Kinds

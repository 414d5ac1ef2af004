package predictorfit

import (
	"fmt"
	"github.com/mlsched/mlsched/stages/spec/trainspec"

	"github.com/mlsched/mlsched/stages/spec/profilespec"
)

// SplitNested is the nested cross-validation's split (CVRow.Split,
// ScoreRow.Split): trainspec's.
const SplitNested = trainspec.SplitNested

// nested cross-validates the selection itself, KindAuto: in each fold of
// the grouped k-fold split (the outer folds), the candidate is chosen as
// Train chooses one, by a grouped k-fold of that fold's training
// configurations alone (the inner folds), and scored on the outer fold's
// held-out configurations with the predictions the outer split made of
// them (outer, the grouped k-fold's results). The kept candidate's own
// grouped k-fold score was also what chose it, so it flatters the
// selection; the nested score does not (Varma and Simon, "Bias in error
// estimation when using cross-validation for model selection", BMC
// Bioinformatics 7:91, 2006; Cawley and Talbot, "On over-fitting in model
// selection and subsequent selection bias in performance evaluation",
// JMLR 11:2079–2107, 2010). Its rows have Split SplitNested and Candidate
// KindAuto, in the outer folds' order; chosen names each outer fold's
// choice.
func nested(cs []config, inf []profilespec.Sample, outer []jobResult, o *Options) (rows []CVRow, chosen []string, err error) {
	var outerFolds []fold
	for _, r := range outer {
		if r.kind == Kinds[0] {
			outerFolds = append(outerFolds, r.fold)
		}
	}
	var jobs []fitJob
	inner := make([][]config, len(outerFolds))
	for i, f := range outerFolds {
		for _, c := range f.train(len(cs)) {
			inner[i] = append(inner[i], cs[c])
		}
		if len(inner[i]) < o.Folds {
			return nil, nil, fmt.Errorf("nested cross-validation: outer fold %d trains on %d configurations, fewer than the %d inner folds", i, len(inner[i]), o.Folds)
		}
		for _, g := range kfold(len(inner[i]), o.Folds, fmt.Sprintf("%s#%d", SplitNested, i), o.Seed) {
			for _, k := range Kinds {
				jobs = append(jobs, fitJob{cs: inner[i], fold: g, kind: k, outer: i})
			}
		}
	}
	results, err := runJobs(jobs, inf, o)
	if err != nil {
		return nil, nil, fmt.Errorf("nested cross-validation: %w", err)
	}
	chosen = make([]string, len(outerFolds))
	for i, f := range outerFolds {
		var cv []CVRow
		for n, j := range jobs {
			if j.outer == i {
				cv = append(cv, cvRows(j.cs, j.fold, j.kind, results[n])...)
			}
		}
		split := fmt.Sprintf("%s#%d", SplitNested, i)
		chosen[i] = best(scoreRows(cv, []string{split}, Kinds), split)
		for _, r := range outer {
			if r.fold.index == f.index && r.kind == chosen[i] {
				for _, row := range cvRows(cs, f, chosen[i], r) {
					row.Split, row.Candidate = SplitNested, KindAuto
					rows = append(rows, row)
				}
			}
		}
	}
	return rows, chosen, nil
}

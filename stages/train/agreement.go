package train

import (
	"math"
	"time"

	"github.com/mlsched/mlsched/stages/spec/trainspec"
	"github.com/mlsched/mlsched/stages/train/label"
	"github.com/mlsched/mlsched/stages/train/placement"
)

// agreementSample is about how many of the decision points are judged
// under the other labellings too (label.Options.Compare): enough for an
// agreement interval a few points wide, at a small part of the
// labelling's cost.
const agreementSample = 400

// alternatives are the labellings the configured one is measured
// against: at the configured horizon, the other set of jobs judged (the
// later arrivals counted, or not), and the configured set at half and
// twice the horizon.
func alternatives(pc trainspec.Placement) []label.Judge {
	h := pc.Horizon.Seconds()
	return []label.Judge{{Horizon: h, Arrivals: !pc.Arrivals}, {Horizon: h / 2, Arrivals: pc.Arrivals}, {Horizon: 2 * h, Arrivals: pc.Arrivals}}
}

// judgementName is a's name in the agreement rows.
func judgementName(a label.Judge) string {
	return trainspec.JudgementName(time.Duration(math.Round(a.Horizon*float64(time.Second))), a.Arrivals)
}

// agreementRows say, for each alternative labelling, how often its labels
// agree with the configured labelling's on the points judged both ways:
// the points compared (those with Point.Alternatives), the near ties
// among them under the alternative, which it would drop, the points it
// labels, how many of those each labelling labels migrate, how many it
// labels as the configured labelling does, and that share with its
// interval by the block bootstrap over the points' blocks (points of one
// block share most of their state, so they are not independent draws).
// Where the labellings agree on every point, or on none, no resample can
// differ and the bootstrap's interval has no width; the interval is then
// Wilson's score interval with the blocks as the draws, each agreeing
// wholly (or not at all). A row set for the configured labelling says
// what it is.
func agreementRows(pc trainspec.Placement, alts []label.Judge, points []label.Point, seed uint64) ([]trainspec.MetricRow, error) {
	var compared []label.Point
	for _, p := range points {
		if p.Alternatives != nil {
			compared = append(compared, p)
		}
	}
	row := func(candidate, metric string, v float64) trainspec.MetricRow {
		return trainspec.MetricRow{Model: trainspec.ModelLabels, Section: trainspec.SectionAgreement, Candidate: candidate, Metric: metric, Value: v}
	}
	flag := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	rows := []trainspec.MetricRow{
		row(trainspec.CandidateConfigured, "horizon_s", pc.Horizon.Seconds()),
		row(trainspec.CandidateConfigured, "arrivals", flag(pc.Arrivals)),
	}
	if len(compared) == 0 {
		return rows, nil
	}
	block := make([]int32, len(compared))
	for i, p := range compared {
		block[i] = p.Block
	}
	for k, a := range alts {
		name := judgementName(a)
		var ties, decided, agree, migrate, configured float64
		for _, p := range compared {
			v := p.Alternatives[k]
			if v.Tie {
				ties++
				continue
			}
			decided++
			migrate += flag(v.Migrate)
			configured += flag(p.Migrate)
			agree += flag(v.Migrate == p.Migrate)
		}
		share := func(w []float64) float64 {
			var n, same float64
			for i, p := range compared {
				if v := p.Alternatives[k]; !v.Tie {
					n += w[i]
					if v.Migrate == p.Migrate {
						same += w[i]
					}
				}
			}
			if n == 0 {
				return math.NaN()
			}
			return same / n
		}
		iv, blocks, err := placement.BlockBootstrap(block, placementResamples, placementConfidence, seed+uint64(k), share)
		if err != nil {
			return nil, err
		}
		if decided > 0 && (agree == decided || agree == 0) {
			iv[0].Lo, iv[0].Hi = placement.Wilson(float64(blocks)*agree/decided, float64(blocks), placementConfidence)
		}
		rows = append(rows,
			row(name, "horizon_s", a.Horizon), row(name, "arrivals", flag(a.Arrivals)),
			row(name, "compared", float64(len(compared))), row(name, "near_ties", ties), row(name, "points", decided),
			row(name, "configured_migrate", configured), row(name, "migrate", migrate),
			row(name, "agree", agree), row(name, "blocks", float64(blocks)))
		for _, m := range []struct {
			metric string
			v      float64
		}{{"agreement", iv[0].Value}, {"agreement_lo", iv[0].Lo}, {"agreement_hi", iv[0].Hi}} {
			if !math.IsNaN(m.v) {
				rows = append(rows, row(name, m.metric, m.v))
			}
		}
	}
	return rows, nil
}

package train

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/mlsched/mlsched/stages/spec/trainspec"
	"github.com/mlsched/mlsched/stages/train/label"
	"github.com/mlsched/mlsched/stages/train/placement"
)

// TestAgreementRows counts the agreement of each alternative labelling
// with the configured one on points made by hand: four compared points
// in three blocks and one not compared.
func TestAgreementRows(t *testing.T) {
	// Labelled on the jobs present over 5 s, the alternatives count the
	// arrivals, or halve or double the horizon.
	pc := trainspec.Placement{Horizon: 5 * time.Second}
	alts := alternatives(pc)
	if !slices.Equal(alts, []label.Judge{{Horizon: 5, Arrivals: true}, {Horizon: 2.5}, {Horizon: 10}}) {
		t.Fatalf("alternatives of %v without arrivals: %+v", pc.Horizon, alts)
	}
	if a := alternatives(trainspec.Placement{Horizon: time.Second, Arrivals: true}); !slices.Equal(a, []label.Judge{{Horizon: 1}, {Horizon: 0.5, Arrivals: true}, {Horizon: 2, Arrivals: true}}) {
		t.Errorf("alternatives of 1s with arrivals: %+v", a)
	}
	v := func(migrate bool) label.Verdict { return label.Verdict{Migrate: migrate} }
	tie := label.Verdict{Tie: true}
	points := []label.Point{
		{Block: 1, Migrate: true, Alternatives: []label.Verdict{v(true), tie, v(true)}},
		{Block: 1, Migrate: false, Alternatives: []label.Verdict{v(true), v(false), v(false)}},
		{Block: 2, Migrate: true, Alternatives: []label.Verdict{v(false), v(true), v(true)}},
		{Block: 3, Migrate: true},
		{Block: 3, Migrate: false, Alternatives: []label.Verdict{v(false), v(false), v(false)}},
	}
	rows, err := agreementRows(pc, alts, points, 1)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, r := range rows {
		if r.Model != trainspec.ModelLabels || r.Section != trainspec.SectionAgreement {
			t.Fatalf("row %+v is not a labels agreement row", r)
		}
		got[r.Candidate+" "+r.Metric] = r.Value
	}
	wilson3, _ := placement.Wilson(3, 3, 0.95)
	tests := []struct {
		key  string
		want float64
	}{
		{"configured horizon_s", 5}, {"configured arrivals", 0},
		{"5s+arrivals arrivals", 1}, {"5s+arrivals compared", 4}, {"5s+arrivals near_ties", 0}, {"5s+arrivals points", 4},
		{"5s+arrivals configured_migrate", 2}, {"5s+arrivals migrate", 2}, {"5s+arrivals agree", 2}, {"5s+arrivals agreement", 0.5},
		{"5s+arrivals blocks", 3},
		// The tie is left out; the other three agree, so the interval
		// is Wilson's over the three blocks.
		{"2.5s horizon_s", 2.5}, {"2.5s near_ties", 1}, {"2.5s points", 3}, {"2.5s agree", 3}, {"2.5s agreement", 1},
		{"2.5s agreement_lo", wilson3}, {"2.5s agreement_hi", 1},
		{"10s horizon_s", 10}, {"10s points", 4}, {"10s agree", 4}, {"10s agreement_lo", wilson3},
	}
	for _, tt := range tests {
		if v, ok := got[tt.key]; !ok || math.Abs(v-tt.want) > 1e-12 {
			t.Errorf("%s = %v (present %v), want %v", tt.key, v, ok, tt.want)
		}
	}
	// Half the points agree, in blocks that agree wholly, partly and
	// not at all: the bootstrap's interval holds 0.5 with some width.
	if lo, hi := got["5s+arrivals agreement_lo"], got["5s+arrivals agreement_hi"]; !(lo < 0.5 && 0.5 < hi) {
		t.Errorf("agreement 0.5 with the interval [%v, %v]", lo, hi)
	}
	// Without compared points, the configured labelling alone.
	rows, err = agreementRows(pc, alts, points[3:4], 1)
	if err != nil || len(rows) != 2 {
		t.Errorf("agreementRows without compared points = %d rows, %v; want the configured labelling's 2", len(rows), err)
	}
}

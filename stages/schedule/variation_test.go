package schedule

import (
	"math"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/stages/spec/profilespec"
)

func TestProfileVariation(t *testing.T) {
	// timing is a series of runs of model on device, repeat numbers from
	// first on, each taking the latencies given.
	timing := func(kind, device, model string, first int32, ls ...float64) []profilespec.Sample {
		var out []profilespec.Sample
		for i, l := range ls {
			out = append(out, profilespec.Sample{Kind: kind, Device: device, Model: model, Precision: "fp32", Batch: 2, Threads: 1,
				Concurrency: 1, Repeat: first + int32(i), LatencyS: l})
		}
		return out
	}
	inf, con := profilespec.KindInference, profilespec.KindContention
	cat := func(ss ...[]profilespec.Sample) []profilespec.Sample {
		var out []profilespec.Sample
		for _, s := range ss {
			out = append(out, s...)
		}
		return out
	}
	// resnet18's timings have medians 1.0, 1.1 and 0.9: the middle is 1.0,
	// the largest deviation 10%. vit's 2.0 and 2.4 (rounds 0-1 and 8-9):
	// their middle 2.2, deviation 1/11.
	resnet := cat(timing(inf, "cpu", "resnet18", 0, 1.0, 0.99, 1.01), timing(con, "cpu", "resnet18", 0, 1.1, 1.1), timing(con, "cpu", "resnet18", 12, 0.9, 0.9))
	vit := cat(timing(con, "cpu", "vit", 0, 2.0, 2.0), timing(con, "cpu", "vit", 8, 2.4, 2.4))
	for _, c := range []struct {
		name    string
		samples []profilespec.Sample
		want    float64
		from    string
	}{
		{"none timed twice", timing(inf, "cpu", "resnet18", 0, 1, 1, 1), 0, "draws' spread alone"},
		{"one configuration", resnet, 0.1, "resnet18 fp32 batch 2 on cpu ±10.0%"},
		{"the median over two", cat(resnet, vit), (0.1 + 1.0/11) / 2, "2 configurations"},
		{"another device's timings do not count", cat(resnet, timing(con, "gpu", "resnet18", 40, 5, 5)), 0.1, "3 timings in all"},
		{"nor several sessions at once", cat(resnet, []profilespec.Sample{{Kind: con, Device: "cpu", Model: "resnet18", Precision: "fp32",
			Batch: 2, Threads: 1, Concurrency: 2, Repeat: 30, LatencyS: 9}}), 0.1, "3 timings in all"},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, from := profileVariation(c.samples, []string{"cpu"})
			if math.Abs(v-c.want) > 1e-12 {
				t.Errorf("variation = %v, want %v (%s)", v, c.want, from)
			}
			if !strings.Contains(from, c.from) {
				t.Errorf("from = %q, want it to say %q", from, c.from)
			}
		})
	}
}

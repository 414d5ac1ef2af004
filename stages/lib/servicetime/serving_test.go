package servicetime

import (
	"errors"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/stages/spec/profilespec"
)

func serving(source, device string, batch int, latMS ...float64) []profilespec.Sample {
	return rows(profilespec.KindServing, source, device, profilespec.ServingModel, profilespec.FP32, batch, 1, 1, latMS...)
}

// TestServing: the serving path's rows make a curve of their own, apart
// from the models' (an inference curve of the same name is untouched), by
// device, drawn by the same rules; a profile without them says so with
// ErrNotMeasured, and two origins for one device is an error that says
// what to do.
func TestServing(t *testing.T) {
	samples := fixture()
	samples = append(samples, serving(profilespec.SourceMeasured, "cpu", 1, 0.004, 0.005, 0.006, 0.05)...)
	samples = append(samples, serving(profilespec.SourceMeasured, "cpu", 8, 0.010, 0.012)...)
	samples = append(samples, serving(profilespec.SourceMeasured, "host-b", 1, 0.007)...)
	samples = append(samples, serving("import:b.csv", "host-b", 1, 0.009)...)
	tab := mustTable(t, samples)

	c, err := tab.Serving("cpu")
	if err != nil {
		t.Fatal(err)
	}
	if k := c.Key(); k != (Key{"cpu", profilespec.ServingModel, profilespec.FP32, 1}) || c.Source() != profilespec.SourceMeasured {
		t.Errorf("Serving(cpu) is %v from %s, want cpu/placement/fp32/threads=1, measured", k, c.Source())
	}
	for _, tc := range []struct {
		batch  int
		u, msW float64
	}{
		{1, 0, 0.004}, {1, 0.5, 0.0055}, {1, 0.99, 0.05}, // Hazen: h = 4u - 1/2
		{8, 0.25, 0.010}, {8, 0.5, 0.011},
		{4, 0.5, (4.0/7)*0.0055 + (3.0/7)*0.011}, // between 1 and 8, w = 3/7
	} {
		if got := c.Quantile(tc.batch, tc.u); !near(got, tc.msW*ms) {
			t.Errorf("Serving(cpu).Quantile(%d, %v) = %v, want %v", tc.batch, tc.u, got, tc.msW*ms)
		}
	}
	if got := c.Mean(1); !near(got, 0.01625*ms) {
		t.Errorf("Serving(cpu).Mean(1) = %v, want %v", got, 0.01625*ms)
	}
	if _, err := tab.Curve("cpu", profilespec.ServingModel, profilespec.FP32, 1); !errors.Is(err, ErrNotMeasured) {
		t.Errorf("Curve(cpu/placement) = %v, want ErrNotMeasured: serving rows are not a model's", err)
	}

	_, err = tab.Serving("host-b")
	if err == nil || errors.Is(err, ErrNotMeasured) || !strings.Contains(err.Error(), "2 origins") || !strings.Contains(err.Error(), "its own device name") {
		t.Errorf("Serving(host-b) from two origins = %v, want an error naming them", err)
	}
	_, err = tab.Serving("gpu")
	if !errors.Is(err, ErrNotMeasured) || !strings.Contains(err.Error(), "serving rows of cpu") {
		t.Errorf("Serving(gpu) = %v, want ErrNotMeasured naming the devices that have serving rows", err)
	}
	_, err = mustTable(t, fixture()).Serving("cpu")
	if !errors.Is(err, ErrNotMeasured) || !strings.Contains(err.Error(), "no serving rows") {
		t.Errorf("Serving(cpu) of a profile without serving rows = %v, want ErrNotMeasured saying there are none", err)
	}
}

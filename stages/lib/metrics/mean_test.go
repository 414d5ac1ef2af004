package metrics

import (
	"math"
	"reflect"
	"testing"
)

// TestMeanSummary averages two replications' summaries field by field,
// classes and devices by name, and leaves one replication's as it was.
func TestMeanSummary(t *testing.T) {
	a := Summary{Policy: "edf", Jobs: 10, Rejected: 1, E2E: Latency{Mean: 1, P50: 1, P95: 2, P99: 3, Max: 4}, SLOViolation: 0.1, Goodput: 2, Makespan: 10,
		Classes: []ClassSummary{{Class: "interactive", Jobs: 6, SLOViolation: 0.2}, {Class: "batch", Jobs: 4, Goodput: 1}},
		Devices: []DeviceUse{{Device: "cpu", BusyLaneS: 4, Utilization: 0.4}}}
	b := Summary{Policy: "edf", Jobs: 12, Rejected: 2, E2E: Latency{Mean: 3, P50: 2, P95: 4, P99: 5, Max: 6}, SLOViolation: 0.3, Goodput: 4, Makespan: 20,
		Classes: []ClassSummary{{Class: "interactive", Jobs: 8, SLOViolation: 0.4}},
		Devices: []DeviceUse{{Device: "cpu", BusyLaneS: 6, Utilization: 0.6}}}
	m := MeanSummary([]Summary{a, b})
	if m.Jobs != 11 || m.Rejected != 2 || m.E2E != (Latency{Mean: 2, P50: 1.5, P95: 3, P99: 4, Max: 5}) ||
		math.Abs(m.SLOViolation-0.2) > 1e-15 || m.Goodput != 3 || m.Makespan != 15 {
		t.Errorf("MeanSummary = %+v", m)
	}
	if len(m.Classes) != 2 || m.Classes[0].Jobs != 7 || math.Abs(m.Classes[0].SLOViolation-0.3) > 1e-15 || m.Classes[1].Jobs != 4 || m.Classes[1].Goodput != 1 {
		t.Errorf("classes %+v: the interactive class averaged over both, the batch class over the one that has it", m.Classes)
	}
	if m.Devices[0].BusyLaneS != 5 || m.Devices[0].Utilization != 0.5 {
		t.Errorf("devices %+v", m.Devices)
	}
	if !reflect.DeepEqual(MeanSummary([]Summary{a}), a) {
		t.Error("one replication's mean is not its summary")
	}
}

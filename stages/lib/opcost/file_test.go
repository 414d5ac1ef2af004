package opcost

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// TestFileRoundTrip saves a fitted model and loads it back: the same
// bytes again, the same predictions, and a damaged file refused with the
// field at fault.
func TestFileRoundTrip(t *testing.T) {
	var samples []Sample
	for i, layers := range []int{1, 2, 3} {
		for _, threads := range []int{1, 2} {
			for _, batch := range []int{1, 8} {
				samples = append(samples, lawSample(fmt.Sprintf("m%d", i), batch, threads, layers, 32))
			}
		}
	}
	m, err := Fit(samples)
	if err != nil {
		t.Fatal(err)
	}
	f := &File{Format: Format, Fits: []Fitted{{Device: "cpu", Precision: "fp32", Models: []string{"m0", "m1", "m2"}, Model: m}}}
	var a, b bytes.Buffer
	if err := f.Save(&a); err != nil {
		t.Fatal(err)
	}
	g, err := Load(bytes.NewReader(a.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Save(&b); err != nil || !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Errorf("saved again: %v; the bytes differ: %v", err, !bytes.Equal(a.Bytes(), b.Bytes()))
	}
	fit, ok := g.Lookup("cpu", "fp32")
	if !ok {
		t.Fatal("Lookup(cpu, fp32) = false")
	}
	if got := fit.Model.Threads(); fmt.Sprint(got) != "[1 2]" {
		t.Errorf("Threads() = %v, want [1 2]", got)
	}
	for _, s := range samples {
		want, err1 := m.Predict(s.Ops, s.Threads)
		got, err2 := fit.Model.Predict(s.Ops, s.Threads)
		if err1 != nil || err2 != nil || got != want {
			t.Errorf("%s batch %d threads %d: loaded predicts %v (%v), saved %v (%v)", s.Model, s.Batch, s.Threads, got, err2, want, err1)
		}
	}
	if _, ok := g.Lookup("cpu", "fp16"); ok {
		t.Error("Lookup(cpu, fp16) = true for a file of fp32 alone")
	}
	for _, tt := range []struct{ edit, to, want string }{
		{`"format": "mlsched-opcost/1"`, `"format": "other"`, "format"},
		{`"device": "cpu"`, `"device": ""`, "empty device"},
		{`"Calibration": {`, `"Calibration": {"0": [1, 1],`, "calibration"},
	} {
		bad := strings.Replace(a.String(), tt.edit, tt.to, 1)
		if bad == a.String() {
			t.Fatalf("the edit of %s changed nothing", tt.edit)
		}
		if _, err := Load(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Load with %s edited: %v, want an error naming %s", tt.edit, err, tt.want)
		}
	}
}

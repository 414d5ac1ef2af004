package opcost

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
)

// Format names the version of File's layout.
const Format = "mlsched-opcost/1"

// File is a set of fitted cost models, one per device and precision
// profiled node by node: the train stage writes it (opcost.json) and
// mlsched predict reads it.
type File struct {
	Format string   `json:"format"`
	Fits   []Fitted `json:"fits"`
}

// Fitted is a cost model fitted to one device's profiled configurations
// at one precision, with the models it learned from.
type Fitted struct {
	Device    string   `json:"device"`
	Precision string   `json:"precision"`
	Models    []string `json:"models"`
	Model     *Model   `json:"model"`
}

// Lookup returns the fit of device and precision.
func (f *File) Lookup(device, precision string) (*Fitted, bool) {
	i := slices.IndexFunc(f.Fits, func(x Fitted) bool { return x.Device == device && x.Precision == precision })
	if i < 0 {
		return nil, false
	}
	return &f.Fits[i], true
}

// Threads are the thread counts m was fitted at, ascending.
func (m *Model) Threads() []int {
	ts := make([]int, 0, len(m.Calibration))
	for t := range m.Calibration {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	return ts
}

// Save writes f as indented JSON with a final newline (encoding/json
// sorts the calibration's thread counts, so the bytes are a function of
// f). It fails on a file Load would refuse.
func (f *File) Save(w io.Writer) error {
	if err := f.validate(); err != nil {
		return fmt.Errorf("opcost: save: %w", err)
	}
	b, err := json.MarshalIndent(f, "", " ")
	if err != nil {
		return fmt.Errorf("opcost: save: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// Load reads a file Save wrote and checks it; the error names the field
// at fault.
func Load(r io.Reader) (*File, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("opcost: load: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("opcost: load: %w", err)
	}
	if err := f.validate(); err != nil {
		return nil, fmt.Errorf("opcost: load: %w", err)
	}
	return &f, nil
}

// validate reports the first thing wrong with f.
func (f *File) validate() error {
	if f.Format != Format {
		return fmt.Errorf("format %q, want %q", f.Format, Format)
	}
	for i, x := range f.Fits {
		where := fmt.Sprintf("fits[%d] (%s %s)", i, x.Device, x.Precision)
		switch {
		case x.Device == "" || x.Precision == "":
			return fmt.Errorf("%s: empty device or precision", where)
		case len(x.Models) == 0:
			return fmt.Errorf("%s: models: empty", where)
		case x.Model == nil:
			return fmt.Errorf("%s: model: missing", where)
		case slices.IndexFunc(f.Fits[:i], func(y Fitted) bool { return y.Device == x.Device && y.Precision == x.Precision }) >= 0:
			return fmt.Errorf("%s: fitted twice", where)
		}
		if err := x.Model.validate(); err != nil {
			return fmt.Errorf("%s: model: %w", where, err)
		}
	}
	return nil
}

// validate reports the first thing wrong with m.
func (m *Model) validate() error {
	if len(m.Calibration) == 0 {
		return errors.New("calibration: empty")
	}
	for t, c := range m.Calibration {
		if t < 1 || !finite(c[0]) || !finite(c[1]) {
			return fmt.Errorf("calibration[%d]: %v", t, c)
		}
		if !slices.ContainsFunc(m.Other, func(o Coef) bool { return o.Threads == t }) {
			return fmt.Errorf("other: no cost at %d threads", t)
		}
	}
	for _, c := range slices.Concat(m.Coefs, m.Other) {
		if c.Op == "" || c.Threads < 1 || !finite(c.Log[0]) || !finite(c.Log[1]) || !finite(c.Log[2]) {
			return fmt.Errorf("coefs: %+v", c)
		}
	}
	for _, s := range m.Fused {
		if s.Op == "" || s.Threads < 1 || !(s.Share >= 0 && s.Share <= 1) {
			return fmt.Errorf("fused: %+v", s)
		}
	}
	return nil
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

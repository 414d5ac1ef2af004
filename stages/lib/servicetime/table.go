package servicetime

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mlsched/mlsched/stages/spec/profilespec"
)

// ErrNotMeasured is wrapped by the errors of Table.Curve and
// Table.Contention when the profile has no samples of what was asked for:
// a configuration the profile did not run, as opposed to samples that are
// there but unusable.
var ErrNotMeasured = errors.New("not measured")

// Key identifies one measured configuration: the unit a Curve describes.
type Key struct {
	// Device is the profile's device name: "cpu", or an imported one.
	Device string
	// Model is the catalog model name.
	Model string
	// Precision is "fp32" or "fp16".
	Precision string
	// Threads is the intra-op thread count the latencies were measured at.
	Threads int
}

// String renders the key as device/model/precision/threads=N, the form
// error messages list configurations in.
func (k Key) String() string {
	return fmt.Sprintf("%s/%s/%s/threads=%d", k.Device, k.Model, k.Precision, k.Threads)
}

func compareKeys(a, b Key) int {
	return cmp.Or(cmp.Compare(a.Device, b.Device), cmp.Compare(a.Model, b.Model),
		cmp.Compare(a.Precision, b.Precision), cmp.Compare(a.Threads, b.Threads))
}

// origin is where a group of samples came from. Samples of one Key from two
// origins (this machine and an imported file that both call their device
// "cpu", or two execution providers of one imported GPU) are two different
// distributions, which no single curve can stand for.
type origin struct{ source, backend, provider string }

func (o origin) String() string { return o.source + " " + o.backend + "/" + o.provider }

// Table is the measured latency distribution of every (device, model,
// precision, threads) configuration at its measured batch sizes, and every
// device's measured contention. It is built once from the profile's samples
// and is immutable, so one Table can serve concurrent simulations.
type Table struct {
	curves map[Key]*Curve
	// ambiguous holds the configurations whose samples come from more
	// than one origin, and why; asking for one of them is an error.
	ambiguous map[Key]error
	// serving holds the serving path's curves (kind serving rows), and
	// servingAmbiguous those from more than one origin, by device.
	serving          map[string]*Curve
	servingAmbiguous map[string]error
	contention       map[string]*Contention
	// contentionErr holds the devices whose contention rows cannot give
	// a factor, and why.
	contentionErr map[string]error
	keys          []Key    // every configuration, ambiguous ones too, sorted
	devices       []string // every device with inference or contention rows, sorted
}

// NewTable builds the table from the rows of the profile's samples.parquet.
// It uses kind "inference" rows of concurrency 1 for latencies, kind
// "contention" rows for contention and kind "serving" rows for the
// serving path (Serving), and ignores every other row. Rows may
// come from several devices and sources. It fails if there is no inference
// row of concurrency 1, or if a row it uses is not valid
// (profilespec.Sample.Validate, which the profile stage applies to imported
// rows, so only a damaged file fails here); the error names the row,
// counting from 1, and the column. Samples that are valid but
// cannot make a curve or a contention factor (two origins for one
// configuration, contention without a one-session baseline) are reported
// by Curve or Contention when asked for, so that they block only the
// simulations that need them.
func NewTable(samples []profilespec.Sample) (*Table, error) {
	type group struct {
		key Key
		o   origin
	}
	inference := map[group]map[int][]float64{}
	serving := map[group]map[int][]float64{}
	// contentionRun identifies one contention measurement: its latencies
	// are comparable across session counts only within it. Its sessions
	// may run several models (profile.contention.models), each keyed by
	// model within it.
	type contentionRun struct {
		device, precision string
		batch, threads    int
		o                 origin
	}
	contention := map[contentionRun]map[string]map[int][]float64{}
	for n, s := range samples {
		isInference := s.Kind == profilespec.KindInference && s.Concurrency == 1
		isServing := s.Kind == profilespec.KindServing
		if !isInference && !isServing && s.Kind != profilespec.KindContention {
			continue
		}
		if err := s.Validate(); err != nil {
			return nil, fmt.Errorf("service: profile samples row %d (%s %s/%s/%s batch %d threads %d concurrency %d): %w",
				n+1, s.Kind, s.Device, s.Model, s.Precision, s.Batch, s.Threads, s.Concurrency, err)
		}
		o := origin{s.Source, s.Backend, s.Provider}
		if isInference || isServing {
			g := group{Key{s.Device, s.Model, s.Precision, int(s.Threads)}, o}
			if isServing {
				addSample(serving, g, int(s.Batch), s.LatencyS)
			} else {
				addSample(inference, g, int(s.Batch), s.LatencyS)
			}
			continue
		}
		run := contentionRun{s.Device, s.Precision, int(s.Batch), int(s.Threads), o}
		if contention[run] == nil {
			contention[run] = map[string]map[int][]float64{}
		}
		addSample(contention[run], s.Model, int(s.Concurrency), s.LatencyS)
	}
	if len(inference) == 0 {
		return nil, fmt.Errorf("service: profile samples: no %q rows of concurrency 1 among %d rows: nothing to draw service times from",
			profilespec.KindInference, len(samples))
	}

	t := &Table{
		curves:           map[Key]*Curve{},
		ambiguous:        map[Key]error{},
		serving:          map[string]*Curve{},
		servingAmbiguous: map[string]error{},
		contention:       map[string]*Contention{},
		contentionErr:    map[string]error{},
	}
	origins := map[Key][]origin{}
	for g := range inference {
		origins[g.key] = append(origins[g.key], g.o)
	}
	for key, from := range origins {
		t.keys = append(t.keys, key)
		if len(from) > 1 {
			t.ambiguous[key] = fmt.Errorf("its samples come from %d origins (%s): a curve must come from one measurement; give each its own device name",
				len(from), joinSorted(from))
			continue
		}
		t.curves[key] = newCurve(key, from[0].source, inference[group{key, from[0]}])
	}
	slices.SortFunc(t.keys, compareKeys)
	// Validate holds a serving row to one model, precision and thread
	// count, so a device's serving rows are one key.
	servingFrom := map[Key][]origin{}
	for g := range serving {
		servingFrom[g.key] = append(servingFrom[g.key], g.o)
	}
	for key, from := range servingFrom {
		if len(from) > 1 {
			t.servingAmbiguous[key.Device] = fmt.Errorf("the serving path's samples of device %s come from %d origins (%s): a distribution must come from one measurement; give each its own device name",
				key.Device, len(from), joinSorted(from))
			continue
		}
		t.serving[key.Device] = newCurve(key, from[0].source, serving[group{key, from[0]}])
	}

	runs := map[string][]contentionRun{}
	for run := range contention {
		runs[run.device] = append(runs[run.device], run)
	}
	for device, rs := range runs {
		if len(rs) > 1 {
			descs := make([]string, len(rs))
			for i, r := range rs {
				descs[i] = fmt.Sprintf("%s/%s batch %d threads %d from %s", strings.Join(slices.Sorted(maps.Keys(contention[r])), "+"), r.precision, r.batch, r.threads, r.o)
			}
			slices.Sort(descs)
			t.contentionErr[device] = fmt.Errorf("device %s has %d contention measurements (%s): the slowdown must come from one",
				device, len(rs), strings.Join(descs, "; "))
			continue
		}
		r := rs[0]
		byModel := contention[r]
		models := slices.Sorted(maps.Keys(byModel))
		basis := fmt.Sprintf("%d-thread sessions of %s/%s batch %d from %s", r.threads, strings.Join(models, "+"), r.precision, r.batch, r.o)
		var missing []string
		for _, m := range models {
			if _, ok := byModel[m][1]; ok {
				continue
			}
			// The baseline is one such session timed alone, which is
			// what an inference row of the same configuration and origin
			// is, measured in the same profile run.
			alone := inference[group{Key{device, m, r.precision, r.threads}, r.o}][r.batch]
			if len(alone) == 0 {
				missing = append(missing, m)
				continue
			}
			byModel[m][1] = alone
			basis += ", " + m + "'s baseline from its inference rows"
		}
		if len(missing) > 0 {
			t.contentionErr[device] = fmt.Errorf("device %s: contention of %s was measured without a one-session baseline of %s, and no inference rows of that configuration stand in for one; add 1 to profile.contention.sessions",
				device, basis, strings.Join(missing, ", "))
			continue
		}
		t.contention[device] = newContention(device, basis, byModel)
	}
	seen := map[string]bool{}
	for _, k := range t.keys {
		seen[k.Device] = true
	}
	for d := range runs {
		seen[d] = true
	}
	for d := range seen {
		t.devices = append(t.devices, d)
	}
	slices.Sort(t.devices)
	return t, nil
}

func addSample[G comparable](m map[G]map[int][]float64, g G, at int, latency float64) {
	byAt := m[g]
	if byAt == nil {
		byAt = map[int][]float64{}
		m[g] = byAt
	}
	byAt[at] = append(byAt[at], latency)
}

func joinSorted[T fmt.Stringer](xs []T) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = x.String()
	}
	slices.Sort(s)
	return strings.Join(s, ", ")
}

// Keys returns every configuration the profile measured, sorted by device,
// model, precision and threads.
func (t *Table) Keys() []Key { return slices.Clone(t.keys) }

// Curve returns the latency curve of one configuration. The error wraps
// ErrNotMeasured when the profile did not measure it, and names the
// configurations it did measure of that model, or the models it measured
// if none; it is also an error if the configuration's samples come from
// more than one origin.
func (t *Table) Curve(device, model, precision string, threads int) (*Curve, error) {
	key := Key{device, model, precision, threads}
	if c := t.curves[key]; c != nil {
		return c, nil
	}
	if err := t.ambiguous[key]; err != nil {
		return nil, fmt.Errorf("service: curve %s: %w", key, err)
	}
	var same []Key
	models := map[string]bool{}
	for _, k := range t.keys {
		models[k.Model] = true
		if k.Model == model {
			same = append(same, k)
		}
	}
	if len(same) > 0 {
		return nil, fmt.Errorf("service: curve %s: %w; the profile measured %s at %s", key, ErrNotMeasured, model, joinSorted(same))
	}
	names := make([]string, 0, len(models))
	for m := range models {
		names = append(names, m)
	}
	slices.Sort(names)
	return nil, fmt.Errorf("service: curve %s: %w; model %s was not profiled; profiled models: %s",
		key, ErrNotMeasured, model, strings.Join(names, ", "))
}

// Serving returns the curve of the learned policy's serving path on a
// device: the latency of one call of a batch of decisions, from the
// profile's kind serving rows (profile.serving), a draw at any batch size
// by the same rules as a model's curve. The error wraps ErrNotMeasured
// when the profile has no serving rows of the device (one measured before
// it timed the serving path, or imported without it, or a GPU profile);
// it is also an error if they come from more than one origin.
func (t *Table) Serving(device string) (*Curve, error) {
	if c := t.serving[device]; c != nil {
		return c, nil
	}
	if err := t.servingAmbiguous[device]; err != nil {
		return nil, fmt.Errorf("service: serving path: %w", err)
	}
	devices := slices.Sorted(maps.Keys(t.serving))
	if len(devices) == 0 {
		return nil, fmt.Errorf("service: serving path on device %s: %w; the profile has no %s rows", device, ErrNotMeasured, profilespec.KindServing)
	}
	return nil, fmt.Errorf("service: serving path on device %s: %w; the profile has %s rows of %s", device, ErrNotMeasured, profilespec.KindServing, strings.Join(devices, ", "))
}

// Contention returns a device's measured contention. A device with
// latencies but no contention rows gets a Contention whose Measured is
// false and whose Factor is 1. The error wraps ErrNotMeasured for a device
// the profile has no rows of at all, naming the devices it has; it is also
// an error when the device's contention rows cannot give a factor.
func (t *Table) Contention(device string) (*Contention, error) {
	if c := t.contention[device]; c != nil {
		return c, nil
	}
	if err := t.contentionErr[device]; err != nil {
		return nil, fmt.Errorf("service: contention: %w", err)
	}
	if _, ok := slices.BinarySearch(t.devices, device); ok {
		return unmeasured(device), nil
	}
	return nil, fmt.Errorf("service: contention of device %s: %w; the profile has devices %s",
		device, ErrNotMeasured, strings.Join(t.devices, ", "))
}

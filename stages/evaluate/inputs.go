package evaluate

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/parquet-go/parquet-go"
	"gonum.org/v1/gonum/stat"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/evaluate/chart"
	"github.com/mlsched/mlsched/stages/lib/metrics"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// timeline is the Gantt chart's data: every lane's batches in a window.
type timeline struct {
	policy     string
	from, to   float64
	rows       []string
	categories []string
	spans      []chart.Span
}

// sizeClass is a range of batch sizes, up to max samples.
type sizeClass struct {
	name string
	max  int32
}

// sizeClasses colour a timeline's batches by their samples.
var sizeClasses = []sizeClass{{"1 sample", 1}, {"2–8", 8}, {"9–32", 32}, {"33+", 1 << 30}}

// readTimeline reads the batches of policy that overlap [from, to) from
// its devices.parquet at path, streaming it a row group at a time.
func readTimeline(path, policy string, cl metrics.Cluster, from, to float64) (*timeline, error) {
	tl := &timeline{policy: policy, from: from, to: to}
	first := make(map[string]int, len(cl.Devices)) // a device's first row
	lanes := make(map[string]int32, len(cl.Devices))
	for d, name := range cl.Devices {
		first[name], lanes[name] = len(tl.rows), cl.Lanes[d]
		for l := range cl.Lanes[d] {
			tl.rows = append(tl.rows, fmt.Sprintf("%s/%d", name, l))
		}
	}
	for _, s := range sizeClasses {
		tl.categories = append(tl.categories, s.name)
	}
	name := filepath.Base(filepath.Dir(path)) + "/" + filepath.Base(path)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := parquet.NewGenericReader[schedulespec.BatchRow](f)
	defer r.Close()
	buf := make([]schedulespec.BatchRow, 4096)
	for {
		n, err := r.Read(buf)
		for _, b := range buf[:n] {
			if b.StartS >= to || b.EndS <= from {
				continue
			}
			base, ok := first[b.Device]
			if !ok || b.Lane < 0 || b.Lane >= lanes[b.Device] {
				return nil, fmt.Errorf("read %s: batch %d on unknown lane %s/%d", name, b.BatchID, b.Device, b.Lane)
			}
			cat := slices.IndexFunc(sizeClasses, func(c sizeClass) bool { return b.Samples <= c.max })
			tl.spans = append(tl.spans, chart.Span{Row: base + int(b.Lane), Start: max(b.StartS, from), End: min(b.EndS, to), Category: cat})
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
	}
	slices.SortFunc(tl.spans, func(a, b chart.Span) int { return cmp.Or(cmp.Compare(a.Row, b.Row), cmp.Compare(a.Start, b.Start)) })
	return tl, nil
}

// profileCurve is one model's measured latency vs batch size, alone on a
// profiled device at one thread count.
type profileCurve struct {
	device, model, precision string
	// source is where the device's runs came from: profilespec.SourceMeasured
	// (this machine) or "import:<file>".
	source       string
	threads      int32
	batch        []float64
	runs         []int
	p5, p50, p95 []float64
}

func (c profileCurve) label() string {
	return fmt.Sprintf("%s %s (%d thr)", c.model, c.precision, c.threads)
}

// profileCurves reads the profile's inference samples run alone on the
// (device, threads) pairs the cluster's devices use.
func profileCurves(samplesPath string, devices []schedulespec.ClusterRow) ([]profileCurve, error) {
	samples, err := parquetio.ReadAll[profilespec.Sample](samplesPath)
	if err != nil {
		return nil, fmt.Errorf("read profile samples: %w", err)
	}
	type key struct {
		device, model, precision string
		threads, batch           int32
	}
	source := map[string]string{} // device → where its runs came from
	type curveOf struct {
		device  string
		threads int32
	}
	used := map[curveOf]bool{}
	for _, d := range devices {
		used[curveOf{d.ProfileDevice, d.Threads}] = true
	}
	runs := map[key][]float64{}
	for _, s := range samples {
		if s.Kind != profilespec.KindInference || s.Concurrency != 1 || !used[curveOf{s.Device, s.Threads}] {
			continue
		}
		k := key{s.Device, s.Model, s.Precision, s.Threads, s.Batch}
		runs[k] = append(runs[k], s.LatencyS)
		source[s.Device] = s.Source
	}
	keys := slices.SortedFunc(maps.Keys(runs), func(a, b key) int {
		return cmp.Or(cmp.Compare(a.device, b.device), cmp.Compare(a.model, b.model), cmp.Compare(a.precision, b.precision),
			cmp.Compare(a.threads, b.threads), cmp.Compare(a.batch, b.batch))
	})
	var out []profileCurve
	for _, k := range keys {
		v := runs[k]
		slices.Sort(v)
		if n := len(out); n == 0 || out[n-1].device != k.device || out[n-1].model != k.model || out[n-1].precision != k.precision || out[n-1].threads != k.threads {
			out = append(out, profileCurve{device: k.device, model: k.model, precision: k.precision, source: source[k.device], threads: k.threads})
		}
		c := &out[len(out)-1]
		c.batch = append(c.batch, float64(k.batch))
		c.runs = append(c.runs, len(v))
		c.p5 = append(c.p5, stat.Quantile(0.05, stat.Empirical, v, nil))
		c.p50 = append(c.p50, stat.Quantile(0.5, stat.Empirical, v, nil))
		c.p95 = append(c.p95, stat.Quantile(0.95, stat.Empirical, v, nil))
	}
	return out, nil
}

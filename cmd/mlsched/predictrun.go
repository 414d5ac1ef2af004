//go:build !lean

package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/mlsched/mlsched/pipeline"
	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/pipeline/userfile"
	"github.com/mlsched/mlsched/stages"
	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/ident"
	"github.com/mlsched/mlsched/stages/lib/onnxgraph"
	"github.com/mlsched/mlsched/stages/lib/opcost"
	"github.com/mlsched/mlsched/stages/lib/predictor"
	"github.com/mlsched/mlsched/stages/spec/trainspec"
)

// predicted is a model file as predict reads it, and the train version
// that predicts it.
type predicted struct {
	entry catalog.Model
	graph *onnxgraph.Graph
	train *pipeline.Manifest
	pred  *predictor.Model
	// query is the model's name in pred's catalog (withModel).
	query string
	// ops is the per-operator cost model; nil where train fitted none.
	ops *opcost.File
	// configs are the profiled configurations the predictor knows, by
	// device, thread count and precision.
	configs []profiled
}

// profiled is one device, thread count and precision the profile
// measured.
type profiled struct {
	device    string
	threads   int
	precision string
}

// predict predicts the model file at path as predictCmd says.
func (a *app) predict(path string, pf predictFlags) error {
	l, err := a.load()
	if err != nil {
		return err
	}
	batches := pf.batches
	if !pf.batchSet {
		batches = l.cfg.Profile.BatchSizes
	}
	if len(batches) == 0 {
		return usageError{errors.New("predict: no batch size: set profile.batch_sizes or --batch")}
	}
	for _, b := range batches {
		if b < 1 {
			return usageError{fmt.Errorf("predict: --batch %d: want a batch size of at least 1", b)}
		}
	}
	p, err := a.readPredicted(l, path, pf.name, pf.axis)
	if err != nil {
		return err
	}
	rows, err := p.predictions(batches)
	if err != nil {
		return err
	}
	if pf.asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	return p.print(a, rows)
}

// readPredicted reads the model file (refused as the profile refuses a
// file of profile.models) and the current train version's predictors.
func (a *app) readPredicted(l *loaded, path, name string, axis *int) (*predicted, error) {
	base := filepath.Base(path)
	if name == "" {
		name = strings.TrimSuffix(base, filepath.Ext(base))
	}
	if err := ident.Check(name); err != nil {
		return nil, usageError{fmt.Errorf("predict: model name %q (--name): %w", name, err)}
	}
	b, err := userfile.ReadFile(path, onnxgraph.MaxModelBytes)
	if err != nil {
		return nil, usageError{fmt.Errorf("predict: %w", err)}
	}
	p := &predicted{}
	if p.graph, err = onnxgraph.Parse(b); err != nil {
		return nil, usageError{fmt.Errorf("predict: %s: %w", path, err)}
	}
	if p.entry, err = p.graph.CatalogModel(name, base, b, axis); err != nil {
		return nil, usageError{fmt.Errorf("predict: %s: %w", path, err)}
	}
	p.train, err = l.p.Current(stages.Train)
	if errors.Is(err, pipeline.ErrNotFound) {
		return nil, usageError{fmt.Errorf("predict needs a trained predictor: %w", err)}
	}
	if err != nil {
		return nil, err
	}
	dir, err := l.p.Store.Open(p.train.Stage, p.train.Version)
	if err != nil {
		return nil, err
	}
	where := fmt.Sprintf("%s@%s", p.train.Stage, p.train.Version)
	f, err := os.Open(filepath.Join(dir, trainspec.PredictorFile))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	pred, err := predictor.Load(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", where, trainspec.PredictorFile, err)
	}
	if p.pred, p.query, err = withModel(pred, p.entry); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	switch f, err := os.Open(filepath.Join(dir, trainspec.OpCostFile)); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("%s: %w", where, err)
	default:
		p.ops, err = opcost.Load(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", where, trainspec.OpCostFile, err)
		}
	}
	// The configurations the profile measured are those the predictor was
	// scored on: every one is held out once by grouped k-fold.
	cv, err := parquetio.ReadAll[trainspec.CVRow](filepath.Join(dir, trainspec.CVFile))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	for _, r := range cv {
		c := profiled{r.Device, int(r.Threads), r.Precision}
		if r.Split == trainspec.SplitKFold && !slices.Contains(p.configs, c) {
			p.configs = append(p.configs, c)
		}
	}
	slices.SortFunc(p.configs, func(x, y profiled) int {
		return cmp.Or(cmp.Compare(x.device, y.device), cmp.Compare(x.threads, y.threads), cmp.Compare(x.precision, y.precision))
	})
	return p, nil
}

// withModel is pred with entry added to its catalog, under a name the
// catalog lacks: a model of the profile's name would otherwise take that
// model's measured curve (the table, the affine kind's series), not a
// prediction from its graph's figures.
func withModel(pred *predictor.Model, entry catalog.Model) (*predictor.Model, string, error) {
	f := pred.File()
	base := entry.Name
	for i := 1; slices.ContainsFunc(f.Models, func(m catalog.Model) bool { return m.Name == entry.Name }); i++ {
		entry.Name = fmt.Sprintf("%s_%d", base, i)
	}
	f.Models = append(f.Models, entry)
	m, err := predictor.NewModel(f)
	return m, entry.Name, err
}

// predictions predicts every configuration: the precisions the file
// holds that the profile measured, at each batch size.
func (p *predicted) predictions(batches []int) ([]Prediction, error) {
	var rows []Prediction
	var measured []string
	for _, c := range p.configs {
		if !slices.Contains(measured, c.precision) {
			measured = append(measured, c.precision)
		}
		if !p.entry.HasPrecision(c.precision) {
			continue
		}
		for _, b := range batches {
			r := Prediction{Device: c.device, Threads: c.threads, Precision: c.precision, Batch: b}
			if s, ok := p.pred.Predict(predictor.Query{Device: c.device, Model: p.query, Precision: c.precision, Batch: b, Threads: c.threads}); ok {
				r.PredictedS = &s
			}
			if s, ok, err := p.opLevel(c, b); err != nil {
				return nil, err
			} else if ok {
				r.OpLevelS = &s
			}
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return nil, usageError{fmt.Errorf("predict: %s holds %s, and the profile behind %s@%s measured only %s: the predictor has nothing to say of %s",
			p.entry.File, strings.Join(p.entry.Precisions, ", "), p.train.Stage, p.train.Version, strings.Join(measured, ", "), strings.Join(p.entry.Precisions, ", "))}
	}
	return rows, nil
}

// opLevel is the per-operator model's prediction of c at batch, where
// train fitted one for c's device, precision and thread count.
func (p *predicted) opLevel(c profiled, batch int) (float64, bool, error) {
	if p.ops == nil {
		return 0, false, nil
	}
	fit, ok := p.ops.Lookup(c.device, c.precision)
	if !ok || !slices.Contains(fit.Model.Threads(), c.threads) {
		return 0, false, nil
	}
	d, err := fit.Model.PredictGraph(p.graph, int(p.entry.BatchAxis), batch, c.threads)
	if err != nil {
		return 0, false, fmt.Errorf("predict: %s: %w", p.entry.File, err)
	}
	return d.Seconds(), true, nil
}

// print writes the predictions as a table, after a line saying what was
// predicted by what.
func (p *predicted) print(a *app, rows []Prediction) error {
	e := p.entry
	fmt.Fprintf(a.stdout, "%s (%s): %s FLOPs and %s of activations per sample, %s parameters, batch axis %d\n",
		e.Name, e.File, siCount(float64(e.FLOPsPerSample)), formatBytes(e.ActivationBytesPerSample), siCount(float64(e.Params)), e.BatchAxis)
	fmt.Fprintf(a.stdout, "predicted, not timed, by %s@%s's predictor (%s, from the catalog's figures)", p.train.Stage, p.train.Version, p.pred.Kind())
	if p.ops != nil {
		fmt.Fprintf(a.stdout, " and its per-operator cost model (op-level, from the graph's nodes)")
	}
	fmt.Fprintln(a.stdout)
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	head := "DEVICE\tTHREADS\tPRECISION\tBATCH\tPREDICTED\t"
	if p.ops != nil {
		head += "OP-LEVEL\t"
	}
	fmt.Fprintln(tw, head)
	none := false
	for _, r := range rows {
		line := fmt.Sprintf("%s\t%d\t%s\t%d\t%s\t", r.Device, r.Threads, r.Precision, r.Batch, formatLatency(r.PredictedS))
		if p.ops != nil {
			line += formatLatency(r.OpLevelS) + "\t"
		}
		none = none || r.PredictedS == nil
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if none && p.pred.Kind() == predictor.KindTable {
		fmt.Fprintf(a.stdout, "(-: the kept predictor is the table of the profile's measurements, which knows no model it did not measure; train.predictor.kind picks another)\n")
	}
	return nil
}

// formatLatency writes seconds to four significant digits in the unit
// that suits them; "-" for none.
func formatLatency(s *float64) string {
	if s == nil {
		return "-"
	}
	d := *s
	switch {
	case d < 1e-3:
		return fmt.Sprintf("%.4g µs", d*1e6)
	case d < 1:
		return fmt.Sprintf("%.4g ms", d*1e3)
	}
	return fmt.Sprintf("%.4g s", d)
}

// siCount writes a count with an SI prefix, to three significant digits.
func siCount(x float64) string {
	for _, p := range []struct {
		v float64
		s string
	}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if x >= p.v {
			return fmt.Sprintf("%.3g%s", x/p.v, p.s)
		}
	}
	return fmt.Sprintf("%.0f", x)
}

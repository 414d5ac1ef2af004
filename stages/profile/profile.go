package profile

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/ort"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
)

// gpuProviders are the onnxruntime execution providers that would put a
// GPU behind the profile. The summary says which of them this build lacks,
// rather than leaving readers to assume.
var gpuProviders = []string{"CUDAExecutionProvider", "ROCMExecutionProvider", "TensorrtExecutionProvider", "MIGraphXExecutionProvider"}

// Output says where the stage writes and how it reports.
type Output struct {
	// Dir receives models.parquet, samples.parquet, summary.parquet,
	// machine.parquet (when the stage measures) and the .onnx models.
	Dir string
	// Metadata is the provenance every Parquet footer carries.
	Metadata map[string]string
	// Notes receives the machine description for the manifest.
	Notes map[string]string
	// Progress reports configurations done out of total; may be nil.
	Progress func(done, total int64)
}

// Library says which onnxruntime shared library to load.
type Library struct {
	Path   string
	Source ort.Source
}

// Run measures this machine as cfg says (and adds the imported rows), then
// writes the samples, their summary, how busy the machine was while it
// measured, and the models measured. seed fixes the models' weights and
// inputs.
//
// The model files of profile.models (their paths resolved against the
// config's directory) are read and analysed first, and run once each when
// the stage measures: a bad one stops the stage before it measures or
// writes anything.
func Run(ctx context.Context, cfg Config, seed int64, lib Library, importPath string, out Output) error {
	var samples []Sample
	var unsupported []Summary
	var operators []OperatorRow
	var obs *observer
	meta := maps.Clone(out.Metadata)
	ms, err := loadModels(cfg)
	if err != nil {
		return err
	}
	if cfg.Measure {
		version, err := ort.Init(lib.Path, lib.Source)
		if err != nil {
			return err
		}
		providers, err := ort.Providers()
		if err != nil {
			return err
		}
		tg := targetOf(cfg)
		if tg.provider != ort.CPU && !slices.Contains(providers, tg.provider) {
			return fmt.Errorf("profile.provider is %s, but onnxruntime %s at %s cannot use it: %v "+
				"(it needs libonnxruntime_providers_cuda.so beside the library, the CUDA libraries that provider was built for, and a GPU; docs/gpu.md)",
				cfg.Provider, version, lib.Path, ort.ProbeProvider(tg.provider))
		}
		m := describeMachine(version, providers)
		if tg.provider == ort.CUDA {
			m.GPU = describeGPU(ctx, tg.gpu)
		}
		maps.Copy(meta, m.Metadata())
		if out.Notes != nil {
			for k, v := range m.Metadata() {
				out.Notes[strings.TrimPrefix(k, "mlsched.machine.")] = v
			}
		}
		built, err := ort.BuiltProviders()
		if err != nil {
			return err
		}
		for _, p := range gpuProviders {
			if slices.Contains(providers, p) {
				continue
			}
			why := "not compiled into this onnxruntime " + version + " library"
			if slices.Contains(built, p) {
				why = "compiled in but not usable here: " + firstLine(fmt.Sprint(ort.ProbeProvider(p)))
			}
			unsupported = append(unsupported, Summary{Kind: KindProvider, Backend: backendORT, Provider: p, Device: "gpu",
				Source: SourceMeasured, Note: why + "; usable providers: " + strings.Join(providers, ", ") + "; no GPU numbers are measured"})
		}
		if err := ms.firstRuns(cfg, tg); err != nil {
			return err
		}
		obs = newObserver("/proc")
		got, err := measure(ctx, cfg, tg, ms, seed, out, obs)
		if err != nil {
			return err
		}
		samples, unsupported, operators = got.samples, append(unsupported, got.skipped...), got.operators
		if len(cfg.Operators.BatchSizes) > 0 && out.Notes != nil {
			out.Notes["operators"] = fmt.Sprintf("%d nodes timed in %s", len(operators), got.operatorsTime.Round(time.Millisecond))
		}
	}
	if importPath != "" {
		imported, err := readImport(importPath)
		if err != nil {
			return err
		}
		samples = append(samples, imported...)
	}
	summary := append(summarize(samples, ms.cat), unsupported...)
	if err := ms.cat.Write(filepath.Join(out.Dir, catalog.File), meta); err != nil {
		return fmt.Errorf("write %s: %w", catalog.File, err)
	}
	if err := parquetio.WriteFile(filepath.Join(out.Dir, SamplesFile), samples, meta); err != nil {
		return fmt.Errorf("write %s: %w", SamplesFile, err)
	}
	if err := parquetio.WriteFile(filepath.Join(out.Dir, SummaryFile), summary, meta); err != nil {
		return fmt.Errorf("write %s: %w", SummaryFile, err)
	}
	if len(cfg.Operators.BatchSizes) > 0 && cfg.Measure {
		if err := parquetio.WriteFile(filepath.Join(out.Dir, profilespec.OperatorsFile), operators, meta); err != nil {
			return fmt.Errorf("write %s: %w", profilespec.OperatorsFile, err)
		}
	}
	if obs != nil {
		if err := parquetio.WriteFile(filepath.Join(out.Dir, MachineFile), obs.rows, meta); err != nil {
			return fmt.Errorf("write %s: %w", MachineFile, err)
		}
	}
	return nil
}

// measured is what measure measured: the timed runs, the configurations
// that could not run, and the nodes' times of profile.operators.
type measured struct {
	samples   []Sample
	skipped   []Summary
	operators []OperatorRow
	// operatorsTime is the wall time the nodes' timing took.
	operatorsTime time.Duration
}

// measure runs every local measurement, one at a time so that none
// disturbs another (contention is measured on purpose, alone too), and
// has obs observe the machine before the first and after each.
func measure(ctx context.Context, cfg Config, tg target, ms models, seed int64, out Output, obs *observer) (measured, error) {
	obs.start(ctx)
	t := timing{warmup: cfg.Warmup, repeats: cfg.Repeats, minRepeats: cfg.MinRepeats, maxRepeats: cfg.MaxRepeats,
		minTime: cfg.MinTime, maxTime: cfg.MaxTime}
	// gonum's products run on this machine's cores, which are not the
	// device a GPU profile measures: its rows would pass for the cores of
	// whichever machine imports the profile.
	gonumMatMul := tg.provider == ort.CPU
	// The serving path runs on this machine's cores whatever device the
	// profile measures, so a GPU profile, meant to be imported by the
	// machines that schedule for its GPU, leaves it out.
	serving := len(cfg.Serving.BatchSizes) > 0 && tg.provider == ort.CPU
	// Progress counts estimated work (work.go), each measurement's
	// estimate reported when it is done.
	w := work{cfg: cfg, t: t, cat: ms.cat}
	total := w.total(gonumMatMul, serving)
	var done int64
	step := func(n int64) {
		done += n
		if out.Progress != nil {
			out.Progress(done, total)
		}
	}
	var samples []Sample
	var skipped []Summary
	var operators []OperatorRow
	var operatorsTime time.Duration
	// The contention rounds are spread over the models' measurements,
	// each round in the order opposite to the one before: the factor is
	// the machine's over the profile's minutes, not over a few seconds of
	// them, and a disturbance or a drift lands on every session count
	// alike.
	contenders, err := newContenders(tg, cfg.Contention, ms, seed)
	if err != nil {
		return measured{}, err
	}
	defer contenders.close()
	order := slices.Clone(cfg.Contention.Sessions)
	round := 0
	contention := func(upTo int) error {
		from := round
		for ; round < upTo; round++ {
			for _, k := range order {
				rows, err := contenders.measure(ctx, k, round, cfg.Warmup)
				if err != nil {
					return fmt.Errorf("measure contention of %d sessions, round %d: %w", k, round+1, err)
				}
				samples = append(samples, rows...)
				step(w.contention(k))
			}
			slices.Reverse(order)
		}
		switch {
		case round == from+1:
			obs.observe(fmt.Sprintf("contention round %d", round))
		case round > from:
			obs.observe(fmt.Sprintf("contention rounds %d-%d", from+1, round))
		}
		return nil
	}
	for i, name := range cfg.ModelNames() {
		entry, _ := ms.cat.Lookup(name)
		for _, prec := range ms.precisions(cfg, name) {
			model, err := ms.build(name, prec, seed)
			if err != nil {
				return measured{}, fmt.Errorf("build %s %s: %w", name, prec, err)
			}
			if err := os.WriteFile(filepath.Join(out.Dir, ModelFile(name, prec)), model, 0o644); err != nil {
				return measured{}, err
			}
			batches := cfg.BatchSizesOf(name)
			for _, threads := range cfg.Threads {
				// Each run moves the progress by its estimated work, up to
				// the series' estimate; the rest of that goes at its end.
				budget, told := w.series(name), int64(0)
				ran := func(b int) {
					if n := min(units(w.latencyOf(name, b)), budget-told); n > 0 {
						told += n
						step(n)
					}
				}
				rows, failed, err := measureSeries(ctx, tg, t, model, entry, prec, batches, threads, ran)
				if err != nil {
					return measured{}, fmt.Errorf("measure %s %s threads %d: %w", name, prec, threads, err)
				}
				for _, batch := range batches {
					err, ok := failed[batch]
					if !ok {
						continue
					}
					if prec != FP16 {
						return measured{}, fmt.Errorf("measure %s %s batch %d threads %d: %w", name, prec, batch, threads, err)
					}
					// The CPU provider lacks fp16 kernels for some ops:
					// that is a finding to report, not a failure.
					skipped = append(skipped, Summary{Kind: KindInference, Backend: backendORT, Provider: tg.provider,
						Device: tg.device, Model: name, Precision: prec, Batch: int32(batch), Threads: int32(threads),
						Concurrency: 1, Source: SourceMeasured, Note: "unsupported: " + firstLine(err.Error())})
				}
				samples = append(samples, rows...)
				if budget > told {
					step(budget - told)
				}
				obs.observe(fmt.Sprintf("%s %s threads %d", name, prec, threads))
				// The nodes' times, after the timed runs and apart from
				// them, at the batch sizes the series measured; fp32
				// only (profilespec.Operators says why).
				var ob []int
				for _, b := range cfg.OperatorBatchesOf(name) {
					if _, bad := failed[b]; !bad && prec == FP32 {
						ob = append(ob, b)
					}
				}
				if len(ob) > 0 {
					start := time.Now()
					rows, err := timeOperators(ctx, tg, model, entry, prec, ob, threads, cfg.Warmup, cfg.Operators.Runs)
					if err != nil {
						return measured{}, fmt.Errorf("time the nodes of %s %s threads %d: %w", name, prec, threads, err)
					}
					operators, operatorsTime = append(operators, rows...), operatorsTime+time.Since(start)
					step(w.operators(name))
				}
			}
		}
		// Rounds due by the end of model i of the models.
		if err := contention((i + 1) * cfg.Contention.Rounds / len(cfg.Models)); err != nil {
			return measured{}, err
		}
	}
	if serving {
		rows, err := measureServing(ctx, cfg.Serving, seed)
		if err != nil {
			return measured{}, fmt.Errorf("measure the serving path: %w", err)
		}
		samples = append(samples, rows...)
		step(w.serving() * int64(len(cfg.Serving.BatchSizes)))
		obs.observe("serving path")
	}
	for _, n := range cfg.MatMul.Sizes {
		if gonumMatMul {
			rows, err := measureGonumMatMul(ctx, n, cfg.MatMul.Repeats)
			if err != nil {
				return measured{}, fmt.Errorf("measure gonum matmul %d: %w", n, err)
			}
			samples = append(samples, rows...)
			step(w.matmul(n))
		}
		for _, threads := range cfg.Threads {
			rows, err := measureORTMatMul(ctx, tg, n, threads, cfg.MatMul.Repeats)
			if err != nil {
				return measured{}, fmt.Errorf("measure onnxruntime matmul %d threads %d: %w", n, threads, err)
			}
			samples = append(samples, rows...)
			step(w.matmul(n))
		}
		obs.observe(fmt.Sprintf("matmul %d", n))
	}
	if err := contention(cfg.Contention.Rounds); err != nil {
		return measured{}, err
	}
	return measured{samples, skipped, operators, operatorsTime}, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

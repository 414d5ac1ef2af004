package profile

import (
	"fmt"
	"path/filepath"

	"github.com/mlsched/mlsched/pipeline/userfile"
	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/onnxgraph"
	"github.com/mlsched/mlsched/stages/lib/ort"
	"github.com/mlsched/mlsched/stages/lib/zoo"
)

// models are the profile's catalog and the bytes of the models read from
// files, by name.
type models struct {
	cat   *catalog.Catalog
	files map[string][]byte
}

// modelEntry names entry i of profile.models and its file, for a file model's
// errors.
func modelEntry(i int, m Model) string {
	return fmt.Sprintf("profile.models[%d] (%s): %s", i, m.Name, m.File)
}

// loadModels reads every model file of profile.models (paths already
// resolved against the config's directory) and derives its catalog
// figures from the graph: the catalog is the zoo's models, then the
// files', in their order. A file that cannot be read, is not ONNX, or
// holds what the analysis cannot count stops the profile here, before it
// measures or writes anything, with an error naming the entry, the file
// and, where it is one node, the node.
func loadModels(cfg Config) (models, error) {
	ms := models{files: map[string][]byte{}}
	all := catalog.Zoo().All()
	for i, m := range cfg.Models {
		if m.File == "" {
			continue
		}
		b, err := userfile.ReadFile(m.File, onnxgraph.MaxModelBytes)
		if err != nil {
			return models{}, fmt.Errorf("%s: %w", modelEntry(i, m), err)
		}
		c, err := onnxgraph.CatalogModel(m.Name, filepath.Base(m.File), b, m.BatchAxis)
		if err != nil {
			return models{}, fmt.Errorf("%s: %w", modelEntry(i, m), err)
		}
		all = append(all, c)
		ms.files[m.Name] = b
	}
	cat, err := catalog.New(all)
	if err != nil {
		return models{}, fmt.Errorf("profile.models: %w", err)
	}
	ms.cat = cat
	return ms, nil
}

// precisions are the precisions model is measured in: profile.precisions
// for a zoo model, the one a file holds for a file's.
func (ms models) precisions(cfg Config, name string) []string {
	if _, ok := ms.files[name]; ok {
		m, _ := ms.cat.Lookup(name)
		return m.Precisions
	}
	return cfg.Precisions
}

// build returns the ONNX bytes of model in precision: the zoo builds its
// own from seed; a file's are the file's.
func (ms models) build(name, precision string, seed int64) ([]byte, error) {
	if b, ok := ms.files[name]; ok {
		return b, nil
	}
	return zoo.Build(name, zoo.Options{Seed: seed, Precision: precision})
}

// firstRuns runs each file model once at batch 1, before the profile
// measures anything: a model onnxruntime cannot load or run (an operator
// it lacks, an attribute it refuses) is refused here, naming the file,
// rather than after minutes of measuring the others.
func (ms models) firstRuns(cfg Config, tg target) error {
	for i, m := range cfg.Models {
		b, ok := ms.files[m.Name]
		if !ok {
			continue
		}
		c, _ := ms.cat.Lookup(m.Name)
		err := func() error {
			s, err := newModelSession(tg, b, c, 1, cfg.Threads[0])
			if err != nil {
				return err
			}
			defer s.Close()
			return s.Run()
		}()
		if err != nil {
			return fmt.Errorf("%s: its first run (batch 1, onnxruntime %s) fails, so it cannot be timed: %w", modelEntry(i, m), ort.Version(), err)
		}
	}
	return nil
}

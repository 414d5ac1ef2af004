package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/pipeline"
	"github.com/mlsched/mlsched/pipeline/config"
	"github.com/mlsched/mlsched/stages"
)

// TestEveryStageHasCode: the worker has code for exactly the stages the
// registry declares.
func TestEveryStageHasCode(t *testing.T) {
	if got, want := Names(), stages.Names(); !slices.Equal(got, want) {
		t.Errorf("worker has code for %v, the registry declares %v", got, want)
	}
	if _, err := Code("nope", stages.DefaultConfig(), stages.Runtime{}); err == nil || !strings.Contains(err.Error(), `no code for stage "nope"`) {
		t.Errorf("Code(nope) = %v", err)
	}
}

// TestPayloadRoundTrip: the configuration a worker decodes is the one the
// command line encoded, to the last default, and a payload that does not
// decode, or does not validate, is refused with a reason.
func TestPayloadRoundTrip(t *testing.T) {
	cfg := stages.DefaultConfig()
	if err := config.Load(config.Options{File: "../../cmd/mlsched/testdata/tiny.yaml"}, &cfg); err != nil {
		t.Fatal(err)
	}
	rt := stages.Runtime{ORTLib: "/x/lib.so", ConfigDir: "/proj", SearchDirs: []string{"/a", "/b"}, Environ: []string{"A=1"}}
	for _, want := range []stages.Config{stages.DefaultConfig(), cfg} {
		b, err := stages.EncodePayload(want, rt)
		if err != nil {
			t.Fatal(err)
		}
		got, gotRT, err := stages.DecodePayload(b)
		if err != nil {
			t.Fatal(err)
		}
		gc, _ := config.Canonical(got)
		wc, _ := config.Canonical(want)
		if !bytes.Equal(gc, wc) {
			t.Errorf("decoded config differs: %v", config.Diff(wc, gc))
		}
		if !slices.Equal(gotRT.SearchDirs, rt.SearchDirs) || gotRT.ORTLib != rt.ORTLib || gotRT.ConfigDir != rt.ConfigDir || !slices.Equal(gotRT.Environ, rt.Environ) {
			t.Errorf("runtime %+v, want %+v", gotRT, rt)
		}
	}
	bad := stages.DefaultConfig()
	bad.Schedule.Load = -1
	b, _ := stages.EncodePayload(bad, rt)
	if _, _, err := stages.DecodePayload(b); err == nil || !strings.Contains(err.Error(), "schedule.load") {
		t.Errorf("DecodePayload of an invalid config = %v", err)
	}
	if _, _, err := stages.DecodePayload([]byte(`{"config": {"seed": "x"}}`)); err == nil || !strings.Contains(err.Error(), "seed") {
		t.Errorf("DecodePayload of a bad document = %v", err)
	}
}

// TestAttachRunsInProcess: with the code attached, the registry's stages
// run in this process (pipeline.Inline): generate, and the profile of
// imported samples (measuring nothing) whose catalog it reads.
func TestAttachRunsInProcess(t *testing.T) {
	cfg := stages.DefaultConfig()
	cfg.Generate.Train.Jobs, cfg.Generate.Eval.Jobs = 10, 10
	imported, err := filepath.Abs("../mlsched/testdata/imported-profile.csv")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Profile.Measure, cfg.Profile.Import = false, imported
	reg, err := stages.Registry(cfg, stages.Runtime{})
	if err != nil {
		t.Fatal(err)
	}
	if err := Attach(reg, cfg, stages.Runtime{}); err != nil {
		t.Fatal(err)
	}
	g, err := reg.Graph()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	st, _ := pipeline.OpenStore(filepath.Join(dir, "data"))
	p := &pipeline.Pipeline{Graph: g, Store: st, LockPath: filepath.Join(dir, "pipeline.lock"), Seed: 1}
	res, err := p.Run(context.Background(), pipeline.RunOptions{Targets: []string{stages.Generate}, Jobs: 1})
	if err != nil || len(res) != 2 || res[0].Stage != stages.Profile || res[1].Stage != stages.Generate ||
		res[0].Outcome != pipeline.Ran || res[1].Outcome != pipeline.Ran {
		t.Fatalf("Run = %v, %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(st.Dir(stages.Generate, res[1].Version), "jobs-eval.parquet")); err != nil {
		t.Error(err)
	}
}

// TestServeRefusesOtherCode: a task whose key names another code version
// than this build's for its stage is refused before any code runs, with
// both versions named; so is one that names none.
func TestServeRefusesOtherCode(t *testing.T) {
	own := stages.CodeVersions()[stages.Generate]
	payload, err := stages.EncodePayload(stages.DefaultConfig(), stages.Runtime{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, code, want string }{
		{"other", strings.Repeat("ab", 32), "generate@265cb280aaaaaaaa needs generate's code version abababababababab, but mlsched-worker was built from other code (generate's code version " + own[:16] + ")"},
		{"none", "", "generate@265cb280aaaaaaaa names no code version, but mlsched-worker was built from other code (generate's code version " + own[:16] + ")"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			task, err := json.Marshal(pipeline.Task{Stage: stages.Generate, Version: "265cb280aaaaaaaa", Code: tc.code, Dir: dir, Payload: payload})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := serve(context.Background(), bytes.NewReader(task), &out); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), tc.want) {
				t.Errorf("answer %s\nwant it to say %q", out.String(), tc.want)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("the refused task wrote %v", entries)
			}
		})
	}
}

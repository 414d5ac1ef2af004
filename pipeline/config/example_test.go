package config_test

import (
	"fmt"

	"github.com/mlsched/mlsched/pipeline/config"
)

type eval struct {
	Jobs int `koanf:"jobs"`
}

type generate struct {
	Eval eval `koanf:"eval"`
}

type appConfig struct {
	Seed     int64    `koanf:"seed"`
	Generate generate `koanf:"generate"`
}

func ExampleLoad() {
	cfg := appConfig{Seed: 1, Generate: generate{Eval: eval{Jobs: 10}}}
	err := config.Load(config.Options{
		File:      "testdata/example.yaml",
		Env:       []string{"MLSCHED_GENERATE__EVAL__JOBS=2000", "HOME=/home/me"},
		EnvPrefix: "MLSCHED_",
		Sets:      []string{"seed=42"},
	}, &cfg)
	fmt.Println(err, cfg.Seed, cfg.Generate.Eval.Jobs)

	err = config.Load(config.Options{
		File: "testdata/example.yaml",
		Sets: []string{"generate.eval.jobz=5", "generate.eval.jobs=abc"},
	}, &cfg)
	fmt.Println(err)
	// Output:
	// <nil> 42 2000
	// --set generate.eval.jobz=5: generate.eval.jobz: unknown key (did you mean generate.eval.jobs?)
	// --set generate.eval.jobs=abc: generate.eval.jobs: want an integer, got "abc"
}

func ExampleCanonical() {
	cfg := appConfig{Seed: 7, Generate: generate{Eval: eval{Jobs: 1000}}}
	b, _ := config.Canonical(cfg)
	fmt.Println(string(b))
	// Output:
	// {"generate":{"eval":{"jobs":1000}},"seed":7}
}

func ExampleDiff() {
	old, _ := config.Canonical(appConfig{Seed: 7, Generate: generate{Eval: eval{Jobs: 1000}}})
	new, _ := config.Canonical(appConfig{Seed: 7, Generate: generate{Eval: eval{Jobs: 2000}}})
	for _, c := range config.Diff(old, new) {
		fmt.Println(c)
	}
	// Output:
	// generate.eval.jobs: 1000 → 2000
}

func ExampleKeys() {
	fmt.Println(config.Keys(appConfig{}))
	// Output:
	// [seed generate.eval.jobs]
}

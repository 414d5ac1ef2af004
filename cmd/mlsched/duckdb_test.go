package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/generate"
)

// duckdbQuery prints, as JSON, what DuckDB sees in one jobs file: its row
// count, its jobs per class and its footer's key-value metadata.
const duckdbQuery = `
import { DuckDBInstance } from '@duckdb/node-api';
const c = await (await DuckDBInstance.create(':memory:')).connect();
const f = process.argv[1].replaceAll("'", "''");
const rows = async (q) => (await c.runAndReadAll(q)).getRowsJS();
const [[n]] = await rows("select count(*)::INTEGER from '" + f + "'");
const classes = Object.fromEntries(await rows("select class, count(*)::INTEGER from '" + f + "' group by 1"));
const meta = Object.fromEntries(await rows("select decode(key), decode(value) from parquet_kv_metadata('" + f + "')"));
console.log(JSON.stringify({rows: n, classes, meta}));
`

// TestDuckDBReadsArtifacts checks generate's output with an independent
// Parquet reader. make test installs DuckDB (DUCKDB_NODE_DIR); a plain
// go test without it skips.
func TestDuckDBReadsArtifacts(t *testing.T) {
	dir := os.Getenv("DUCKDB_NODE_DIR")
	if dir == "" {
		t.Skip("DuckDB not installed: run 'make test' (DUCKDB_NODE_DIR unset)")
	}
	p := newProject(t, "tiny.yaml")
	p.mustCLI("run")
	files, _ := filepath.Glob(filepath.Join(p.dir, "data", "generate", "*", "jobs-eval.parquet"))
	if len(files) != 1 {
		t.Fatalf("found %d eval files", len(files))
	}
	cmd := exec.Command("node", "--input-type=module", "-e", duckdbQuery, files[0])
	cmd.Dir = dir // resolves @duckdb/node-api from the installed node_modules
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("duckdb: %v\n%s", err, out)
	}
	var got struct {
		Rows    int               `json:"rows"`
		Classes map[string]int    `json:"classes"`
		Meta    map[string]string `json:"meta"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("duckdb output %q: %v", out, err)
	}
	jobs, err := parquetio.ReadAll[generate.Job](files[0])
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	for _, j := range jobs {
		want[j.Class]++
	}
	if got.Rows != len(jobs) || got.Rows != 1000 {
		t.Errorf("DuckDB sees %d rows, parquet-go %d, config 1000", got.Rows, len(jobs))
	}
	for class, n := range want {
		if got.Classes[class] != n {
			t.Errorf("class %s: DuckDB counts %d, parquet-go %d", class, got.Classes[class], n)
		}
	}
	version := filepath.Base(filepath.Dir(files[0]))
	if got.Meta[parquetio.KeyStage] != "generate" || got.Meta[parquetio.KeyVersion] != version {
		t.Errorf("DuckDB sees footer metadata %v, want stage generate version %s", got.Meta, version)
	}
}

package parquetio

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

type sample struct {
	ID    int64   `parquet:"id"`
	Model string  `parquet:"model,dict"`
	Value float64 `parquet:"value"`
}

func sampleRows(n int) []sample {
	models := []string{"mlp", "resnet18", "vit"}
	rows := make([]sample, n)
	for i := range rows {
		rows[i] = sample{ID: int64(i), Model: models[i%len(models)], Value: float64(i) * 0.25}
	}
	return rows
}

func provenance(version string) map[string]string {
	return map[string]string{
		KeyStage:    "generate",
		KeyVersion:  version,
		KeyUpstream: "profile@" + version,
		"schema":    "sample/1",
	}
}

// write writes rows to a fresh file in dir and returns its path.
func write(t *testing.T, dir, name string, rows []sample, meta map[string]string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := WriteFile(path, rows, meta); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestWriteFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	// More rows than one page holds, so string values from several pages
	// must all survive the reader's buffer reuse.
	rows := sampleRows(200_000)
	path := write(t, dir, "a.parquet", rows, provenance("v1"))
	got, err := ReadAll[sample](path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rows) {
		t.Fatalf("ReadAll returned %d rows, want %d", len(got), len(rows))
	}
	for i := range rows {
		if got[i] != rows[i] {
			t.Fatalf("row %d = %+v, want %+v", i, got[i], rows[i])
		}
	}
	again := write(t, dir, "b.parquet", rows, provenance("v1"))
	a, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(again)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("writing the same rows and metadata twice gave different bytes")
	}
}

func TestWriterOptionsRowGroups(t *testing.T) {
	type id struct {
		ID int64 `parquet:"id"`
	}
	rows := make([]id, RowGroupRows+10)
	for i := range rows {
		rows[i].ID = int64(i)
	}
	path := filepath.Join(t.TempDir(), "ids.parquet")
	if err := WriteFile(path, rows, nil); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	groups := pf.RowGroups()
	if len(groups) != 2 || groups[0].NumRows() != RowGroupRows {
		t.Errorf("got %d row groups (first %d rows), want 2 with %d rows in the first", len(groups), groups[0].NumRows(), RowGroupRows)
	}
	if got := pf.Metadata().CreatedBy; !strings.Contains(got, parquetGoVersion) {
		t.Errorf("created_by = %q, want it to name parquet-go %s", got, parquetGoVersion)
	}
}

// TestParquetGoVersion keeps the pinned created_by version in step with go.mod.
func TestParquetGoVersion(t *testing.T) {
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	want := "github.com/parquet-go/parquet-go v" + parquetGoVersion
	for _, line := range strings.Split(string(mod), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && strings.Join(f[:2], " ") == want {
			return
		}
	}
	t.Errorf("go.mod does not require %q; update parquetGoVersion", want)
}

// TestReadAllAsksForWhatIsLeft: ReadAll of a file whose rows end short of
// a full batch (one row, and 5,000: a batch and a part) reads them all and
// allocates a few hundred objects for a file of one row. Asked for more
// rows than are left, parquet-go v0.32.0's reader decoded an empty page
// header about 49,000 times before it said io.EOF: 17.6 ms and 49,000
// allocations to read one row.
func TestReadAllAsksForWhatIsLeft(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{1, readBatch + 904} {
		rows := sampleRows(n)
		path := write(t, dir, "a.parquet", rows, provenance("v1"))
		got, err := ReadAll[sample](path)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n || got[n-1] != rows[n-1] {
			t.Fatalf("%d rows: ReadAll returned %d, the last %+v", n, len(got), got[len(got)-1])
		}
		if n > 1 {
			continue
		}
		allocs := testing.AllocsPerRun(5, func() {
			if _, err := ReadAll[sample](path); err != nil {
				t.Fatal(err)
			}
		})
		if allocs > 2000 {
			t.Errorf("ReadAll of one row made %.0f allocations, want a few hundred", allocs)
		}
	}
}

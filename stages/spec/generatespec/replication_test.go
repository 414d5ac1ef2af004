package generatespec

import (
	"reflect"
	"slices"
	"testing"
)

// TestKeyedHoldsTheSection checks that Keyed has every field of Config,
// under the same key, so that no generate key is left out of the stage's
// cache key, and that KeyedOf copies each.
func TestKeyedHoldsTheSection(t *testing.T) {
	ct, kt := reflect.TypeFor[Config](), reflect.TypeFor[Keyed]()
	for i := range ct.NumField() {
		f := ct.Field(i)
		k, ok := kt.FieldByName(f.Name)
		if !ok || k.Type != f.Type || k.Tag != f.Tag {
			t.Errorf("Keyed lacks Config's field %s %s `%s`", f.Name, f.Type, f.Tag)
		}
	}
	c := DefaultConfig()
	k := KeyedOf(c, 3)
	kv, cv := reflect.ValueOf(k), reflect.ValueOf(c)
	for i := range ct.NumField() {
		name := ct.Field(i).Name
		if !reflect.DeepEqual(kv.FieldByName(name).Interface(), cv.FieldByName(name).Interface()) {
			t.Errorf("KeyedOf: %s not copied", name)
		}
	}
	if k.Schedule.Replications != 3 {
		t.Errorf("KeyedOf(c, 3).Schedule.Replications = %d", k.Schedule.Replications)
	}
}

// TestEvalReplicationFiles names each replication's workload: its own
// for a synthetic one, the imported file for every replication of an
// imported one.
func TestEvalReplicationFiles(t *testing.T) {
	c := DefaultConfig()
	if got, want := EvalReplicationFiles(c, 3), []string{"jobs-eval.parquet", "jobs-eval-rep-2.parquet", "jobs-eval-rep-3.parquet"}; !slices.Equal(got, want) {
		t.Errorf("synthetic: %v, want %v", got, want)
	}
	c.Eval.Import = "mine.csv"
	if got, want := EvalReplicationFiles(c, 3), []string{"jobs-eval.parquet", "jobs-eval.parquet", "jobs-eval.parquet"}; !slices.Equal(got, want) {
		t.Errorf("imported: %v, want %v", got, want)
	}
	if EvalWorkloads(c, 3) != 1 || KeyedOf(c, 3).Schedule.Replications != 1 {
		t.Error("an imported eval workload is one workload, whatever the replications")
	}
}

// Package catalogtest gives the tests of stages that read the profile's
// catalog (models.parquet) one of the zoo's models alone, as a profile of
// those writes it, without running the profile.
package catalogtest

import (
	"path/filepath"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/catalog"
)

// ZooFile writes the zoo's catalog to a models.parquet in a new temporary
// directory and returns its path.
func ZooFile(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), catalog.File)
	if err := catalog.Zoo().Write(path, nil); err != nil {
		t.Fatal(err)
	}
	return path
}

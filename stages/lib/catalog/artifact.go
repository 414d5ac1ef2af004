package catalog

import (
	"fmt"
	"path/filepath"

	"github.com/mlsched/mlsched/pipeline/parquetio"
)

// File is the profile's artifact that holds its catalog, a Model a row,
// in catalog order: what every stage downstream of the profile knows of
// the models, the zoo's and the user's alike.
const File = "models.parquet"

// Write writes the catalog to path as Parquet with the footer metadata
// meta.
func (c *Catalog) Write(path string, meta map[string]string) error {
	return parquetio.WriteFile(path, c.models, meta)
}

// Read reads a catalog that Write wrote, checking every row (Model.Validate)
// and refusing two rows of one name; the error names the file and the row.
func Read(path string) (*Catalog, error) {
	rows, err := parquetio.ReadAll[Model](path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Base(path), err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("read %s: no models", filepath.Base(path))
	}
	c, i, err := newCatalog(rows)
	if err != nil {
		return nil, fmt.Errorf("read %s: row %d: %w", filepath.Base(path), i+1, err)
	}
	return c, nil
}

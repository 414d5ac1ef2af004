package digest_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/pipeline/digest"
	"github.com/mlsched/mlsched/pipeline/parquetio"
)

// The files are written by parquetio, as every artifact is.

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
		digest.KeyStage:    "generate",
		digest.KeyVersion:  version,
		digest.KeyUpstream: "profile@" + version,
		"schema":           "sample/1",
	}
}

// write writes rows to a fresh file in dir and returns its path.
func write(t *testing.T, dir, name string, rows []sample, meta map[string]string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := parquetio.WriteFile(path, rows, meta); err != nil {
		t.Fatal(err)
	}
	return path
}

func digestOf(t *testing.T, path string) digest.Digest {
	t.Helper()
	d, err := digest.File(path)
	if err != nil {
		t.Fatalf("digest.File(%s): %v", path, err)
	}
	return d
}

func TestDigestContent(t *testing.T) {
	dir := t.TempDir()
	rows := sampleRows(5000)
	base := digestOf(t, write(t, dir, "base.parquet", rows, provenance("v1")))

	changed := sampleRows(5000)
	changed[4321].Value += 1e-9
	otherMeta := provenance("v1")
	otherMeta["schema"] = "sample/2"

	tests := []struct {
		name        string
		rows        []sample
		meta        map[string]string
		sameContent bool
	}{
		{"same rows, new version", rows, provenance("v2"), true},
		{"same rows, no provenance", rows, map[string]string{"schema": "sample/1"}, true},
		{"one value changed", changed, provenance("v1"), false},
		{"one row fewer", rows[:4999], provenance("v1"), false},
		{"other metadata changed", rows, otherMeta, false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := digestOf(t, write(t, dir, string(rune('a'+i))+".parquet", tt.rows, tt.meta))
			if d.SHA256 == base.SHA256 {
				t.Errorf("SHA256 equal to the base file's; the raw bytes must differ")
			}
			if got := d.Content == base.Content; got != tt.sameContent {
				t.Errorf("Content equal to base = %v, want %v", got, tt.sameContent)
			}
			if d.Rows != int64(len(tt.rows)) {
				t.Errorf("Rows = %d, want %d", d.Rows, len(tt.rows))
			}
		})
	}
}

func TestDigestRaw(t *testing.T) {
	dir := t.TempDir()
	path := write(t, dir, "a.parquet", sampleRows(100), provenance("v1"))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := digestOf(t, path)
	sum := sha256.Sum256(data)
	if d.SHA256 != hex.EncodeToString(sum[:]) || d.Size != int64(len(data)) {
		t.Errorf("File = %+v, want SHA256 %x and Size %d", d, sum, len(data))
	}
	if d.Content == d.SHA256 {
		t.Error("Content of a Parquet file with provenance equals its raw SHA256")
	}
}

// TestDigestNonParquet checks that detection goes by content, not by name.
func TestDigestNonParquet(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ name, data string }{
		{"notes.parquet", "just text, not parquet\n"},
		{"empty.bin", ""},
		{"short.txt", "PAR"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name)
			if err := os.WriteFile(path, []byte(tt.data), 0o644); err != nil {
				t.Fatal(err)
			}
			d := digestOf(t, path)
			sum := sha256.Sum256([]byte(tt.data))
			want := digest.Digest{Size: int64(len(tt.data)), SHA256: hex.EncodeToString(sum[:]), Content: hex.EncodeToString(sum[:]), Rows: -1}
			if d != want {
				t.Errorf("File = %+v, want %+v", d, want)
			}
		})
	}
}

func TestDigestCorrupt(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(write(t, dir, "good.parquet", sampleRows(2000), provenance("v1")))
	if err != nil {
		t.Fatal(err)
	}
	n := len(good)
	footerAt := n - 8 - int(uint32(good[n-8])|uint32(good[n-7])<<8|uint32(good[n-6])<<16|uint32(good[n-5])<<24)
	garbled := bytes.Clone(good)
	for i := footerAt; i < footerAt+40; i++ {
		garbled[i] ^= 0xA5
	}
	hugeLen := bytes.Clone(good)
	copy(hugeLen[n-8:], []byte{0xff, 0xff, 0xff, 0x7f})

	tests := []struct {
		name string
		data []byte
	}{
		{"truncated to half", good[:n/2]},
		{"last byte missing", good[:n-1]},
		{"footer removed", good[:footerAt]},
		{"only the header magic", good[:4]},
		{"header magic damaged", append([]byte("XXXX"), good[4:]...)},
		{"footer garbled", garbled},
		{"footer length too large", hugeLen},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "bad.parquet")
			if err := os.WriteFile(path, tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := digest.File(path)
			if !errors.Is(err, digest.ErrCorrupt) || !strings.Contains(err.Error(), path) {
				t.Errorf("File error = %v, want one wrapping digest.ErrCorrupt and naming %s", err, path)
			}
			if _, _, err := digest.Footer(path); err == nil {
				t.Error("Footer succeeded on a corrupt file")
			}
			if _, err := parquetio.ReadAll[sample](path); err == nil {
				t.Error("ReadAll succeeded on a corrupt file")
			}
		})
	}
}

// TestDigestFooterBitFlips damages every footer byte in turn: whatever the
// thrift decoder makes of it, File and parquetio.ReadAll must return (not panic).
func TestDigestFooterBitFlips(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(write(t, dir, "good.parquet", sampleRows(50), provenance("v1")))
	if err != nil {
		t.Fatal(err)
	}
	n := len(good)
	footerLen := int(uint32(good[n-8]) | uint32(good[n-7])<<8 | uint32(good[n-6])<<16 | uint32(good[n-5])<<24)
	path := filepath.Join(dir, "flipped.parquet")
	errs := 0
	for i := n - 8 - footerLen; i < n-8; i++ {
		data := bytes.Clone(good)
		data[i] ^= 0xff
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := digest.File(path); err != nil {
			errs++
		}
		parquetio.ReadAll[sample](path)
	}
	if errs == 0 {
		t.Errorf("none of %d damaged footers was reported as corrupt", footerLen)
	}
}

func TestFooter(t *testing.T) {
	dir := t.TempDir()
	path := write(t, dir, "a.parquet", sampleRows(1234), provenance("v7"))
	meta, rows, err := digest.Footer(path)
	if err != nil {
		t.Fatal(err)
	}
	if rows != 1234 {
		t.Errorf("rows = %d, want 1234", rows)
	}
	for k, v := range provenance("v7") {
		if meta[k] != v {
			t.Errorf("meta[%q] = %q, want %q", k, meta[k], v)
		}
	}
	text := filepath.Join(dir, "a.txt")
	os.WriteFile(text, []byte("hello"), 0o644)
	if _, _, err := digest.Footer(text); err == nil {
		t.Error("Footer succeeded on a text file")
	}
}

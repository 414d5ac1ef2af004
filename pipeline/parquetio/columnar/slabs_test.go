package columnar

import (
	"bytes"
	"fmt"
	"testing"
)

// TestSlabsKeepPagesInOrder fills pages as writePage does: in the space
// reserve gives, past it (the codec needed more than the bound), in memory
// of the body's own (the codec allocated), and empty. writeTo must give
// each header and body in order, whatever slab each landed in, and after
// empty the next row group's alone.
func TestSlabsKeepPagesInOrder(t *testing.T) {
	type page struct {
		reserve, size int
		own           bool // the body is not in the reserved space
	}
	tests := []struct {
		name  string
		pages []page
	}{
		{"in place", []page{{100, 100, false}, {10, 3, false}, {5000, 4999, false}}},
		{"outgrown", []page{{10, 50, false}, {4000, 9000, false}, {1, 0, false}}},
		{"own memory", []page{{100, 80, true}, {100, 100, false}, {2 << 20, 3 << 20, true}}},
		{"slab boundaries", []page{{3000, 3000, false}, {3000, 3000, false}, {8000, 7000, false}, {1 << 20, 1 << 20, false}, {10, 10, false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s slabs
			defer s.release()
			for round := range 2 {
				var want bytes.Buffer
				for i, p := range tt.pages {
					hdr := []byte(fmt.Sprintf("<hdr %d.%d>", round, i))
					fill := bytes.Repeat([]byte{byte(round*16 + i + 1)}, p.size)
					room := s.reserve(p.reserve)
					if len(room) != 0 || cap(room) < p.reserve {
						t.Fatalf("page %d: reserve(%d) gave len %d cap %d", i, p.reserve, len(room), cap(room))
					}
					body := append(room, fill...)
					if p.own {
						body = bytes.Clone(fill)
					}
					s.add(hdr, body)
					want.Write(hdr)
					want.Write(fill)
				}
				var got bytes.Buffer
				if err := s.writeTo(func(b []byte) error { _, err := got.Write(b); return err }); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got.Bytes(), want.Bytes()) {
					t.Fatalf("round %d: wrote %d bytes, want %d (first difference at %d)", round, got.Len(), want.Len(), firstDiff(got.Bytes(), want.Bytes()))
				}
				s.empty()
			}
		})
	}
}

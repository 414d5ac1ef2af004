package columnar

import (
	"math/bits"
	"sync"
)

// The buffers a file's pages pass through are kept, when the file is
// written, for the next file, as parquet-go pools its own: the schedule
// stage writes hundreds of small traces, and each would otherwise grow
// its buffers anew: 13.8 MB of allocations for a file of 20,000
// trace-like rows, 0.6 MB with these kept (BenchmarkTable).

// maxSpare bounds the bytes kept between files.
const maxSpare = 64 << 20

// spare keeps slabs by size class (a power of two), columns' page
// buffers and writers' encoding buffers.
var spare struct {
	sync.Mutex
	slabs    map[int][][]byte
	buffers  []*pageBuffers
	encoders []*encodeBuffers
	bytes    int
}

// pageBuffers are a column's page and scratch buffers.
type pageBuffers struct {
	i64     []int64
	f64     []float64
	i32     []int32
	bools   []byte // one bit per value, as parquet-go packs them
	levels  []byte
	used    []uint64 // scratch for usedIndexes
	usedIdx []int32
}

func (b *pageBuffers) size() int {
	return 8*cap(b.i64) + 8*cap(b.f64) + 4*cap(b.i32) + cap(b.bools) + cap(b.levels) + 8*cap(b.used) + 4*cap(b.usedIdx)
}

// encodeBuffers hold a page as it is encoded and compressed. A writer's
// columns share one: it writes a page at a time.
type encodeBuffers struct {
	defs, data, packed []byte
}

func (b *encodeBuffers) size() int { return cap(b.defs) + cap(b.data) + cap(b.packed) }

// newSlab returns an empty buffer of at least size bytes: a kept one of
// size's class if there is one.
func newSlab(size int) []byte {
	class := 1 << bits.Len(uint(size-1))
	spare.Lock()
	defer spare.Unlock()
	if free := spare.slabs[class]; len(free) > 0 {
		b := free[len(free)-1]
		spare.slabs[class] = free[:len(free)-1]
		spare.bytes -= cap(b)
		return b[:0]
	}
	return make([]byte, 0, class)
}

// keepSlabs keeps bufs for later newSlab calls, while there is room.
func keepSlabs(bufs [][]byte) {
	spare.Lock()
	defer spare.Unlock()
	if spare.slabs == nil {
		spare.slabs = make(map[int][][]byte)
	}
	for _, b := range bufs {
		if c := cap(b); spare.bytes+c <= maxSpare {
			spare.slabs[c] = append(spare.slabs[c], b)
			spare.bytes += c
		}
	}
}

// newPageBuffers returns a column's buffers: kept ones if there are any.
func newPageBuffers() *pageBuffers { return take(&spare.buffers) }

// keepPageBuffers keeps b, emptied, for a later newPageBuffers, while there
// is room.
func keepPageBuffers(b *pageBuffers) {
	*b = pageBuffers{
		i64: b.i64[:0], f64: b.f64[:0], i32: b.i32[:0], bools: b.bools[:0], levels: b.levels[:0],
		used: b.used[:0], usedIdx: b.usedIdx[:0],
	}
	keep(&spare.buffers, b)
}

// newEncodeBuffers returns a writer's encoding buffers: kept ones if there
// are any.
func newEncodeBuffers() *encodeBuffers { return take(&spare.encoders) }

// keepEncodeBuffers keeps b for a later newEncodeBuffers, while there is
// room.
func keepEncodeBuffers(b *encodeBuffers) { keep(&spare.encoders, b) }

// take returns the last of the kept buffers in list, or new ones.
func take[B any, P interface {
	*B
	size() int
}](list *[]P) P {
	spare.Lock()
	defer spare.Unlock()
	n := len(*list)
	if n == 0 {
		return new(B)
	}
	b := (*list)[n-1]
	*list = (*list)[:n-1]
	spare.bytes -= b.size()
	return b
}

// keep adds b to list, if spare has room for its bytes.
func keep[P interface{ size() int }](list *[]P, b P) {
	spare.Lock()
	defer spare.Unlock()
	if n := b.size(); spare.bytes+n <= maxSpare {
		*list = append(*list, b)
		spare.bytes += n
	}
}

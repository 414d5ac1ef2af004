package placementnet

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/mlsched/mlsched/stages/lib/sim"
)

// Defaults of CacheOptions' zero fields.
const (
	// DefaultStep is the width of a cache cell in every standardized
	// feature: a tenth of the feature's spread on the training split.
	DefaultStep = 0.1
	// DefaultCacheSize is how many cells the cache remembers.
	DefaultCacheSize = 4096
)

// maxCacheSize bounds CacheOptions.Size, at 48 MiB of cells, 8 MiB of
// links and 16 MiB of table: a cache is meant to hold a simulation's
// recurring states, not all of them.
const maxCacheSize = 1 << 20

// Key is a cell of the standardized feature space: feature k of the
// points in the cell lies in [Key[k]·step, (Key[k]+1)·step).
type Key [sim.NumFeatures]int32

// CacheOptions sets a Cache. A zero field takes its default.
type CacheOptions struct {
	// Step is the cell width in every standardized feature, positive;
	// default DefaultStep.
	Step float64
	// Size is how many cells the cache holds before it forgets the least
	// recently used; default DefaultCacheSize, at most 1,048,576.
	Size int
}

// CacheStats counts a Cache's traffic since NewCache.
type CacheStats struct {
	// Hits and Misses count Get's answers.
	Hits, Misses uint64
	// Evictions counts the cells Put dropped to make room.
	Evictions uint64
	// Len is how many cells the cache holds now, at most Size.
	Len, Size int
}

// Cache remembers the network's probability for recently seen cells of the
// standardized feature space (Key), up to a fixed number of cells, the
// least recently used forgotten first. Its storage is allocated by
// NewCache, so Get and Put allocate nothing, and its answers depend only
// on the sequence of calls. A Cache is used by one goroutine at a time.
type Cache struct {
	step float64
	// slots are the cells, linked from the most recently used (head) to
	// the least (tail) through links[i], slot i's neighbours (none: no
	// neighbour). The links lie apart from the cells, 8 bytes each, so
	// that moving a cell in the recency order reads no other cell.
	slots      []slot
	links      []link
	head, tail int32
	// table finds a key's slot: open addressing with linear probing, at
	// most half full, each entry a slot index (or none) and the low 32
	// bits of its key's hash, so that a probe past another key, and the
	// shifting of a probe run, read the table alone rather than a slot
	// elsewhere in memory. A Go map keyed by
	// Key allocates nothing to look up, but under a steady stream of
	// deletes and inserts it now and then grows or rehashes (5 to 36
	// allocations per 100,000 evictions on go1.26), which a hot path that
	// promises no allocation cannot have; a table of fixed size never does,
	// and has no tombstones to clean because deletion shifts the probe run
	// back.
	table []entry
	mask  uint64
	stats CacheStats
}

// slot is one remembered cell.
type slot struct {
	key  Key
	hash uint32 // the low bits of hashKey(key), as in its entry
	p    float32
}

// link is a slot's neighbours in the recency order.
type link struct{ prev, next int32 }

// entry is a position of the table: the slot it finds (none: empty) and
// the low 32 bits of that slot's key's hash, which hold its home position
// (the table has at most 2²¹ positions).
type entry struct {
	slot int32
	hash uint32
}

// none is the nil slot index.
const none = -1

// NewCache returns an empty cache with cells opts.Step wide holding up to
// opts.Size of them.
func NewCache(opts CacheOptions) (*Cache, error) {
	if opts.Step == 0 {
		opts.Step = DefaultStep
	}
	if opts.Size == 0 {
		opts.Size = DefaultCacheSize
	}
	if !(opts.Step > 0) || math.IsInf(opts.Step, 0) {
		return nil, fmt.Errorf("serving: new cache: step %v: want a positive, finite width", opts.Step)
	}
	if opts.Size < 0 || opts.Size > maxCacheSize {
		return nil, fmt.Errorf("serving: new cache: size %d: want 1 to %d cells", opts.Size, maxCacheSize)
	}
	c := &Cache{
		step:  opts.Step,
		slots: make([]slot, 0, opts.Size),
		links: make([]link, opts.Size),
		head:  none,
		tail:  none,
		table: make([]entry, 2<<bits.Len(uint(opts.Size-1))),
		stats: CacheStats{Size: opts.Size},
	}
	c.mask = uint64(len(c.table) - 1)
	for i := range c.table {
		c.table[i].slot = none
	}
	return c, nil
}

// Key returns the cell of the standardized point z: floor(z[k] / step) for
// each feature, clamped to int32. A point with a NaN feature has no cell
// (false): the network's answer for it is NaN, which no other point shares.
func (c *Cache) Key(z *[sim.NumFeatures]float32) (Key, bool) {
	var k Key
	for i, v := range z {
		q := math.Floor(float64(v) / c.step)
		if q >= math.MinInt32 && q <= math.MaxInt32 { // false for NaN
			k[i] = int32(q)
			continue
		}
		switch {
		case q != q: // NaN
			return Key{}, false
		case q < 0:
			k[i] = math.MinInt32
		default:
			k[i] = math.MaxInt32
		}
	}
	return k, true
}

// Get returns the probability remembered for cell k and marks k the most
// recently used, or false if the cache does not hold k.
func (c *Cache) Get(k Key) (float32, bool) {
	i, _ := c.find(&k, hashKey(&k))
	if i == none {
		c.stats.Misses++
		return 0, false
	}
	c.stats.Hits++
	c.touch(i)
	return c.slots[i].p, true
}

// Put remembers p for cell k as the most recently used, forgetting the
// least recently used cell if the cache is full.
func (c *Cache) Put(k Key, p float32) {
	h := hashKey(&k)
	if i, _ := c.find(&k, h); i != none {
		c.slots[i].p = p
		c.touch(i)
		return
	}
	var i int32
	if len(c.slots) < cap(c.slots) {
		i = int32(len(c.slots))
		c.slots = c.slots[:i+1]
	} else {
		i = c.tail
		c.unlink(i)
		c.remove(i)
		c.stats.Evictions++
	}
	c.slots[i], c.links[i] = slot{key: k, hash: uint32(h), p: p}, link{none, none}
	// Find again: the removal may have shifted k's probe run.
	_, at := c.find(&k, h)
	c.table[at] = entry{slot: i, hash: uint32(h)}
	c.pushFront(i)
}

// Reset empties the cache, as NewCache made it, keeping its storage: a
// cache reset answers and counts as a new one would.
func (c *Cache) Reset() {
	c.slots = c.slots[:0]
	c.head, c.tail = none, none
	for i := range c.table {
		c.table[i].slot = none
	}
	c.stats = CacheStats{Size: c.stats.Size}
}

// Stats returns the cache's counts.
func (c *Cache) Stats() CacheStats {
	s := c.stats
	s.Len = len(c.slots)
	return s
}

// Step returns the width of a cell in every standardized feature.
func (c *Cache) Step() float64 { return c.step }

// touch makes slot i the most recently used.
func (c *Cache) touch(i int32) {
	if c.head == i {
		return
	}
	c.unlink(i)
	c.pushFront(i)
}

// unlink takes slot i out of the recency list.
func (c *Cache) unlink(i int32) {
	l := &c.links[i]
	if l.prev != none {
		c.links[l.prev].next = l.next
	} else {
		c.head = l.next
	}
	if l.next != none {
		c.links[l.next].prev = l.prev
	} else {
		c.tail = l.prev
	}
	*l = link{none, none}
}

// pushFront puts the unlinked slot i at the head of the recency list.
func (c *Cache) pushFront(i int32) {
	c.links[i] = link{none, c.head}
	if c.head != none {
		c.links[c.head].prev = i
	}
	c.head = i
	if c.tail == none {
		c.tail = i
	}
}

// find returns the slot holding k, whose hash is h, and its position in
// the table, or none and the empty position where k would go. Only h's
// low 32 bits are read: they hold the position, the mask being narrower.
func (c *Cache) find(k *Key, h uint64) (int32, uint64) {
	for at := h & c.mask; ; at = (at + 1) & c.mask {
		e := c.table[at]
		if e.slot == none || (e.hash == uint32(h) && c.slots[e.slot].key == *k) {
			return e.slot, at
		}
	}
}

// remove takes slot i out of the table, moving later entries of its probe
// run back into the gap so that every key stays reachable from its home
// position without a gap in between.
func (c *Cache) remove(i int32) {
	_, gap := c.find(&c.slots[i].key, uint64(c.slots[i].hash))
	for at := (gap + 1) & c.mask; c.table[at].slot != none; at = (at + 1) & c.mask {
		// The entry at at may fill the gap unless its home lies
		// cyclically in (gap, at]: moving it before its home would hide
		// it from find.
		home := uint64(c.table[at].hash) & c.mask
		if (at-home)&c.mask >= (at-gap)&c.mask {
			c.table[gap] = c.table[at]
			gap = at
		}
	}
	c.table[gap].slot = none
}

// hashKey mixes the cell's coordinates into 64 bits whose low bits, which
// pick the home position, depend on every coordinate: neighbouring cells
// differ by one in one coordinate. It is fixed, not seeded, so a cache's
// behaviour (which keys collide) is the same in every run.
func hashKey(k *Key) uint64 {
	h := uint64(0x9e3779b97f4a7c15)
	// Two coordinates a round: a multiply mixes 64 bits as cheaply as 32.
	for i := 0; i+1 < len(k); i += 2 {
		h = (h ^ (uint64(uint32(k[i])) | uint64(uint32(k[i+1]))<<32)) * 0xff51afd7ed558ccd
		h ^= h >> 29
	}
	if len(k)%2 == 1 {
		h = (h ^ uint64(uint32(k[len(k)-1]))) * 0xff51afd7ed558ccd
		h ^= h >> 29
	}
	// murmur3's 64-bit finalizer.
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

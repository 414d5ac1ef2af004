package placementnet

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/sim"
)

func mustCache(t testing.TB, opts CacheOptions) *Cache {
	t.Helper()
	c, err := NewCache(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCacheKey checks the cell of single standardized values: floor of
// z / step, negative values rounded down, the extremes clamped and NaN
// refused.
func TestCacheKey(t *testing.T) {
	tests := []struct {
		step float64
		z    float32
		want int32
		ok   bool
	}{
		{0.1, 0.05, 0, true},
		{0.1, 0.15, 1, true},
		{0.1, -0.05, -1, true},
		{0.1, -0.15, -2, true},
		{0.1, 2.34, 23, true},
		{0.5, 2.34, 4, true},
		{0.5, -2.34, -5, true},
		{0.1, 1e12, math.MaxInt32, true},
		{0.1, -1e12, math.MinInt32, true},
		{0.1, float32(math.Inf(1)), math.MaxInt32, true},
		{0.1, float32(math.Inf(-1)), math.MinInt32, true},
		{0.1, 214748364.7, 2147483647, true},
		{0.1, -214748364.8, math.MinInt32, true},
		{0.1, float32(math.NaN()), 0, false},
	}
	for _, tt := range tests {
		c := mustCache(t, CacheOptions{Step: tt.step, Size: 1})
		for k := range sim.NumFeatures {
			var z [sim.NumFeatures]float32
			z[k] = tt.z
			got, ok := c.Key(&z)
			var want Key
			want[k] = tt.want
			if ok != tt.ok || (ok && got != want) {
				t.Errorf("step %g: Key(z[%d] = %v) = %v, %v; want %v, %v", tt.step, k, tt.z, got, ok, want, tt.ok)
			}
		}
	}
}

// TestCacheKeyNeighbours moves one feature of held-out points at a time
// in standardized space, by inverting the network's standardisation, and
// checks which moves stay in the cell: 0.9 steps inside a cell share its
// key, a step apart never does, in every feature alike.
func TestCacheKeyNeighbours(t *testing.T) {
	f := mustTrained(t)
	g, err := parseModel(f.model)
	if err != nil {
		t.Fatal(err)
	}
	n, s := &Network{norm: g.norm}, &g.norm
	c := mustCache(t, CacheOptions{})
	step := c.Step()
	// at returns the point whose feature k standardizes to zk, the others
	// those of x.
	at := func(x [sim.NumFeatures]float32, k int, zk float64) [sim.NumFeatures]float32 {
		x[k] = float32(math.Sinh(zk*float64(s.std[k])+float64(s.mean[k])) / float64(s.scale[k]))
		return x
	}
	tests := []struct {
		name  string
		steps float64 // from 0.45 steps below a cell's centre
		shift int32   // the key's change
	}{
		{"same point", 0, 0},
		{"0.5 steps apart in one cell", 0.5, 0},
		{"0.9 steps apart in one cell", 0.9, 0},
		{"one step up", 1, 1},
		{"one step down", -1, -1},
		{"2.5 steps up", 2.5, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, x := range f.held[:50] {
				var z [sim.NumFeatures]float32
				n.Standardize(&x, &z)
				for k := range sim.NumFeatures {
					lo := (math.Floor(float64(z[k])/step) + 0.05) * step
					a, b := at(x, k, lo), at(x, k, lo+tt.steps*step)
					var za, zb [sim.NumFeatures]float32
					n.Standardize(&a, &za)
					n.Standardize(&b, &zb)
					ka, _ := c.Key(&za)
					kb, _ := c.Key(&zb)
					want := ka
					want[k] += tt.shift
					if kb != want {
						t.Errorf("point %d, %s: z %v and %v (%g steps apart) have keys %v and %v; want the second %v",
							i, sim.FeatureNames[k], za[k], zb[k], tt.steps, ka, kb, want)
					}
				}
			}
		})
	}
}

// cacheOp is one call in a cache scenario: put p for key, or get key and
// expect (p, hit).
type cacheOp struct {
	put bool
	key int32
	p   float32
	hit bool
}

func put(key int32, p float32) cacheOp { return cacheOp{put: true, key: key, p: p} }
func hit(key int32, p float32) cacheOp { return cacheOp{key: key, p: p, hit: true} }
func miss(key int32) cacheOp           { return cacheOp{key: key} }
func keyOf(i int32) Key                { return Key{i, -i, 2 * i} }
func (o cacheOp) apply(c *Cache) (float32, bool) {
	if o.put {
		c.Put(keyOf(o.key), o.p)
		return 0, false
	}
	return c.Get(keyOf(o.key))
}

// order lists the cache's keys (their first element) from the most
// recently used to the least, walking the list both ways.
func order(t *testing.T, c *Cache) []int32 {
	t.Helper()
	var fwd, back []int32
	for i := c.head; i != none; i = c.links[i].next {
		fwd = append(fwd, c.slots[i].key[0])
	}
	for i := c.tail; i != none; i = c.links[i].prev {
		back = append(back, c.slots[i].key[0])
	}
	slices.Reverse(back)
	if !slices.Equal(fwd, back) {
		t.Fatalf("recency list is %v forwards but %v backwards", fwd, back)
	}
	var entries int
	for at, e := range c.table {
		if e.slot == none {
			continue
		}
		entries++
		if h := hashKey(&c.slots[e.slot].key); e.hash != uint32(h) || c.slots[e.slot].hash != uint32(h) {
			t.Fatalf("table position %d: hash %08x for slot %d, whose key's is %08x (the slot says %08x)", at, e.hash, e.slot, uint32(h), c.slots[e.slot].hash)
		}
	}
	if len(fwd) != entries || len(fwd) != len(c.slots) {
		t.Fatalf("recency list holds %d cells, the table %d, the slots %d", len(fwd), entries, len(c.slots))
	}
	for i := range c.slots {
		if got, _ := c.find(&c.slots[i].key, hashKey(&c.slots[i].key)); got != int32(i) {
			t.Fatalf("slot %d's key %v is found at slot %d", i, c.slots[i].key, got)
		}
	}
	return fwd
}

// TestCacheLRU plays scenarios on a cache of three cells and checks every
// answer, the recency order left and the counts.
func TestCacheLRU(t *testing.T) {
	tests := []struct {
		name  string
		ops   []cacheOp
		order []int32
		stats CacheStats
	}{
		{"empty", []cacheOp{miss(1)}, nil, CacheStats{Misses: 1}},
		{"fill", []cacheOp{put(1, 0.1), put(2, 0.2), put(3, 0.3)}, []int32{3, 2, 1}, CacheStats{Len: 3}},
		{"evict the oldest", []cacheOp{put(1, 0.1), put(2, 0.2), put(3, 0.3), put(4, 0.4), miss(1), hit(2, 0.2), hit(4, 0.4)},
			[]int32{4, 2, 3}, CacheStats{Hits: 2, Misses: 1, Evictions: 1, Len: 3}},
		{"a get saves a cell", []cacheOp{put(1, 0.1), put(2, 0.2), put(3, 0.3), hit(1, 0.1), put(4, 0.4), miss(2), hit(3, 0.3), put(5, 0.5), miss(1)},
			[]int32{5, 3, 4}, CacheStats{Hits: 2, Misses: 2, Evictions: 2, Len: 3}},
		{"a put updates in place", []cacheOp{put(1, 0.1), put(2, 0.2), put(3, 0.3), put(1, 0.9), put(4, 0.4), hit(1, 0.9), miss(2)},
			[]int32{1, 4, 3}, CacheStats{Hits: 1, Misses: 1, Evictions: 1, Len: 3}},
		{"touch the head", []cacheOp{put(1, 0.1), put(2, 0.2), hit(2, 0.2), hit(2, 0.2), put(3, 0.3), put(4, 0.4), miss(1)},
			[]int32{4, 3, 2}, CacheStats{Hits: 2, Misses: 1, Evictions: 1, Len: 3}},
		{"touch the tail", []cacheOp{put(1, 0.1), put(2, 0.2), put(3, 0.3), hit(1, 0.1), hit(2, 0.2), put(4, 0.4), miss(3)},
			[]int32{4, 2, 1}, CacheStats{Hits: 2, Misses: 1, Evictions: 1, Len: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustCache(t, CacheOptions{Size: 3})
			for i, o := range tt.ops {
				p, ok := o.apply(c)
				if !o.put && (p != o.p || ok != o.hit) {
					t.Errorf("op %d: Get(%d) = %v, %v; want %v, %v", i, o.key, p, ok, o.p, o.hit)
				}
			}
			if got := order(t, c); !slices.Equal(got, tt.order) {
				t.Errorf("recency order %v, want %v", got, tt.order)
			}
			tt.stats.Size = 3
			if got := c.Stats(); got != tt.stats {
				t.Errorf("Stats() = %+v, want %+v", got, tt.stats)
			}
		})
	}
}

// TestCacheMatchesReference plays a long seeded sequence of calls on the
// cache and on a plain slice kept in recency order, and requires the same
// answers and counts: the cache is an LRU and its answers depend on the
// calls alone, a cache that was used and Reset as a new one's.
func TestCacheMatchesReference(t *testing.T) {
	tests := []struct{ size, keys int }{{1, 3}, {8, 20}, {64, 200}, {100, 101}}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d cells, %d keys", tt.size, tt.keys), func(t *testing.T) {
			checkReference(t, mustCache(t, CacheOptions{Size: tt.size}), tt.size, tt.keys)
		})
		t.Run(fmt.Sprintf("%d cells, %d keys, reset", tt.size, tt.keys), func(t *testing.T) {
			c := mustCache(t, CacheOptions{Size: tt.size})
			for i := range 3 * tt.size {
				c.Put(keyOf(int32(i)), float32(i))
				c.Get(keyOf(int32(i / 2)))
			}
			c.Reset()
			checkReference(t, c, tt.size, tt.keys)
		})
	}
}

// checkReference plays 100,000 seeded calls over keys keys on c, a cache
// of size cells, and on the reference.
func checkReference(t *testing.T, c *Cache, size, keys int) {
	type entry struct {
		key int32
		p   float32
	}
	var ref []entry // most recent first
	var want CacheStats
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 100_000 {
		k := int32(r.IntN(keys))
		j := slices.IndexFunc(ref, func(e entry) bool { return e.key == k })
		if r.IntN(2) == 0 {
			p := float32(i)
			if j >= 0 {
				ref = slices.Delete(ref, j, j+1)
			} else if len(ref) == size {
				ref = ref[:size-1]
				want.Evictions++
			}
			ref = slices.Insert(ref, 0, entry{k, p})
			c.Put(keyOf(k), p)
			continue
		}
		var wp float32
		if j >= 0 {
			e := ref[j]
			wp = e.p
			ref = slices.Insert(slices.Delete(ref, j, j+1), 0, e)
			want.Hits++
		} else {
			want.Misses++
		}
		if p, ok := c.Get(keyOf(k)); ok != (j >= 0) || p != wp {
			t.Fatalf("call %d: Get(%d) = %v, %v; want %v, %v", i, k, p, ok, wp, j >= 0)
		}
	}
	var wantOrder []int32
	for _, e := range ref {
		wantOrder = append(wantOrder, e.key)
	}
	if got := order(t, c); !slices.Equal(got, wantOrder) {
		t.Errorf("recency order %v, want %v", got, wantOrder)
	}
	want.Len, want.Size = len(ref), size
	if got := c.Stats(); got != want {
		t.Errorf("Stats() = %+v, want %+v", got, want)
	}
}

// TestNewCache checks the defaults and the options NewCache refuses.
func TestNewCache(t *testing.T) {
	c := mustCache(t, CacheOptions{})
	if c.Step() != DefaultStep || c.Stats().Size != DefaultCacheSize {
		t.Errorf("zero options give step %v and size %d; want %v and %d", c.Step(), c.Stats().Size, DefaultStep, DefaultCacheSize)
	}
	tests := []struct {
		opts CacheOptions
		want string
	}{
		{CacheOptions{Step: -0.1}, "step -0.1: want a positive, finite width"},
		{CacheOptions{Step: math.NaN()}, "step NaN"},
		{CacheOptions{Step: math.Inf(1)}, "step +Inf"},
		{CacheOptions{Size: -1}, "size -1: want 1 to 1048576 cells"},
		{CacheOptions{Size: 1<<20 + 1}, "size 1048577"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%+v", tt.opts), func(t *testing.T) {
			_, err := NewCache(tt.opts)
			if err == nil || !strings.HasPrefix(err.Error(), "serving: new cache: ") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewCache = %v; want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestCacheAllocs requires Key, Get and Put to allocate nothing once the
// cache is full: hits, misses, updates and a long run of evictions (each
// one a map delete and insert), counted over whole loops so that a rare
// allocation is not averaged away.
func TestCacheAllocs(t *testing.T) {
	const size = 256
	c := mustCache(t, CacheOptions{Size: size})
	for i := range int32(size) {
		c.Put(keyOf(i), 0.5)
	}
	next := int32(size)
	z := [sim.NumFeatures]float32{0.3, -1.2, 4, 0, 0, 0.05, -0.05, 2, 1, 0.7}
	tests := []struct {
		name string
		f    func()
	}{
		{"Key", func() {
			for range 1000 {
				if _, ok := c.Key(&z); !ok {
					t.Fatal("Key refused a finite point")
				}
			}
		}},
		{"Get hit", func() {
			for i := range 10_000 {
				c.Get(keyOf(next - 1 - int32(i%size)))
			}
		}},
		{"Get miss", func() {
			for i := range 10_000 {
				c.Get(keyOf(-1 - int32(i)))
			}
		}},
		{"Put update", func() {
			for i := range 10_000 {
				c.Put(keyOf(next-1-int32(i%size)), 0.25)
			}
		}},
		{"Put evict", func() {
			for range 100_000 {
				c.Put(keyOf(next), 0.75)
				next++
			}
		}},
	}
	for _, tt := range tests {
		if allocs := testing.AllocsPerRun(1, tt.f); allocs != 0 {
			t.Errorf("%s: %v allocations in a loop, want 0", tt.name, allocs)
		}
	}
	if s := c.Stats(); s.Evictions < 100_000 || s.Len != size {
		t.Errorf("Stats() = %+v; want the evictions counted and the cache full", s)
	}
}

// TestHashKeySpreads: the cells of a grid, which differ by one in a few
// coordinates as a simulation's neighbouring states do, spread over a
// table's home positions as random keys would (at most 12 in any of 8192
// positions for 8000 cells, where a uniform hash puts more than 9 in one
// about once in 10⁴ tables), whichever coordinates vary.
func TestHashKeySpreads(t *testing.T) {
	for _, dims := range [][3]int{{0, 1, 2}, {3, 5, 9}, {7, 8, 9}, {0, 4, 8}} {
		load := make([]int, 8192)
		for a := range 20 {
			for b := range 20 {
				for c := range 20 {
					k := Key{-3, 1, 4, -1, 5, 9, -2, 6, 5, 3}
					k[dims[0]], k[dims[1]], k[dims[2]] = int32(a-10), int32(b-10), int32(c-10)
					load[hashKey(&k)&8191]++
				}
			}
		}
		if m := slices.Max(load); m > 12 {
			t.Errorf("coordinates %v: %d cells share a home position", dims, m)
		}
	}
}

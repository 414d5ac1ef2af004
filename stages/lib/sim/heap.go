package sim

// timers holds every pending event of a simulation: one slot per device for
// its batching timer and one per lane for the completion of the batch it
// runs. The slots form an indexed binary min-heap ordered by time, ties in
// the order the events were set. Setting a slot that is already pending
// moves it in place, so a re-timed completion leaves nothing stale behind
// and the heap never holds more entries than the cluster has lanes and
// devices.
type timers struct {
	slots []timer
	heap  []int32 // slot numbers in heap order
}

type timer struct {
	time      float64
	seq       uint64 // ties at equal time go in the order set
	dev, lane int32  // lane -1 is the device's batching timer
	pos       int32  // index in heap; -1 when not pending
}

// init makes the slots for devices with the given lanes: device d's timer
// is slot base(d) and its lane i slot base(d)+1+i.
func (t *timers) init(lanes []int) (base []int32) {
	base = make([]int32, len(lanes))
	for d, n := range lanes {
		base[d] = int32(len(t.slots))
		for i := -1; i < n; i++ {
			t.slots = append(t.slots, timer{dev: int32(d), lane: int32(i), pos: -1})
		}
	}
	t.heap = make([]int32, 0, len(t.slots))
	return base
}

func (t *timers) before(a, b int32) bool {
	x, y := &t.slots[a], &t.slots[b]
	if x.time != y.time {
		return x.time < y.time
	}
	return x.seq < y.seq
}

func (t *timers) swap(i, j int) {
	h := t.heap
	h[i], h[j] = h[j], h[i]
	t.slots[h[i]].pos = int32(i)
	t.slots[h[j]].pos = int32(j)
}

func (t *timers) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !t.before(t.heap[i], t.heap[p]) {
			return
		}
		t.swap(i, p)
		i = p
	}
}

func (t *timers) down(i int) {
	n := len(t.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && t.before(t.heap[r], t.heap[l]) {
			m = r
		}
		if !t.before(t.heap[m], t.heap[i]) {
			return
		}
		t.swap(i, m)
		i = m
	}
}

// set makes slot s fire at time at, in order seq among equal times,
// replacing what it was set to.
func (t *timers) set(s int32, at float64, seq uint64) {
	x := &t.slots[s]
	x.time, x.seq = at, seq
	if x.pos < 0 {
		x.pos = int32(len(t.heap))
		t.heap = append(t.heap, s)
		t.up(int(x.pos))
		return
	}
	i := int(x.pos)
	t.up(i)
	t.down(int(t.slots[s].pos))
}

// next is the slot that fires first; ok is false when none is pending.
func (t *timers) next() (s int32, ok bool) {
	if len(t.heap) == 0 {
		return 0, false
	}
	return t.heap[0], true
}

// pop removes the slot that fires first and returns it.
func (t *timers) pop() *timer {
	s := t.heap[0]
	last := len(t.heap) - 1
	t.swap(0, last)
	t.heap = t.heap[:last]
	t.down(0)
	x := &t.slots[s]
	x.pos = -1
	return x
}

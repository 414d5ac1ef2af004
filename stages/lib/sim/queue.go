package sim

// entry is a job's place in a queue or group. Removal is lazy: a job leaves
// by taking a new stamp (0 once it runs or moves), which makes its entries
// stale, and each structure drops stale entries when they reach its front.
// So a job can leave a queue from anywhere, in O(1), while batching takes it
// through its group.
type entry struct {
	job   *Job
	stamp uint64 // the job's stamp when it was queued; unique and increasing
}

func (e entry) live() bool { return e.job.stamp == e.stamp }

// queue is a device's waiting jobs: FIFO, or a heap in a Ranker's order with
// ties broken by the order they were queued in.
type queue struct {
	ranker Ranker
	keyed  KeyRanker // set when ranker is one: keys are compared inline
	fifo   []entry
	head   int
	heap   []ranked
}

type ranked struct {
	entry
	key RankKey
}

func (q *queue) init(r Ranker) {
	q.ranker = r
	q.keyed, _ = r.(KeyRanker)
}

func (q *queue) push(e entry) {
	if q.ranker == nil {
		q.fifo = append(q.fifo, e)
		return
	}
	r := ranked{entry: e}
	if q.keyed != nil {
		r.key = q.keyed.Key(e.job)
	}
	q.heap = append(q.heap, r)
	q.up(len(q.heap) - 1)
}

// peek returns the first live job in order for which fits holds, leaving it
// queued. With strict it looks only at the first live job. It returns nil
// when no job qualifies.
func (q *queue) peek(fits func(*Job) bool, strict bool) *Job {
	if q.ranker == nil {
		q.dropStaleFIFO()
		for i := q.head; i < len(q.fifo); i++ {
			e := q.fifo[i]
			if !e.live() {
				continue
			}
			if fits(e.job) {
				return e.job
			}
			if strict {
				return nil
			}
		}
		return nil
	}
	for len(q.heap) > 0 && !q.heap[0].live() {
		q.popHeap()
	}
	if len(q.heap) == 0 {
		return nil
	}
	if fits(q.heap[0].job) {
		return q.heap[0].job
	}
	if strict {
		return nil
	}
	// Pop in order until one fits, then put them all back: the rare case
	// of a memory-bound device, paid only then. Stale entries go for good.
	var popped []ranked
	var found *Job
	for len(q.heap) > 0 {
		r := q.popHeap()
		if !r.live() {
			continue
		}
		popped = append(popped, r)
		if fits(r.job) {
			found = r.job
			break
		}
	}
	for _, r := range popped {
		q.heap = append(q.heap, r)
		q.up(len(q.heap) - 1)
	}
	return found
}

func (q *queue) dropStaleFIFO() {
	q.fifo, q.head = dropStale(q.fifo, q.head)
}

// dropStale advances head past the stale entries at the front of a FIFO
// slice, and moves the rest to the start once the dead front is over half
// of it, so a long run's memory stays with the waiting jobs.
func dropStale(es []entry, head int) ([]entry, int) {
	for head < len(es) && !es[head].live() {
		es[head] = entry{}
		head++
	}
	if head > 1024 && head*2 > len(es) {
		n := copy(es, es[head:])
		clear(es[n:])
		es, head = es[:n], 0
	}
	return es, head
}

// reset empties the queue; every entry is stale when no job waits.
func (q *queue) reset() {
	clear(q.fifo)
	q.fifo, q.head = q.fifo[:0], 0
	clear(q.heap)
	q.heap = q.heap[:0]
}

func (q *queue) less(a, b ranked) bool {
	if q.keyed != nil {
		if a.key.Major != b.key.Major {
			return a.key.Major < b.key.Major
		}
		if a.key.Minor != b.key.Minor {
			return a.key.Minor < b.key.Minor
		}
		return a.stamp < b.stamp
	}
	if q.ranker.Less(a.job, b.job) {
		return true
	}
	if q.ranker.Less(b.job, a.job) {
		return false
	}
	return a.stamp < b.stamp
}

func (q *queue) up(i int) {
	h := q.heap
	for i > 0 {
		p := (i - 1) / 2
		if !q.less(h[i], h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (q *queue) popHeap() ranked {
	h := q.heap
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h[n] = ranked{}
	h = h[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && q.less(h[r], h[l]) {
			m = r
		}
		if !q.less(h[m], h[i]) {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	q.heap = h
	return top
}

// group holds a device's waiting jobs of one kind (model, precision,
// class) in the order they were queued: where a micro-batch's members come
// from.
type group struct {
	entries []entry
	head    int
	jobs    int   // live jobs
	samples int64 // their samples
	pos     int   // index in the device's active groups; -1 when empty
}

// first returns the group's oldest live job, dropping stale entries before
// it.
func (g *group) first() *Job {
	g.entries, g.head = dropStale(g.entries, g.head)
	if g.head == len(g.entries) {
		return nil
	}
	return g.entries[g.head].job
}

// kind is what makes jobs compatible: they batch together.
type kind struct {
	model, precision int32
	class            Class
}

func kindOf(j *Job) kind { return kind{j.Model, j.Precision, j.Class} }

package sim

import "slices"

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

func (e entry) queued() *Job { return e.job }

// queue is a device's waiting jobs: FIFO, or a heap in a Ranker's order with
// ties broken by the order they were queued in.
//
// A KeyRanker's jobs wait in runs instead while each Major's keys come in
// order, as EDF's do (a class's deadlines are its jobs' arrivals plus the
// class's SLO): one run per Major, ascending, each in (Minor, stamp)
// order as its jobs were pushed. The heap's order is the same total order
// (Major, then Minor, then stamp), so the first live job of the first run
// is the heap's top, and the runs met in turn are the heap popped in turn;
// but a push is an append and a pop a step forward. The first job pushed
// out of order moves every run into the heap, until the queue empties.
type queue struct {
	ranker Ranker
	keyed  KeyRanker // set when ranker is one: keys are compared inline
	fifo   []entry
	head   int
	heap   []ranked
	runs   []run // by Major, ascending; unused once heaped
	heaped bool  // the keyed jobs are in heap, not in runs
}

// run is a KeyRanker's waiting jobs of one Major, in order.
type run struct {
	major   int64
	entries []ranked
	head    int
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
		if !q.heaped && q.pushRun(r) {
			return
		}
	}
	q.pushHeap(r)
}

func (q *queue) pushHeap(r ranked) {
	q.heap = append(q.heap, r)
	q.up(len(q.heap) - 1)
}

// pushRun appends r to the run of its Major, and reports false, having
// moved every run into the heap, when r comes before that run's last job
// (or its Minor is NaN, which orders nowhere).
func (q *queue) pushRun(r ranked) bool {
	i := 0
	for i < len(q.runs) && q.runs[i].major < r.key.Major {
		i++
	}
	if i == len(q.runs) || q.runs[i].major != r.key.Major {
		q.runs = slices.Insert(q.runs, i, run{major: r.key.Major})
	}
	ru := &q.runs[i]
	if n := len(ru.entries); r.key.Minor != r.key.Minor || n > 0 && r.key.Minor < ru.entries[n-1].key.Minor {
		for k := range q.runs {
			ru := &q.runs[k]
			for _, x := range ru.entries[ru.head:] {
				if x.live() {
					q.pushHeap(x)
				}
			}
			clear(ru.entries)
		}
		q.runs = q.runs[:0]
		q.heaped = true
		return false
	}
	ru.entries = append(ru.entries, r)
	return true
}

// peek returns the first live job in order for which fits holds, leaving it
// queued. With strict it looks only at the first live job. It returns nil
// when no job qualifies.
func (q *queue) peek(fits func(*Job) bool, strict bool) *Job {
	if q.ranker == nil {
		q.dropStaleFIFO()
		j, _ := firstFit(q.fifo[q.head:], fits, strict)
		return j
	}
	if q.keyed != nil && !q.heaped {
		for i := range q.runs {
			ru := &q.runs[i]
			ru.entries, ru.head = dropStale(ru.entries, ru.head)
			if j, done := firstFit(ru.entries[ru.head:], fits, strict); done {
				return j
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

// firstFit returns the first live job of es, in order, for which fits
// holds. done says the search ends there: such a job was found, or strict
// and the first live job does not fit.
func firstFit[E interface {
	live() bool
	queued() *Job
}](es []E, fits func(*Job) bool, strict bool) (j *Job, done bool) {
	for _, e := range es {
		if !e.live() {
			continue
		}
		if fits(e.queued()) {
			return e.queued(), true
		}
		if strict {
			return nil, true
		}
	}
	return nil, false
}

func (q *queue) dropStaleFIFO() {
	q.fifo, q.head = dropStale(q.fifo, q.head)
}

// dropStale advances head past the stale entries at the front of a FIFO
// slice, and moves the rest to the start once the dead front is over half
// of it, so a long run's memory stays with the waiting jobs.
func dropStale[E interface{ live() bool }](es []E, head int) ([]E, int) {
	var zero E
	for head < len(es) && !es[head].live() {
		es[head] = zero
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
	for i := range q.runs {
		clear(q.runs[i].entries)
		q.runs[i].entries, q.runs[i].head = q.runs[i].entries[:0], 0
	}
	q.heaped = false
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

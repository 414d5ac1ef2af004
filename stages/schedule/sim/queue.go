package sim

// queue is a device's waiting jobs: FIFO, or a heap in a Ranker's order with
// ties broken by arrival order.
type queue struct {
	ranker Ranker
	keyed  KeyRanker // set when ranker is one: keys are compared inline
	fifo   []*Job
	head   int
	heap   []ranked
	seq    uint64
}

type ranked struct {
	job *Job
	key RankKey
	seq uint64
}

func (q *queue) init(r Ranker) {
	q.ranker = r
	q.keyed, _ = r.(KeyRanker)
}

func (q *queue) len() int {
	if q.ranker != nil {
		return len(q.heap)
	}
	return len(q.fifo) - q.head
}

func (q *queue) push(j *Job) {
	if q.ranker == nil {
		q.fifo = append(q.fifo, j)
		return
	}
	q.seq++
	r := ranked{job: j, seq: q.seq}
	if q.keyed != nil {
		r.key = q.keyed.Key(j)
	}
	q.heap = append(q.heap, r)
	q.up(len(q.heap) - 1)
}

// takeFitting removes and returns the first job in order for which fits
// holds. With strict it looks only at the first job. It returns nil when
// no job qualifies.
func (q *queue) takeFitting(fits func(*Job) bool, strict bool) *Job {
	if q.ranker == nil {
		for i := q.head; i < len(q.fifo); i++ {
			if fits(q.fifo[i]) {
				return q.removeFIFO(i)
			}
			if strict {
				return nil
			}
		}
		return nil
	}
	if len(q.heap) == 0 {
		return nil
	}
	if fits(q.heap[0].job) {
		return q.popHeap().job
	}
	if strict {
		return nil
	}
	// Pop in order until one fits, then put the others back: the rare case
	// of a memory-bound device, paid only then.
	var skipped []ranked
	var found *Job
	for len(q.heap) > 0 {
		r := q.popHeap()
		if fits(r.job) {
			found = r.job
			break
		}
		skipped = append(skipped, r)
	}
	for _, r := range skipped {
		q.heap = append(q.heap, r)
		q.up(len(q.heap) - 1)
	}
	return found
}

func (q *queue) removeFIFO(i int) *Job {
	j := q.fifo[i]
	copy(q.fifo[q.head+1:i+1], q.fifo[q.head:i])
	q.fifo[q.head] = nil
	q.head++
	if q.head > 1024 && q.head*2 > len(q.fifo) {
		n := copy(q.fifo, q.fifo[q.head:])
		clear(q.fifo[n:])
		q.fifo, q.head = q.fifo[:n], 0
	}
	return j
}

func (q *queue) less(a, b ranked) bool {
	if q.keyed != nil {
		if a.key.Major != b.key.Major {
			return a.key.Major < b.key.Major
		}
		if a.key.Minor != b.key.Minor {
			return a.key.Minor < b.key.Minor
		}
		return a.seq < b.seq
	}
	if q.ranker.Less(a.job, b.job) {
		return true
	}
	if q.ranker.Less(b.job, a.job) {
		return false
	}
	return a.seq < b.seq
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

package columnar

// slabs holds a chunk's pages in buffers that double in size, from
// 4 KiB to 1 MiB, so that a chunk of many megabytes is not copied as it
// grows, and a column of few bytes holds little memory. A row group's
// buffers are kept for the next, and a file's for the next file's.
type slabs struct {
	bufs [][]byte // bufs[:used+1] hold pages, the last being filled
	used int
}

const firstSlab, largestSlab = 4 << 10, 1 << 20

// append copies the concatenation of parts to the end.
func (s *slabs) append(parts ...[]byte) {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if len(s.bufs) == 0 {
		s.bufs = append(s.bufs, newSlab(max(firstSlab, n)))
	}
	if cur := s.bufs[s.used]; len(cur)+n > cap(cur) {
		s.used++
		if s.used == len(s.bufs) || cap(s.bufs[s.used]) < n {
			size := max(n, min(2*cap(cur), largestSlab))
			if s.used == len(s.bufs) {
				s.bufs = append(s.bufs, nil)
			}
			s.bufs[s.used] = newSlab(size)
		}
	}
	cur := s.bufs[s.used]
	for _, p := range parts {
		cur = append(cur, p...)
	}
	s.bufs[s.used] = cur
}

// writeTo writes the pages in order.
func (s *slabs) writeTo(write func([]byte) error) error {
	for _, b := range s.bufs[:min(s.used+1, len(s.bufs))] {
		if err := write(b); err != nil {
			return err
		}
	}
	return nil
}

// empty empties s for the next row group, keeping its buffers.
func (s *slabs) empty() {
	for i := range s.bufs {
		s.bufs[i] = s.bufs[i][:0]
	}
	s.used = 0
}

// release hands s's buffers to newSlab.
func (s *slabs) release() {
	keepSlabs(s.bufs)
	s.bufs, s.used = nil, 0
}

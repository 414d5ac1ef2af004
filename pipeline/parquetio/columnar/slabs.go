package columnar

// slabs holds a chunk's pages until its row group is written: each page's
// header, and its body (definition levels and data) in buffers that double
// in size, from 4 KiB to 1 MiB, so that a chunk of many megabytes is not
// copied as it grows, and a column of few bytes holds little memory. A
// body is written in place, where reserve says, so that a compressed page
// is not copied once more: its header, which gives its compressed size and
// checksum, is known only after it, and is kept apart. A row group's
// buffers are kept for the next, and a file's for the next file's.
type slabs struct {
	bufs  [][]byte // bufs[:used+1] hold bodies, the last being filled
	used  int
	hdrs  []byte     // the pages' headers, one after the other
	pages []pageSpan // in order
}

// pageSpan is where a page lies: its header ends at hdrs[hdrEnd], and its
// body at bufs[buf][end], right after the page before it in that buffer.
type pageSpan struct {
	hdrEnd, buf, end int
}

const firstSlab, largestSlab = 4 << 10, 1 << 20

// reserve returns free space for a page's body of at least n bytes, at the
// end of the buffer being filled (or of a new one): an empty slice whose
// capacity is the space. Fill it by appending and hand it to add.
func (s *slabs) reserve(n int) []byte {
	if len(s.bufs) == 0 {
		s.bufs = append(s.bufs, newSlab(max(firstSlab, n)))
	}
	if cur := s.bufs[s.used]; cap(cur)-len(cur) < n {
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
	return cur[len(cur):len(cur):cap(cur)]
}

// add appends a page: its header and its body, which is what reserve
// returned, filled. A body that outgrew the space (its appends moved it)
// is copied into new space.
func (s *slabs) add(hdr, body []byte) {
	if len(s.bufs) == 0 {
		s.reserve(len(body))
	}
	cur := s.bufs[s.used]
	free := cur[len(cur):cap(cur)]
	if len(body) > 0 && (len(body) > len(free) || &free[0] != &body[0]) {
		room := s.reserve(len(body))
		body = append(room, body...)
		cur = s.bufs[s.used]
	}
	cur = cur[:len(cur)+len(body)]
	s.bufs[s.used] = cur
	s.hdrs = append(s.hdrs, hdr...)
	s.pages = append(s.pages, pageSpan{hdrEnd: len(s.hdrs), buf: s.used, end: len(cur)})
}

// writeTo writes the pages in order, each header before its body.
func (s *slabs) writeTo(write func([]byte) error) error {
	hdr, buf, body := 0, 0, 0
	for _, p := range s.pages {
		if p.buf != buf {
			buf, body = p.buf, 0
		}
		if err := write(s.hdrs[hdr:p.hdrEnd]); err != nil {
			return err
		}
		if err := write(s.bufs[buf][body:p.end]); err != nil {
			return err
		}
		hdr, body = p.hdrEnd, p.end
	}
	return nil
}

// empty empties s for the next row group, keeping its buffers.
func (s *slabs) empty() {
	for i := range s.bufs {
		s.bufs[i] = s.bufs[i][:0]
	}
	s.used = 0
	s.hdrs, s.pages = s.hdrs[:0], s.pages[:0]
}

// release hands s's buffers to newSlab.
func (s *slabs) release() {
	keepSlabs(s.bufs)
	*s = slabs{}
}

package dlqfile

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/warrenops/warren/domain"
)

// Source feeds an export file's messages to an import, in order: the
// operation engine's source, where nothing is acked or returned (the
// file keeps every message). The file is cut into batches of lines as it
// is read, the batches are decoded on every core at once, and the pages
// handed out in the file's order: an import reads its file twice, and the
// check before anything is published is most of what it adds to the
// publishing.
type Source struct {
	header Header
	closer io.Closer
	check  bool
	// free holds the buffers of batches decoded, for the next batches:
	// a file read twice would otherwise allocate (and clear) its whole
	// size twice over. It holds as many as can be alive at once (one
	// being cut, one waiting and one being decoded per core), so none
	// is dropped.
	free  chan []byte
	pages chan sourcePage
	// spent holds a check's pages handed out and done with, for the
	// next pages: a check keeps no letter past the next Next, and
	// making a page of letters for every 512 lines was most of what it
	// allocated.
	spent  chan []domain.DeadLetter
	handed []domain.DeadLetter // the page the last Next finished
	stop   chan struct{}
	done   chan struct{}
	last   *sourcePage // what the previous Next left of its page
}

// sourcePage is a page decoded ahead, or the error that ended the file.
type sourcePage struct {
	letters []domain.DeadLetter
	all     []domain.DeadLetter // the page whole, as letters is handed out
	err     error
	end     bool
}

// A page holds at most pageLines messages, or the messages of pageBytes
// of lines (one line at least, whatever its size), so that large bodies
// do not multiply what is held: about pagesAhead pages wait decoded, and
// one batch per core is being decoded.
const (
	pageLines  = 512
	pageBytes  = 4 << 20
	pagesAhead = 2
)

// batch is a run of lines cut from the file, and the page they decode to.
type batch struct {
	first int    // the line number of its first line
	data  []byte // its lines, one after the other
	ends  []int  // where each line ends in data
	err   error  // a read error after its lines
	end   bool   // the file ends after its lines
	out   chan sourcePage
}

// NewSource reads the file r; closer, when set, is closed by Close.
func NewSource(r io.Reader, closer io.Closer) (*Source, error) {
	return newSource(r, closer, false)
}

// NewCheck reads the file r to check it, as an import does before it
// publishes anything: every line is read as NewSource reads it, and the
// same lines are refused, but the messages handed out carry their names,
// origin and body size only, no headers and no body. It costs a fraction
// of the reading.
func NewCheck(r io.Reader) (*Source, error) {
	return newSource(r, nil, true)
}

func newSource(r io.Reader, closer io.Closer, check bool) (*Source, error) {
	rd, err := NewReader(r)
	if err != nil {
		return nil, err
	}
	workers := runtime.GOMAXPROCS(0)
	s := &Source{header: rd.Header, closer: closer, check: check, pages: make(chan sourcePage, pagesAhead),
		spent: make(chan []domain.DeadLetter, pagesAhead+2*workers+2),
		free:  make(chan []byte, 2*workers+1), stop: make(chan struct{}), done: make(chan struct{})}
	go s.read(rd, workers)
	return s, nil
}

// read cuts the file into batches, has them decoded on every core, and
// hands the pages out in order, until the file ends, a line is refused
// or the source closes.
func (s *Source) read(rd *Reader, workers int) {
	defer close(s.done)
	defer close(s.pages)
	ordered := make(chan *batch, workers)
	work := make(chan *batch, workers)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1 + workers)
	go func() {
		defer wg.Done()
		defer close(work)
		defer close(ordered)
		cut(rd, ordered, work, quit, s.free)
	}()
	for range workers {
		go func() {
			defer wg.Done()
			lr := lineReader{check: s.check}
			for b := range work {
				pg := b.decode(&lr, s.page(len(b.ends)))
				// Nothing decoded points into the batch's lines. A buffer
				// that large bodies grew past a page's bytes goes to the
				// collector, so what waits here stays a few MiB.
				if cap(b.data) <= pageBytes {
					select {
					case s.free <- b.data[:0]:
					default:
					}
				}
				b.data = nil
				b.out <- pg
			}
		}()
	}
	defer wg.Wait()
	defer close(quit)
	for b := range ordered {
		pg := <-b.out
		select {
		case s.pages <- pg:
		case <-s.stop:
			return
		}
		if pg.end || pg.err != nil {
			return
		}
	}
}

// cut reads rd's lines into batches, each sent to ordered (the order
// they are handed out in) and to work (to be decoded). A batch's lines go
// in a buffer from free when one is there.
func cut(rd *Reader, ordered, work chan<- *batch, quit <-chan struct{}, free <-chan []byte) {
	size := 64 << 10 // what the last batch held: the next is made that large
	for {
		var data []byte
		select {
		case data = <-free:
		default:
			data = make([]byte, 0, size)
		}
		b := &batch{first: rd.line + 1, data: data, ends: make([]int, 0, pageLines), out: make(chan sourcePage, 1)}
		for len(b.ends) < pageLines && len(b.data) < pageBytes {
			if !rd.sc.Scan() {
				if err := rd.sc.Err(); err != nil {
					b.err = fmt.Errorf("line %d: %w", rd.line+1, err)
				}
				b.end = true
				break
			}
			rd.line++
			b.data = append(b.data, rd.sc.Bytes()...)
			b.ends = append(b.ends, len(b.data))
		}
		size = max(size, len(b.data))
		select {
		case ordered <- b:
		case <-quit:
			return
		}
		work <- b // the workers take every batch until work closes
		if b.end {
			return
		}
	}
}

// page is a page of n zero letters: a check's spent page when one is
// there, else a new one.
func (s *Source) page(n int) []domain.DeadLetter {
	if s.check {
		select {
		case p := <-s.spent:
			if cap(p) >= n {
				p = p[:n]
				clear(p)
				return p
			}
		default:
		}
	}
	return make([]domain.DeadLetter, n)
}

// decode is the batch's page, written into letters (as many as it has
// lines): its messages, up to the first line that is refused.
func (b *batch) decode(lr *lineReader, letters []domain.DeadLetter) sourcePage {
	pg := sourcePage{letters: letters, all: letters}
	start := 0
	for i, end := range b.ends {
		e, err := lr.entry(b.data[start:end])
		if err != nil {
			pg.letters = pg.letters[:i]
			pg.err = fmt.Errorf("line %d: %w", b.first+i, err)
			return pg
		}
		d := &pg.letters[i]
		e.letterInto(d)
		d.Position = b.first + i - 2 // the header is line 1
		start = end
	}
	pg.err, pg.end = b.err, b.end
	return pg
}

// Header is the file's header line.
func (s *Source) Header() Header { return s.header }

// Next hands out up to n more messages, never more than one page of
// them (so large bodies are held a few at a time); end is set after the
// last. A check's messages are valid until the next Next, which may
// write others over them.
func (s *Source) Next(ctx context.Context, n int) ([]domain.DeadLetter, bool, error) {
	if s.handed != nil {
		select {
		case s.spent <- s.handed:
		default:
		}
		s.handed = nil
	}
	if s.last == nil {
		select {
		case pg, ok := <-s.pages:
			if !ok {
				return nil, true, nil
			}
			s.last = &pg
		case <-ctx.Done():
			return nil, true, ctx.Err()
		}
	}
	pg := s.last
	k := min(n, len(pg.letters))
	out := pg.letters[:k:k]
	if pg.letters = pg.letters[k:]; len(pg.letters) > 0 {
		return out, false, nil
	}
	s.last = nil
	if s.check {
		s.handed = pg.all
	}
	return out, pg.end || pg.err != nil, pg.err
}

// Keep, Ack, AckAll and Sync have nothing to do: the file keeps every
// message.
func (s *Source) Keep(int)              {}
func (s *Source) Ack(uint64) error      { return nil }
func (s *Source) AckAll([]uint64) error { return nil }
func (s *Source) Sync() error           { return nil }

// Close stops reading ahead and closes the file.
func (s *Source) Close() error {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
	if s.closer == nil {
		return nil
	}
	c := s.closer
	s.closer = nil
	return c.Close()
}

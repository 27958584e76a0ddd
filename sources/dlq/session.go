// Package dlq reads dead-letter queues without harm (docs/ARCHITECTURE.md §4.3):
// browse sessions that hold a page unacknowledged and return it, x-death
// parsing for every supported broker version, attempt counts, origins and
// logical IDs, and a statistics scan that keeps no bodies.
package dlq

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/warrenops/warren/domain"
)

// MaxHeld is the largest prefetch AMQP 0-9-1 can express, and so the
// largest page and the most deliveries one session holds.
const MaxHeld = 65535

var (
	// ErrReadOnly is returned by Ack and Return on a stream: a stream keeps
	// every message, so the action records the offset instead.
	ErrReadOnly = errors.New("a stream keeps its messages: there is nothing to acknowledge or return")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("browse session is closed")
)

// Page is one window of a browse.
type Page struct {
	Letters []domain.DeadLetter
	// Refused are held messages the guard will not treat as browsable.
	Refused []Refusal
	// End is set once the queue has nothing more to give this session.
	End bool
	// Notes are caveats for the operator ("order not kept", consumers).
	Notes []string
	// Cursor is the next stream offset to read (streams only).
	Cursor int64
	// Seen counts messages read by the session so far; Expected is the
	// queue's depth when the session opened, -1 when unknown.
	Seen, Expected int
}

// Session is one browse of a DLQ on a channel of its own (docs/ARCHITECTURE.md §4.3).
// Each page is read by a consumer of its own whose prefetch is the window;
// the consumer is cancelled once its page is read, so the held pages stay
// held (the broker keeps them unacknowledged on the channel) and the next
// consumer starts after them, which keeps the order. Next must not be
// called concurrently with itself; everything else is safe from any
// goroutine.
type Session struct {
	q      domain.QueueInfo
	o      Options
	conn   *amqp.Connection
	ch     *amqp.Channel
	stream bool
	tag    string
	done   chan error
	quit   chan struct{}

	// next serialises Next and Close, which own the fields below it.
	next     sync.Mutex
	pages    int
	expected int
	seen     int
	bytes    int64 // the sizes of the messages seen, for the byte budget
	cursor   int64
	end      bool
	notes    []string

	mu      sync.Mutex
	order   []entry
	held    map[uint64]struct{}
	closed  bool
	lostErr error
	// deadline is when the session gives its messages back, before the
	// broker's consumer timeout would (unix nanoseconds; 0 while it holds
	// none): read without mu, so a screen drawing it never waits on a
	// Close that holds mu across a round trip. expired says it did.
	deadline atomic.Int64
	expiry   *time.Timer
	expired  *TimeoutError
}

// TimeoutError is the end of a session that gave its messages back
// before the broker's consumer timeout took them (docs/ARCHITECTURE.md
// §4.3).
type TimeoutError struct {
	Queue   string
	Held    int
	Timeout time.Duration
	Why     string
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("returned its %d held messages to %s before %s (%s) would have taken them and closed the channel",
		e.Held, e.Queue, e.Why, e.Timeout)
}

// timeoutMargin is how long before the broker's consumer timeout a
// session gives its messages back: a fifth of it, at most 30 s.
func timeoutMargin(t time.Duration) time.Duration { return min(t/5, 30*time.Second) }

// timeout is the consumer timeout that applies to the session, and why.
func (s *Session) timeout() (time.Duration, string) {
	if s.o.AskTimeout > 0 {
		return s.o.AskTimeout, "the consumer timeout warren asked of the broker for this session"
	}
	return s.o.ConsumerTimeout, s.o.TimeoutWhy
}

// Deadline is when the session gives its messages back, and why; zero
// while it holds none or knows of no timeout.
func (s *Session) Deadline() (time.Time, string) {
	at := s.deadline.Load()
	if at == 0 || s.stream {
		return time.Time{}, ""
	}
	_, why := s.timeout()
	return time.Unix(0, at), why
}

// arm starts the countdown at the first delivery held: the broker counts
// each delivery's time from when it was sent, and the first is the
// oldest. Callers hold mu.
func (s *Session) arm() {
	t, _ := s.timeout()
	if t <= 0 || s.stream || s.deadline.Load() != 0 {
		return
	}
	wait := t - timeoutMargin(t)
	s.deadline.Store(time.Now().Add(wait).UnixNano())
	s.expiry = time.AfterFunc(wait, s.expire)
}

// disarm stops the countdown once nothing is held: the next delivery
// starts a new one. Callers hold mu.
func (s *Session) disarm() {
	if len(s.held) > 0 || s.expiry == nil {
		return
	}
	s.expiry.Stop()
	s.expiry = nil
	s.deadline.Store(0)
}

// expire gives every held message back, as Close does, and ends the
// session with a *TimeoutError.
func (s *Session) expire() {
	t, why := s.timeout()
	s.mu.Lock()
	at := s.deadline.Load()
	if s.closed || at == 0 || time.Now().Add(100*time.Millisecond).UnixNano() < at {
		// Closed, or the countdown it belonged to was stopped (nothing
		// held) and another began.
		s.mu.Unlock()
		return
	}
	s.expired = &TimeoutError{Queue: s.q.Name, Held: len(s.held), Timeout: t, Why: why}
	s.mu.Unlock()
	_ = s.Close()
	s.mu.Lock()
	if s.lostErr == nil {
		s.lostErr = s.expired
	}
	s.mu.Unlock()
}

type entry struct {
	dl     domain.DeadLetter
	reason string // non-empty when refused
}

// Open starts a browse session on q. A quorum queue the delivery-limit
// guard refuses yields a *RefusedError and nothing is delivered.
func Open(ctx context.Context, conn *amqp.Connection, q domain.QueueInfo, o Options) (*Session, error) {
	if q.Name == "" {
		return nil, errors.New("no DLQ named")
	}
	if q.Type == "" {
		q.Type = domain.TypeClassic
	}
	o = o.withDefaults()
	if err := checkOpen(q, o); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ch, depth, consumers, err := inspect(conn, q)
	if err != nil {
		return nil, err
	}
	consumers = max(consumers, q.Consumers) // as either counts them
	s := &Session{
		q: q, o: o, conn: conn, ch: ch,
		stream:   q.Type == domain.TypeStream,
		tag:      "warren-browse-" + randomHex(),
		done:     make(chan error, 1),
		quit:     make(chan struct{}),
		expected: depth,
		cursor:   o.StartOffset,
		held:     map[uint64]struct{}{},
		notes:    sessionNotes(q, consumers, domain.HeldElsewhere(q, depth)),
	}
	if s.stream {
		// A stream's declare-ok count is not its length (it lags and
		// counts chunks); a stream browse ends at the idle tail instead.
		s.expected = -1
	}
	go s.watch(ch.NotifyClose(make(chan *amqp.Error, 1)))
	return s, nil
}

// inspect opens the session's channel and reads the queue's depth and
// consumers with a passive declare (the broker's count now; a quorum
// queue counts a cancelled consumer while it holds deliveries).
func inspect(conn *amqp.Connection, q domain.QueueInfo) (*amqp.Channel, int, int, error) {
	ch, err := conn.Channel()
	if err != nil {
		return nil, 0, 0, fmt.Errorf("open a channel to browse %s: %w", q.Name, err)
	}
	info, err := ch.QueueDeclarePassive(q.Name, false, false, false, false, nil)
	if err != nil {
		_ = ch.Close()
		var ae *amqp.Error
		if errors.As(err, &ae) && ae.Code == amqp.NotFound {
			return nil, 0, 0, fmt.Errorf("queue %s does not exist in vhost %s", q.Name, q.Vhost)
		}
		return nil, 0, 0, fmt.Errorf("inspect queue %s: %w", q.Name, err)
	}
	return ch, info.Messages, info.Consumers, nil
}

func (s *Session) watch(notify chan *amqp.Error) {
	if err, ok := <-notify; ok && err != nil {
		lost := lossError("browse session", s.q.Name, err)
		s.mu.Lock()
		s.lostErr = lost
		s.mu.Unlock()
		s.done <- lost
	} else {
		s.mu.Lock()
		expired := s.expired
		s.mu.Unlock()
		if expired != nil {
			s.done <- expired
		}
	}
	close(s.done)
}

// Done delivers an error when the session's channel dies under it, and
// is closed when the session ends either way.
func (s *Session) Done() <-chan error { return s.done }

// Queue returns the queue being browsed.
func (s *Session) Queue() domain.QueueInfo { return s.q }

// ReadOnly reports whether the session browses a stream, where nothing
// is acknowledged or returned.
func (s *Session) ReadOnly() bool { return s.stream }

// Next reads the next window of messages and holds them.
func (s *Session) Next(ctx context.Context) (*Page, error) {
	s.next.Lock()
	defer s.next.Unlock()
	s.mu.Lock()
	closed, lost := s.closed, s.lostErr
	s.compact()
	s.mu.Unlock()
	switch {
	case closed:
		return nil, ErrClosed
	case lost != nil:
		return nil, lost
	}
	if held := s.heldBytes(); held >= heldBudget(s.o.ByteBudget) {
		return nil, fmt.Errorf("%w: the session holds %s of message bodies from %s, and holding more could exhaust memory: act on what is held, or reopen to start again",
			ErrHeldBudget, humanBytes(held), s.q.Name)
	}
	if s.expected == 0 {
		s.end = true
	}
	if s.end && !s.stream {
		// Dead letters that arrived after the browse read the depth it
		// had when opened are ready now (what it holds is not): the
		// next page reads them rather than say the queue has no more.
		if n := s.arrived(); n > 0 {
			s.expected, s.end = s.seen+n, false
			s.notes = append(s.notes, fmt.Sprintf("read %d more that arrived in %s after the browse opened", n, s.q.Name))
		}
	}
	page := &Page{Notes: s.notes, Expected: s.expected}
	s.notes = nil
	if s.end {
		return s.finish(page), nil
	}
	window := min(s.o.Window, MaxHeld)
	// A page is read in parts when the byte budget asks for a smaller
	// prefetch than the window: the broker sends as many messages as the
	// prefetch allows at once, whatever their size.
	// A page whose kept bodies reach the budget ends there, short of the
	// window: the next page holds the rest (a listing that keeps no
	// bodies is bounded by the window alone).
	for !s.end {
		held := len(page.Letters) + len(page.Refused)
		kept := keptBytes(page)
		if held >= window || kept >= s.o.ByteBudget {
			break
		}
		// What the budget has left, not only its whole, bounds the part.
		part := min(window-held, s.budgetWindow(), budgetWindow(s.seen, s.bytes, s.o.ByteBudget-kept+s.avg()))
		if err := s.readPart(ctx, page, held+part); err != nil {
			return nil, err
		}
	}
	return s.finish(page), nil
}

// arrived is how many messages the queue holds ready now, read on a
// channel of its own: a passive declare of a queue deleted meanwhile
// closes its channel, which must not be the session's. 0 when it
// cannot be read.
func (s *Session) arrived() int {
	if s.conn == nil {
		return 0
	}
	ch, err := s.conn.Channel()
	if err != nil {
		return 0
	}
	defer ch.Close()
	q, err := ch.QueueDeclarePassive(s.q.Name, false, false, false, false, nil)
	if err != nil {
		return 0
	}
	return q.Messages
}

// ErrHeldBudget means a session that keeps bodies holds as many as it
// may: four byte budgets (256 MiB by default). A page reads no more.
var ErrHeldBudget = errors.New("too many message bodies held")

// heldBudget is the bodies a session may hold across its pages.
func heldBudget(budget int64) int64 { return 4 * budget }

// heldBytes are the bodies the session holds, acted-on letters aside.
func (s *Session) heldBytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for _, e := range s.order {
		if s.holds(e.dl) {
			n += int64(len(e.dl.Body))
		}
	}
	return n
}

// humanBytes is n in MiB or KiB.
func humanBytes(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

// avg is the mean size of the messages seen; 0 before any.
func (s *Session) avg() int64 {
	if s.seen == 0 {
		return 0
	}
	return s.bytes / int64(s.seen)
}

// keptBytes are the bodies page holds.
func keptBytes(page *Page) int64 {
	var n int64
	for _, l := range page.Letters {
		n += int64(len(l.Body))
	}
	for _, r := range page.Refused {
		n += int64(len(r.Letter.Body))
	}
	return n
}

// budgetWindow is how many messages fit the byte budget at the sizes
// seen so far: one while none was seen. One body's worth is kept aside
// for the body the client is assembling, which it grows by doubling a
// buffer and so holds twice while it arrives.
func (s *Session) budgetWindow() int { return budgetWindow(s.seen, s.bytes, s.o.ByteBudget) }

// budgetWindow is the prefetch that keeps the bodies in flight within
// budget, after seen messages of bytes in all.
func budgetWindow(seen int, bytes, budget int64) int {
	if seen == 0 || bytes <= 0 {
		return 1
	}
	avg := max(bytes/int64(seen), 1)
	return int(max(min(budget/avg-1, int64(MaxHeld)), 1))
}

// readPart reads the page on until it holds upTo messages, with a
// consumer of its own whose prefetch asks for no more.
func (s *Session) readPart(ctx context.Context, page *Page, upTo int) error {
	from := s.cursor
	deliveries, tag, err := s.consume(upTo - len(page.Letters) - len(page.Refused))
	if err != nil {
		return err
	}
	err = s.read(ctx, page, deliveries, upTo, from)
	// Cancelling the part's consumer leaves its deliveries held; what was
	// already in flight joins the page. On a stream it is left for the
	// next part instead: the broker cannot take an ack for a cancelled
	// stream consumer, and the next part starts at the cursor anyway.
	if cerr := s.ch.Cancel(tag, false); cerr != nil && err == nil {
		err = fmt.Errorf("stop browsing %s: %w", s.q.Name, cerr)
	}
	for d := range deliveries {
		if s.stream {
			continue
		}
		if terr := s.take(page, d, from); terr != nil && err == nil {
			err = terr
		}
	}
	return err
}

// consume starts the page's consumer with a prefetch of one window.
func (s *Session) consume(window int) (<-chan amqp.Delivery, string, error) {
	if err := s.ch.Qos(window, 0, false); err != nil {
		return nil, "", fmt.Errorf("set prefetch to browse %s: %w", s.q.Name, err)
	}
	var args amqp.Table
	if s.stream {
		args = amqp.Table{domain.HeaderStreamOffset: "first"}
		if s.cursor > 0 {
			args[domain.HeaderStreamOffset] = s.cursor
		}
	} else if t := s.o.AskTimeout; t > 0 {
		args = amqp.Table{"x-consumer-timeout": int64(t / time.Millisecond)}
	}
	s.pages++
	tag := fmt.Sprintf("%s-%d", s.tag, s.pages)
	d, err := s.ch.Consume(s.q.Name, tag, false, false, false, false, args)
	if err != nil {
		return nil, "", fmt.Errorf("browse %s: %w", s.q.Name, err)
	}
	return d, tag, nil
}

// read fills the page until the window is full, the queue's depth at
// open has been read, or nothing arrives for the idle time.
func (s *Session) read(ctx context.Context, page *Page, deliveries <-chan amqp.Delivery, window int, from int64) error {
	timer := time.NewTimer(3 * s.o.Idle)
	defer timer.Stop()
	for len(page.Letters)+len(page.Refused) < window {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.quit:
			return ErrClosed
		case d, ok := <-deliveries:
			if !ok {
				return s.lost()
			}
			if err := s.take(page, d, from); err != nil {
				return err
			}
			if s.expected >= 0 && s.seen >= s.expected {
				s.end = true
				return nil
			}
			timer.Reset(s.o.Idle)
		case <-timer.C:
			s.end = true
			if s.expected >= 0 {
				page.Notes = append(page.Notes, fmt.Sprintf("stopped waiting after %s: read %d of the %d messages the queue held at open (consumers or expiry may have taken the rest)", s.o.Idle, s.seen, s.expected))
			}
			return nil
		}
	}
	return nil
}

// take records one delivery on the page.
func (s *Session) take(page *Page, d amqp.Delivery, from int64) error {
	dl := Decode(d, s.o, true)
	if s.stream {
		// Acknowledging a stream delivery removes nothing; it grants the
		// credit for the next one.
		if err := s.ch.Ack(d.DeliveryTag, false); err != nil {
			return fmt.Errorf("grant stream credit on %s: %w", s.q.Name, err)
		}
		dl.DeliveryTag = 0
		if dl.Offset < from {
			// The broker starts from the chunk holding the offset.
			return nil
		}
		s.cursor = dl.Offset + 1
	}
	dl.Position = s.seen
	s.seen++
	s.bytes += int64(len(d.Body))
	if s.o.KeepBody != nil && !s.o.KeepBody(dl) {
		dropBodies(&dl)
	}
	if limited(s.q) {
		dl.Headroom = s.q.DeliveryLimit - max(dl.DeliveryCount, 0)
	}
	reason, refused := refusal(s.q, dl)
	s.mu.Lock()
	s.order = append(s.order, entry{dl: dl, reason: reason})
	if !s.stream {
		s.held[d.DeliveryTag] = struct{}{}
		s.arm()
	}
	s.mu.Unlock()
	if refused {
		page.Refused = append(page.Refused, Refusal{Letter: dl, Reason: reason})
	} else {
		page.Letters = append(page.Letters, dl)
	}
	return nil
}

// dropBodies lets go of a letter's bodies, once read: the message's, and
// an envelope's.
func dropBodies(dl *domain.DeadLetter) {
	dl.Body = nil
	if dl.Raw != nil {
		raw := *dl.Raw
		raw.Body = nil
		dl.Raw = &raw
	}
	if e := dl.Failure.Envelope; e != nil {
		env := *e
		env.Body = nil
		dl.Failure.Envelope = &env
	}
}

func (s *Session) finish(page *Page) *Page {
	page.End = s.end
	page.Cursor = s.cursor
	page.Seen = s.seen
	return page
}

// lossError explains a channel that died under a browse or a scan. A
// frame the client cannot parse (in practice a header table nested
// deeper than amqp091-go reads) kills the connection it arrives on, so
// every read of the queue stops at that message: say so, and how to get
// past it. The client reports a connection that simply ended (EOF, a
// reset, a broker restarted) as a frame error too, with the network's
// words for a reason: that is a lost connection, not a bad message.
func lossError(what, queue string, err *amqp.Error) error {
	if undecodable(err) {
		return fmt.Errorf("%s of %s stopped: a message there carries headers the AMQP client cannot decode "+
			"(nested deeper than 32 levels, or malformed), and it closed the connection (%s); nothing was lost, the broker "+
			"took the messages back. warren cannot read past that message: look at it with the management UI's "+
			"\"Get messages\", or move it aside with a shovel", what, queue, err.Reason)
	}
	if err != nil && err.Code == amqp.FrameError {
		return fmt.Errorf("%s of %s lost: the connection to the broker dropped (%s); the broker takes its messages back; reopen to continue", what, queue, err.Reason)
	}
	if err != nil {
		return fmt.Errorf("%s of %s lost (%s); the broker took its messages back; reopen to continue", what, queue, err.Reason)
	}
	return fmt.Errorf("%s of %s lost; the broker took its messages back; reopen to continue", what, queue)
}

// undecodable reports a connection the client closed because a frame
// did not parse: its reason is one of the client's own parse errors.
func undecodable(err *amqp.Error) bool {
	if err == nil {
		return false
	}
	if err.Code == amqp.SyntaxError {
		return true
	}
	for _, e := range []*amqp.Error{amqp.ErrSyntax, amqp.ErrFrame} {
		if strings.Contains(err.Reason, e.Reason) {
			return true
		}
	}
	return false
}

func (s *Session) lost() error {
	// The deliveries channel can close a moment before the close
	// notification names the reason; give it that moment.
	for range 50 {
		s.mu.Lock()
		err := s.lostErr
		s.mu.Unlock()
		if err != nil {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
	return lossError("browse session", s.q.Name, nil)
}

// compact drops acted-on entries; callers hold mu.
func (s *Session) compact() {
	if s.stream {
		return
	}
	s.order = slices.DeleteFunc(s.order, func(e entry) bool {
		_, ok := s.held[e.dl.DeliveryTag]
		return !ok
	})
}

// Letters returns the browsable messages still held (for a stream, all
// read so far), in browse order.
func (s *Session) Letters() []domain.DeadLetter { return s.collect(false) }

// Refused returns the refused messages still held.
func (s *Session) Refused() []Refusal {
	var out []Refusal
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.order {
		if e.reason != "" && s.holds(e.dl) {
			out = append(out, Refusal{Letter: e.dl, Reason: e.reason})
		}
	}
	return out
}

func (s *Session) collect(refused bool) []domain.DeadLetter {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.DeadLetter
	for _, e := range s.order {
		if (e.reason != "") == refused && s.holds(e.dl) {
			out = append(out, e.dl)
		}
	}
	return out
}

func (s *Session) holds(dl domain.DeadLetter) bool {
	if s.stream {
		return true
	}
	_, ok := s.held[dl.DeliveryTag]
	return ok
}

// Ack removes one held delivery from the queue (multiple=false); actions
// call it only after the copy was confirmed.
func (s *Session) Ack(tag uint64) error {
	return s.settle(tag, func() error { return s.ch.Ack(tag, false) })
}

// Sync makes one round trip on the browse channel. The broker handles a
// channel's methods in order, so when Sync returns nil every ack sent
// before it took effect; when it fails, acks sent since the last Sync may
// not have (the channel died and the broker requeued those deliveries).
func (s *Session) Sync() error {
	if s.stream {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lostErr != nil {
		return s.lostErr
	}
	if _, err := s.ch.QueueDeclarePassive(s.q.Name, false, false, false, false, nil); err != nil {
		return fmt.Errorf("browse channel of %s: %w", s.q.Name, err)
	}
	return nil
}

// Return gives one held delivery back to the queue with basic.nack and
// requeue, never basic.reject (free of a delivery count on 4.3+).
func (s *Session) Return(tag uint64) error {
	return s.settle(tag, func() error { return s.ch.Nack(tag, false, true) })
}

func (s *Session) settle(tag uint64, send func() error) error {
	if s.stream {
		return ErrReadOnly
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if s.lostErr != nil {
		return s.lostErr
	}
	if _, ok := s.held[tag]; !ok {
		return fmt.Errorf("delivery %d is not held by this browse session of %s", tag, s.q.Name)
	}
	if err := send(); err != nil {
		return fmt.Errorf("settle delivery %d on %s: %w", tag, s.q.Name, err)
	}
	delete(s.held, tag)
	s.disarm()
	return nil
}

// Close returns everything still held with one basic.nack (multiple,
// requeue), then closes the channel. It stops a Next in progress and is
// safe to call twice.
//
// One nack per delivery would cost the broker quadratic time to settle
// (15 000 individual requeues took over a minute, during which the queue
// answered nothing; one multiple nack returns them at once). multiple is
// safe here: every delivery of this channel up to the highest held tag is
// either settled already or held and to be returned, so the nack reaches
// no delivery that is still pending elsewhere.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.quit)
	if s.expiry != nil {
		s.expiry.Stop()
	}
	s.mu.Unlock()
	s.next.Lock()
	defer s.next.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lostErr != nil || s.ch.IsClosed() {
		return nil
	}
	var errs []error
	var last uint64
	for t := range s.held {
		last = max(last, t)
	}
	if last > 0 {
		if err := s.ch.Nack(last, true, true); err != nil {
			errs = append(errs, fmt.Errorf("return %d held deliveries to %s: %w", len(s.held), s.q.Name, err))
		} else {
			clear(s.held)
		}
	}
	if err := s.ch.Close(); err != nil && !errors.Is(err, amqp.ErrClosed) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func randomHex() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

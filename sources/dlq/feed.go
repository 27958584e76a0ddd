package dlq

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/warrenops/warren/domain"
)

// DefaultFeedWindow is a feed consumer's prefetch. An operation acks a
// delivery only after its copy is confirmed, so the prefetch must stay
// well above the confirm window or the deliveries starve (measured: 8k
// msg/s at 4096–8192, half that with prefetch equal to the window).
const DefaultFeedWindow = 8192

// pageLinger is how long Next waits for more deliveries once a page has
// its first.
const pageLinger = 5 * time.Millisecond

// dryChecks is how many idle periods in a row the queue must have nothing
// ready before a feed ends short of its limit.
const dryChecks = 3

// Feed takes at most a limit of a queue's messages, in order, for an
// operation over the whole queue: the caller acks the deliveries it
// moved, keeps the others held, and Close returns every held delivery
// with one basic.nack(multiple, requeue).
//
// A held delivery keeps its place in its consumer's prefetch. Once the
// held ones fill half of it, the consumer is cancelled and a new one
// started on the same channel: the old deliveries stay held on the
// channel, and the new consumer gets a whole window. So the client holds
// at most about a window of bodies whatever the queue's size; the broker
// keeps the rest.
type Feed struct {
	q     domain.QueueInfo
	o     Options
	ch    *amqp.Channel
	limit int
	// window is the current consumer's prefetch: at most maxWindow, and
	// no more bodies than the byte budget allows at the sizes seen.
	window    int
	maxWindow int
	closes    chan *amqp.Error

	// Read by Next's goroutine only.
	tag        string
	deliveries <-chan amqp.Delivery
	early      []amqp.Delivery // drained from a cancelled consumer
	taken      int
	keptByCons int
	dry        int // idle checks in a row that found nothing ready
	stopped    bool
	seen       int   // deliveries decoded
	seenBytes  int64 // their bodies' sizes
	keptAll    int   // deliveries the caller keeps, every consumer's

	// rpc serialises the channel's synchronous methods: the client
	// matches a reply to whichever call waits, so two at once (a Sync
	// from the settling goroutine, a Cancel from Next's) can swap replies.
	rpc sync.Mutex

	mu       sync.Mutex
	received int // deliveries the channel got, handed out or not
	acked    int
	// floor is the lowest delivery tag not known to be acked: every tag
	// below it is. above holds the tags acked one by one above floor.
	floor    uint64
	above    map[uint64]bool
	runs     int // multiple acks sent
	closed   bool
	lostErr  error
	consumed int // consumers started
	// acks wakes a Next waiting on a full window once an ack freed some.
	acks chan struct{}
}

// fullWait is how long Next waits for an ack when the caller holds the
// whole window, before handing back nothing so the caller settles what
// it holds (a page waiting to be published).
const fullWait = 20 * time.Millisecond

// OpenFeed starts feeding from q: at most limit deliveries (the queue's
// depth when the operator answered the prompt, so a message that dies
// again during the operation is not taken twice), window of them in a
// consumer's prefetch (DefaultFeedWindow when zero). A stream is not fed:
// nothing can be removed from it. A quorum queue whose delivery limit a
// return would count against is refused unless o.AllowLimitRisk.
func OpenFeed(conn *amqp.Connection, q domain.QueueInfo, o Options, limit, window int) (*Feed, error) {
	if q.Type == domain.TypeStream {
		return nil, fmt.Errorf("%s is a stream: nothing can be removed from it, so it is acted on by offset, one page at a time", q.Name)
	}
	if q.Type == "" {
		q.Type = domain.TypeClassic
	}
	o = o.withDefaults()
	if err := checkOpen(q, o); err != nil {
		return nil, err
	}
	if window <= 0 {
		window = DefaultFeedWindow
	}
	ch, err := conn.Channel()
	if err != nil {
		return nil, fmt.Errorf("open a channel to read %s: %w", q.Name, err)
	}
	f := &Feed{q: q, o: o, ch: ch, limit: limit, maxWindow: min(window, MaxHeld),
		closes: ch.NotifyClose(make(chan *amqp.Error, 1)), acks: make(chan struct{}, 1)}
	first := f.budgeted()
	if limit <= 0 {
		f.stopped = true
		return f, nil
	}
	if err := f.consume(first); err != nil {
		_ = ch.Close()
		return nil, err
	}
	return f, nil
}

// budgeted is the prefetch the byte budget allows at the sizes seen (one
// message while none was seen), at most maxWindow.
func (f *Feed) budgeted() int {
	return min(f.maxWindow, budgetWindow(f.seen, f.seenBytes, f.o.ByteBudget))
}

// Limit is how many deliveries the feed takes at most.
func (f *Feed) Limit() int { return f.limit }

// consume starts a consumer with a prefetch of window. The window is
// set under rpc, which Sync's round trip reads it under.
func (f *Feed) consume(window int) error {
	f.rpc.Lock()
	defer f.rpc.Unlock()
	f.window = window
	if err := f.ch.Qos(f.window, 0, false); err != nil {
		return fmt.Errorf("set prefetch to read %s: %w", f.q.Name, err)
	}
	tag := fmt.Sprintf("warren-feed-%s-%d", randomHex(), f.consumed)
	deliveries, err := f.ch.Consume(f.q.Name, tag, false, false, false, false, nil)
	if err != nil {
		return fmt.Errorf("read %s: %w", f.q.Name, err)
	}
	f.consumed++
	f.tag, f.deliveries, f.keptByCons = tag, deliveries, 0
	return nil
}

// stop cancels the current consumer; what it had delivered already joins
// the early deliveries, since the broker sent them and they are held.
func (f *Feed) stop() error {
	if f.deliveries == nil {
		return nil
	}
	f.rpc.Lock()
	err := f.ch.Cancel(f.tag, false)
	f.rpc.Unlock()
	if err != nil {
		// The consumer may still be registered: its deliveries are not
		// drained, and go back with the channel.
		f.deliveries = nil
		return f.lostOr(fmt.Errorf("stop reading %s: %w", f.q.Name, err))
	}
	for d := range f.deliveries {
		f.early = append(f.early, d)
		f.count()
	}
	f.deliveries = nil
	return nil
}

// Next hands out up to n more letters, with bodies, in queue order. It
// waits for the first for at most the idle time (3× before anything
// came), then takes what has arrived. end is set once the limit is
// reached or the queue gave nothing for the idle time; what arrives past
// the limit stays held and goes back with Close.
func (f *Feed) Next(ctx context.Context, n int) (letters []domain.DeadLetter, end bool, err error) {
	want := f.budgeted()
	held := f.keptByCons > 0 && f.keptByCons >= max(f.window/2, 1)
	if !f.stopped && (held || want >= 2*f.window || 2*want <= f.window) {
		// Half the window is held, or the bodies seen call for another
		// prefetch: a fresh consumer gets a whole window of the right
		// size (the held deliveries stay held on the channel).
		if err := f.stop(); err != nil {
			return nil, true, err
		}
		if err := f.consume(want); err != nil {
			return nil, true, f.lostOr(err)
		}
	}
	idle := f.o.Idle
	if f.taken == 0 {
		idle *= 3
	}
	if len(f.early) == 0 && f.deliveries != nil && f.full() {
		// Nothing can come until the caller acks: wait for an ack a
		// moment, else hand back nothing so it settles what it holds.
		wait := time.NewTimer(fullWait)
		for f.full() {
			select {
			case <-f.acks: // look again: the wake may be an old one
			case <-wait.C:
				return nil, false, nil
			case <-ctx.Done():
				wait.Stop()
				return nil, true, ctx.Err()
			}
		}
		wait.Stop()
	}
	timer := time.NewTimer(idle)
	defer timer.Stop()
	var linger *time.Timer
	for len(letters) < n && f.taken < f.limit {
		if len(f.early) > 0 {
			letters = append(letters, f.decode(f.early[0]))
			f.early = f.early[1:]
			continue
		}
		if f.deliveries == nil {
			break
		}
		if len(letters) > 0 {
			// After the first, wait a moment for a fuller page: a page
			// costs one inbox query and one record, whatever its size.
			if linger == nil {
				linger = time.NewTimer(pageLinger)
				defer linger.Stop()
			}
			select {
			case d, ok := <-f.deliveries:
				if !ok {
					return letters, true, f.lost()
				}
				f.count()
				letters = append(letters, f.decode(d))
				continue
			case <-linger.C:
				return letters, false, nil
			}
		}
		select {
		case <-ctx.Done():
			return letters, true, ctx.Err()
		case d, ok := <-f.deliveries:
			if !ok {
				return letters, true, f.lost()
			}
			f.count()
			f.dry = 0
			letters = append(letters, f.decode(d))
		case <-timer.C:
			// Nothing came: either the queue has nothing more (other
			// consumers, expiry or a purge took the rest), or this
			// consumer's window is full of deliveries the caller has not
			// acked yet. Only an empty queue ends the feed.
			ready, err := f.ready()
			if err != nil {
				return letters, true, err
			}
			if ready == 0 {
				// Deliveries the broker sent may still be on their way
				// (a busy machine): the queue must stay dry for a few
				// idle periods before the feed ends short of its limit.
				f.dry++
				if f.dry >= dryChecks {
					return letters, true, f.finish()
				}
			} else {
				f.dry = 0
			}
			if len(letters) > 0 || ready > 0 {
				// Messages wait while none comes: the consumer's window
				// is full of deliveries the caller holds (a page waiting
				// to be published, copies awaiting confirms). Hand back
				// what there is, so the caller settles them.
				return letters, false, nil
			}
			timer.Reset(idle)
		}
	}
	if f.taken >= f.limit {
		return letters, true, f.finish()
	}
	return letters, f.deliveries == nil && len(f.early) == 0, nil
}

// finish stops reading: no more consumers. Deliveries already sent past
// the limit stay held.
func (f *Feed) finish() error {
	f.stopped = true
	err := f.stop()
	f.early = nil
	return err
}

func (f *Feed) decode(d amqp.Delivery) domain.DeadLetter {
	f.seen++
	f.seenBytes += int64(len(d.Body))
	dl := Decode(d, f.o, true)
	dl.Position = f.taken
	f.taken++
	return dl
}

func (f *Feed) count() {
	f.mu.Lock()
	f.received++
	f.mu.Unlock()
}

// Keep tells the feed the caller holds n more of the handed-out
// deliveries until Close.
func (f *Feed) Keep(n int) { f.keptByCons += n; f.keptAll += n }

// full reports that the caller holds the whole window: no delivery can
// come until it acks some.
func (f *Feed) full() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.received-f.acked-f.keptAll >= f.window
}

// wake wakes a Next waiting on a full window; callers hold mu.
func (f *Feed) wake() {
	select {
	case f.acks <- struct{}{}:
	default:
	}
}

// usable says why the feed's channel can take no ack: it was lost or
// closed. Call it with mu held.
func (f *Feed) usable() error {
	if f.lostErr != nil {
		return f.lostErr
	}
	if f.closed {
		return ErrClosed
	}
	return nil
}

// Ack removes one delivery the caller moved (multiple=false: a later
// delivery may be settled before an earlier one is confirmed). Safe to
// call from another goroutine than Next's.
func (f *Feed) Ack(tag uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.usable(); err != nil {
		return err
	}
	if err := f.ch.Ack(tag, false); err != nil {
		return fmt.Errorf("ack delivery %d on %s: %w", tag, f.q.Name, err)
	}
	f.acked++
	f.markAcked(tag)
	f.wake()
	return nil
}

// AckAll removes deliveries whose copies were confirmed. Where they
// continue the run of acked tags from the lowest one not yet acked, one
// basic.ack(multiple) covers the run: it names the highest tag of the
// run that is still unacked, and every tag below it is either in tags or
// acked already, so it never reaches a delivery that is kept, in flight
// or past the limit (the source documents' warning about multiple). The
// others are acked one by one. Safe to call from another goroutine than
// Next's.
func (f *Feed) AckAll(tags []uint64) error {
	if len(tags) == 0 {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.usable(); err != nil {
		return err
	}
	if f.floor == 0 {
		f.floor = 1 // delivery tags start at 1 on a channel
	}
	want := make(map[uint64]bool, len(tags))
	for _, t := range tags {
		want[t] = true
	}
	// The run: from floor up over tags wanted now or acked before.
	var top uint64 // the run's highest wanted tag
	t := f.floor
	for ; want[t] || f.above[t]; t++ {
		if want[t] {
			top = t
		}
	}
	if top > 0 {
		if err := f.ch.Ack(top, true); err != nil {
			return fmt.Errorf("ack deliveries up to %d on %s: %w", top, f.q.Name, err)
		}
		f.runs++
		for u := f.floor; u < t; u++ {
			if want[u] {
				f.acked++
				delete(want, u)
			}
			delete(f.above, u)
		}
		f.floor = t
	}
	for _, tag := range tags {
		if !want[tag] {
			continue // in the run
		}
		if err := f.ch.Ack(tag, false); err != nil {
			return fmt.Errorf("ack delivery %d on %s: %w", tag, f.q.Name, err)
		}
		f.acked++
		f.markAcked(tag)
	}
	f.wake()
	return nil
}

// markAcked notes a tag acked on its own, moving floor over it when it
// is the lowest one not yet acked.
func (f *Feed) markAcked(tag uint64) {
	if f.floor == 0 {
		f.floor = 1
	}
	if tag != f.floor {
		if f.above == nil {
			f.above = map[uint64]bool{}
		}
		f.above[tag] = true
		return
	}
	f.floor++
	for f.above[f.floor] {
		delete(f.above, f.floor)
		f.floor++
	}
}

// Sync makes one round trip on the feed's channel: nil proves every ack
// sent before it took effect. The round trip is a basic.qos that changes
// nothing: the broker's channel handles a channel's methods in order and
// has passed every earlier ack on to its queue before it answers, and a
// queue takes a channel's acks before it learns the channel is gone. A
// queue.declare would prove the same but asks the queue itself, the
// busiest process of a replay, every 256 acks.
func (f *Feed) Sync() error {
	f.mu.Lock()
	lost := f.lostErr
	f.mu.Unlock()
	if lost != nil {
		return lost
	}
	f.rpc.Lock()
	err := f.ch.Qos(f.window, 0, false)
	f.rpc.Unlock()
	if err != nil {
		return f.lostOr(fmt.Errorf("channel reading %s: %w", f.q.Name, err))
	}
	return nil
}

// Close returns every delivery still held — not moved, not confirmed, or
// past the limit — with one basic.nack(multiple, requeue) of delivery tag
// 0, which AMQP defines as every outstanding delivery of the channel, then
// closes the channel. Acks sent before it take effect first (a channel's
// methods are handled in order), so the nack reaches only what is still
// held; on a classic queue their order is kept. Call it once Next is done;
// it is safe to call twice.
func (f *Feed) Close() error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closed = true
	lost := f.lostErr
	f.mu.Unlock()
	if lost != nil || f.ch.IsClosed() {
		// The broker took back what the channel held.
		return nil
	}
	var errs []error
	if f.deliveries != nil {
		f.rpc.Lock()
		err := f.ch.Cancel(f.tag, false)
		f.rpc.Unlock()
		if err != nil {
			errs = append(errs, err)
		} else {
			for range f.deliveries {
				f.count()
			}
		}
	}
	f.mu.Lock()
	held := f.received - f.acked
	f.mu.Unlock()
	if held > 0 {
		if err := f.ch.Nack(0, true, true); err != nil {
			errs = append(errs, fmt.Errorf("return %d held deliveries to %s: %w", held, f.q.Name, err))
		}
	}
	if err := f.ch.Close(); err != nil && !errors.Is(err, amqp.ErrClosed) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// lost says why the consumer's deliveries stopped: the channel's close
// notification, which can come a moment after the deliveries end.
func (f *Feed) lost() error {
	select {
	case e := <-f.closes:
		f.noteLoss(e)
	case <-time.After(time.Second):
		f.noteLoss(nil)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lostErr
}

// lostOr records why the channel died, if it did, and returns that cause;
// otherwise it returns err.
func (f *Feed) lostOr(err error) error {
	select {
	case e := <-f.closes:
		f.noteLoss(e)
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.lostErr
	default:
	}
	return err
}

func (f *Feed) noteLoss(e *amqp.Error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lostErr == nil {
		f.lostErr = lossError("reading", f.q.Name, e)
	}
}

// Left is what the queue holds that the feed did not hand out, asked
// once Next has ended it: the messages ready now (arrived, or given back
// by another client, after it started) and the deliveries it got past
// its limit (held until Close).
func (f *Feed) Left() (ready, past int, err error) {
	ready, err = f.ready()
	if err != nil {
		return 0, 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return ready, max(f.received-f.taken, 0), nil
}

// ready is how many messages the queue holds ready now.
func (f *Feed) ready() (int, error) {
	f.rpc.Lock()
	defer f.rpc.Unlock()
	q, err := f.ch.QueueDeclarePassive(f.q.Name, false, false, false, false, nil)
	if err != nil {
		return 0, f.lostOr(fmt.Errorf("read the depth of %s: %w", f.q.Name, err))
	}
	return q.Messages, nil
}

// Depth is how many messages q holds ready now: the N an operation that
// starts now may take.
func Depth(conn *amqp.Connection, q domain.QueueInfo) (int, error) {
	depth, _, err := Inspect(conn, q)
	return depth, err
}

// Inspect is Depth and the consumers q has now, as the broker counts
// them: asked before a reader's own consumers come, since a quorum
// queue keeps counting a cancelled consumer while it holds deliveries.
func Inspect(conn *amqp.Connection, q domain.QueueInfo) (depth, consumers int, err error) {
	ch, depth, consumers, err := inspect(conn, q)
	if err != nil {
		return 0, 0, err
	}
	_ = ch.Close()
	return depth, consumers, nil
}

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

// heldPerChannel is how many held deliveries a feed leaves on one
// channel before it reads on a new one. The broker finds the delivery a
// basic.ack names by walking the channel's unacknowledged deliveries
// from the oldest, so every held one older than an acked one costs that
// ack a step: on one channel, a walk that keeps half of what it reads
// (a filter, a failure group, the inbox's applied ones) costs the broker
// the square of the queue's size (measured: 20 000 messages 3.8 s,
// 80 000 messages 111 s and 150 s of broker CPU on 3.10; the steps cost
// more in a vhost with a longer name). Spread over channels of at most
// this many held, it grows with the size (80 000: 7.1 s and 8.4 s).
// A feed whose limit would need more channels than it may open keeps
// more on each.
const heldPerChannel = 512

// genShift places a channel's generation above its delivery tags in the
// tags a feed hands out: a channel's own tags stay below 2^40.
const genShift = 40

// Feed takes at most a limit of a queue's messages, in order, for an
// operation over the whole queue: the caller acks the deliveries it
// moved, keeps the others held, and Close returns every held delivery
// with one basic.nack(multiple, requeue) on each channel it read on.
//
// A held delivery keeps its place in its consumer's prefetch, and on its
// channel. Once the held ones fill half of the prefetch, or
// heldPerChannel of them, the consumer is cancelled and a new one
// started, on a new channel while the connection has channels to spare
// (half its channel-max, at most Options.MaxChannels): the old
// deliveries stay held on their channel, and the new consumer gets a
// whole window. So the client holds
// at most about a window of bodies whatever the queue's size, the broker
// keeps the rest, and an ack never passes more than heldPerChannel held
// deliveries. The tags handed out name the channel (genShift).
type Feed struct {
	q     domain.QueueInfo
	o     Options
	conn  *amqp.Connection
	limit int
	// window is the current consumer's prefetch: at most maxWindow, and
	// no more bodies than the byte budget allows at the sizes seen.
	window    int
	maxWindow int
	// closes carries the first channel's close the broker sent, from any
	// of the feed's channels.
	closes chan *amqp.Error
	// chanBudget is how many channels the feed may read on, and
	// perChan how many held deliveries it leaves on one before it reads
	// on another.
	chanBudget, perChan int

	// Read by Next's goroutine only.
	tag        string
	deliveries <-chan amqp.Delivery
	early      []held // drained from a cancelled consumer
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
	cur      *feedChan   // the channel the consumer reads on
	chans    []*feedChan // every channel read on, oldest first; index = gen
	received int         // deliveries the channels got, handed out or not
	acked    int
	runs     int // multiple acks sent
	closed   bool
	lostErr  error
	consumed int // consumers started
	// acks wakes a Next waiting on a full window once an ack freed some.
	acks chan struct{}
}

// feedChan is one channel a feed read on, and its deliveries' acks.
// Its counts and floor are guarded by the feed's mu.
type feedChan struct {
	ch       *amqp.Channel
	gen      uint64
	received int
	acked    int
	// floor is the lowest delivery tag not known to be acked: every tag
	// below it is. above holds the tags acked one by one above floor.
	floor uint64
	above map[uint64]bool
	// dirty: acked since the last Sync.
	dirty bool
}

// held is a delivery drained from a cancelled consumer, with its channel.
type held struct {
	d amqp.Delivery
	c *feedChan
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
	f := &Feed{q: q, o: o, conn: conn, limit: limit, maxWindow: min(window, MaxHeld),
		closes: make(chan *amqp.Error, 1), acks: make(chan struct{}, 1),
		chanBudget: max(int(conn.Config.ChannelMax)/2, 1)}
	if o.MaxChannels > 0 {
		f.chanBudget = min(f.chanBudget, o.MaxChannels)
	}
	f.perChan = max(heldPerChannel, (limit+f.chanBudget-1)/f.chanBudget)
	if err := f.openChannel(); err != nil {
		return nil, err
	}
	first := f.budgeted()
	if limit <= 0 {
		f.stopped = true
		return f, nil
	}
	if err := f.consume(first); err != nil {
		_ = f.cur.ch.Close()
		return nil, err
	}
	return f, nil
}

// openChannel opens the channel the next consumer reads on. A close the
// broker sends on it is the feed's loss.
func (f *Feed) openChannel() error {
	ch, err := f.conn.Channel()
	if err != nil {
		return fmt.Errorf("open a channel to read %s: %w", f.q.Name, err)
	}
	closes := ch.NotifyClose(make(chan *amqp.Error, 1))
	go func() {
		if e, ok := <-closes; ok {
			f.noteLoss(e)
			select {
			case f.closes <- e:
			default:
			}
		}
	}()
	f.mu.Lock()
	c := &feedChan{ch: ch, gen: uint64(len(f.chans)), floor: 1}
	f.chans = append(f.chans, c)
	f.cur = c
	f.mu.Unlock()
	return nil
}

// chanOf is the channel a handed-out tag came from, and the tag on it.
// Call it with mu held.
func (f *Feed) chanOf(tag uint64) (*feedChan, uint64, error) {
	gen := tag >> genShift
	if gen >= uint64(len(f.chans)) {
		return nil, 0, fmt.Errorf("delivery tag %d names no channel the feed of %s read on", tag, f.q.Name)
	}
	return f.chans[gen], tag & (1<<genShift - 1), nil
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
	if err := f.cur.ch.Qos(f.window, 0, false); err != nil {
		return fmt.Errorf("set prefetch to read %s: %w", f.q.Name, err)
	}
	tag := fmt.Sprintf("warren-feed-%s-%d", randomHex(), f.consumed)
	deliveries, err := f.cur.ch.Consume(f.q.Name, tag, false, false, false, false, nil)
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
	err := f.cur.ch.Cancel(f.tag, false)
	f.rpc.Unlock()
	if err != nil {
		// The consumer may still be registered: its deliveries are not
		// drained, and go back with the channel.
		f.deliveries = nil
		return f.lostOr(fmt.Errorf("stop reading %s: %w", f.q.Name, err))
	}
	for d := range f.deliveries {
		f.early = append(f.early, held{d, f.cur})
		f.count(f.cur)
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
	if err := f.lostNow(); err != nil {
		// A channel holding deliveries was closed: the broker gave
		// them back, and this consumer would read them again.
		return nil, true, err
	}
	want := f.budgeted()
	rotate := len(f.chans) < f.chanBudget
	keptMost := max(f.window/2, 1)
	if rotate {
		keptMost = min(keptMost, f.perChan)
	}
	full := f.keptByCons > 0 && f.keptByCons >= keptMost
	if !f.stopped && (full || want >= 2*f.window || 2*want <= f.window) {
		// Half the window (or a channel's share) is held, or the bodies
		// seen call for another prefetch: a fresh consumer gets a whole
		// window of the right size, on a fresh channel once this one
		// holds its share (the held deliveries stay held on theirs).
		if err := f.stop(); err != nil {
			return nil, true, err
		}
		if full && rotate {
			if err := f.openChannel(); err != nil {
				return nil, true, f.lostOr(err)
			}
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
			letters = append(letters, f.decode(f.early[0].d, f.early[0].c))
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
				f.count(f.cur)
				letters = append(letters, f.decode(d, f.cur))
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
			f.count(f.cur)
			f.dry = 0
			letters = append(letters, f.decode(d, f.cur))
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

func (f *Feed) decode(d amqp.Delivery, c *feedChan) domain.DeadLetter {
	f.seen++
	f.seenBytes += int64(len(d.Body))
	dl := Decode(d, f.o, true)
	dl.DeliveryTag = c.gen<<genShift | d.DeliveryTag
	dl.Position = f.taken
	f.taken++
	return dl
}

func (f *Feed) count(c *feedChan) {
	f.mu.Lock()
	f.received++
	c.received++
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

// Ack removes one delivery the caller moved, as AckAll does one: a
// multiple ack only where it reaches nothing but acked tags (a later
// delivery may be settled before an earlier one is confirmed). Safe to
// call from another goroutine than Next's.
func (f *Feed) Ack(tag uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.usable(); err != nil {
		return err
	}
	c, t, err := f.chanOf(tag)
	if err != nil {
		return err
	}
	if err := f.ackOn(c, []uint64{t}); err != nil {
		return err
	}
	f.wake()
	return nil
}

// AckAll removes deliveries whose copies were confirmed, channel by
// channel. Where they continue the run of acked tags from the lowest one
// not yet acked on their channel, one basic.ack(multiple) covers the
// run: it names the highest tag of the run that is still unacked, and
// every tag below it is either in tags or acked already, so it never
// reaches a delivery that is kept, in flight or past the limit (the
// source documents' warning about multiple). The others are acked one by
// one. Safe to call from another goroutine than Next's.
func (f *Feed) AckAll(tags []uint64) error {
	if len(tags) == 0 {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.usable(); err != nil {
		return err
	}
	var order []*feedChan
	byChan := map[*feedChan][]uint64{}
	for _, tag := range tags {
		c, t, err := f.chanOf(tag)
		if err != nil {
			return err
		}
		if _, ok := byChan[c]; !ok {
			order = append(order, c)
		}
		byChan[c] = append(byChan[c], t)
	}
	for _, c := range order {
		if err := f.ackOn(c, byChan[c]); err != nil {
			return err
		}
	}
	f.wake()
	return nil
}

// ackOn acks tags of c's own; call it with mu held.
func (f *Feed) ackOn(c *feedChan, tags []uint64) error {
	c.dirty = true
	want := make(map[uint64]bool, len(tags))
	for _, t := range tags {
		want[t] = true
	}
	// The run: from floor up over tags wanted now or acked before.
	var top uint64 // the run's highest wanted tag
	t := c.floor
	for ; want[t] || c.above[t]; t++ {
		if want[t] {
			top = t
		}
	}
	if top > 0 {
		if err := c.ch.Ack(top, true); err != nil {
			return fmt.Errorf("ack deliveries up to %d on %s: %w", top, f.q.Name, err)
		}
		f.runs++
		for u := c.floor; u < t; u++ {
			if want[u] {
				f.acked++
				c.acked++
				delete(want, u)
			}
			delete(c.above, u)
		}
		c.floor = t
	}
	for _, tag := range tags {
		if !want[tag] {
			continue // in the run
		}
		if err := c.ch.Ack(tag, false); err != nil {
			return fmt.Errorf("ack delivery %d on %s: %w", tag, f.q.Name, err)
		}
		f.acked++
		c.acked++
		c.markAcked(tag)
	}
	return nil
}

// markAcked notes a tag acked on its own, moving floor over it when it
// is the lowest one not yet acked.
func (c *feedChan) markAcked(tag uint64) {
	if tag != c.floor {
		if c.above == nil {
			c.above = map[uint64]bool{}
		}
		c.above[tag] = true
		return
	}
	c.floor++
	for c.above[c.floor] {
		delete(c.above, c.floor)
		c.floor++
	}
}

// Sync makes one round trip on each of the feed's channels that acked
// since the last: nil proves every ack sent before it took effect. The
// round trip is a basic.qos that changes nothing: the broker's channel
// handles a channel's methods in order and has passed every earlier ack
// on to its queue before it answers, and a queue takes a channel's acks
// before it learns the channel is gone. A queue.declare would prove the
// same but asks the queue itself, the busiest process of a replay, every
// 256 acks.
func (f *Feed) Sync() error {
	f.mu.Lock()
	lost := f.lostErr
	var dirty []*feedChan
	for _, c := range f.chans {
		if c.dirty {
			c.dirty = false
			dirty = append(dirty, c)
		}
	}
	f.mu.Unlock()
	if lost != nil {
		return lost
	}
	f.rpc.Lock()
	defer f.rpc.Unlock()
	for _, c := range dirty {
		if err := c.ch.Qos(f.window, 0, false); err != nil {
			return f.lostOr(fmt.Errorf("channel reading %s: %w", f.q.Name, err))
		}
	}
	return nil
}

// Close returns every delivery still held — not moved, not confirmed, or
// past the limit — with one basic.nack(multiple, requeue) of delivery tag
// 0 on each channel that holds some, which AMQP defines as every
// outstanding delivery of the channel, then closes the channels, oldest
// first. Acks sent before it take effect first (a channel's methods are
// handled in order), so the nack reaches only what is still held; on a
// classic queue their order is kept. Call it once Next is done; it is
// safe to call twice.
func (f *Feed) Close() error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closed = true
	lost := f.lostErr
	chans := f.chans
	f.mu.Unlock()
	if lost != nil {
		// A lost channel gave back what it held, and closing the others
		// gives back theirs; the loss was told when it struck.
		for _, c := range chans {
			_ = c.ch.Close()
		}
		return nil
	}
	var errs []error
	if f.deliveries != nil && !f.cur.ch.IsClosed() {
		f.rpc.Lock()
		err := f.cur.ch.Cancel(f.tag, false)
		f.rpc.Unlock()
		if err != nil {
			errs = append(errs, err)
		} else {
			for range f.deliveries {
				f.count(f.cur)
			}
		}
	}
	for _, c := range chans {
		if c.ch.IsClosed() {
			// The broker took back what the channel held.
			continue
		}
		f.mu.Lock()
		held := c.received - c.acked
		f.mu.Unlock()
		if held > 0 {
			if err := c.ch.Nack(0, true, true); err != nil {
				errs = append(errs, fmt.Errorf("return %d held deliveries to %s: %w", held, f.q.Name, err))
			}
		}
		if err := c.ch.Close(); err != nil && !errors.Is(err, amqp.ErrClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// lost says why the consumer's deliveries stopped: the channel's close
// notification, which can come a moment after the deliveries end.
func (f *Feed) lost() error {
	if err := f.lostNow(); err != nil {
		return err
	}
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

// lostNow is why one of the feed's channels was closed, if one was.
func (f *Feed) lostNow() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lostErr
}

// lostOr records why the channel died, if it did, and returns that cause;
// otherwise it returns err.
func (f *Feed) lostOr(err error) error {
	if lost := f.lostNow(); lost != nil {
		return lost
	}
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
	q, err := f.cur.ch.QueueDeclarePassive(f.q.Name, false, false, false, false, nil)
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

package actions

import (
	"context"
	"errors"
	"fmt"
	"sync"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/audit"
)

// Outcome is what the broker said about one published message.
type Outcome string

// The outcomes of docs/ARCHITECTURE.md §4.4: only Confirmed removes a dead letter.
const (
	Confirmed Outcome = "confirmed" // acked by the broker and routed
	Returned  Outcome = "returned"  // basic.return: routed nowhere
	Nacked    Outcome = "nacked"    // basic.nack: refused (e.g. reject-publish)
	Unknown   Outcome = "unknown"   // the channel closed before the confirm
)

// SeqHeader carries the publish sequence number of a message on the
// publisher's channel. A basic.return names no sequence number, and two
// returned messages may be identical otherwise, so this header is what ties
// a return to the exact publish it answers.
const SeqHeader = "x-warren-publish-seq"

// Outgoing is one message to publish; Ref is the caller's handle for it.
type Outgoing struct {
	Ref        int
	Exchange   string
	RoutingKey string
	Msg        amqp.Publishing
	// OwnHeaders says Msg.Headers is this message's own map, made for
	// it: the publisher adds its sequence header there instead of to a
	// copy.
	OwnHeaders bool
	// Exact publishes Msg as it is, without the sequence header: a
	// return is matched to the oldest unsettled message with the same
	// message ID and body (an import must not add a header).
	Exact bool
	// BodyDigest is audit.BodyDigest of Msg.Body when the caller has it
	// already; an Exact message's print is computed from the body if not.
	BodyDigest string
}

// Settlement is the final word on one Outgoing.
type Settlement struct {
	Ref     int
	Seq     uint64
	Outcome Outcome
	// ReplyCode and ReplyText come with a Returned outcome.
	ReplyCode uint16
	ReplyText string
	// Err says why the outcome is Unknown.
	Err error
}

type pending struct {
	ref      int
	returned *amqp.Return
	// print names an Exact message, for its return: its message ID and
	// its body's sha256.
	print string
}

// fingerprint names a message for a return that carries no sequence
// header: its message ID and its body's digest (audit.BodyDigest).
func fingerprint(messageID, bodyDigest string) string {
	return messageID + "\x00" + bodyDigest
}

// Publisher publishes mandatory messages on a dedicated confirm-mode
// channel with at most Window of them awaiting a confirm. Publish never
// waits for a round trip of its own: it only waits for a free slot in the
// window, and confirms, returns and nacks are matched asynchronously and
// delivered in Results.
type Publisher struct {
	ch      *amqp.Channel
	slots   chan struct{}
	results chan Settlement
	done    chan struct{} // closed when the loop has settled everything

	mu      sync.Mutex
	pending map[uint64]*pending
	exact   int   // Exact messages pending
	peak    int   // most messages ever awaiting a confirm at once
	dead    error // set once the channel is gone
	// lost is the broker's reason when it closed the channel (a
	// permission refused, a connection lost); nil after Close.
	lost error
}

// NewPublisher opens a channel on conn, puts it in confirm mode and starts
// matching confirms. window bounds the messages awaiting a confirm.
func NewPublisher(conn *amqp.Connection, window int) (*Publisher, error) {
	if window < 1 {
		return nil, fmt.Errorf("publisher: window must be at least 1, got %d", window)
	}
	ch, err := conn.Channel()
	if err != nil {
		return nil, fmt.Errorf("open publishing channel: %w", err)
	}
	if err := ch.Confirm(false); err != nil {
		ch.Close()
		return nil, fmt.Errorf("put publishing channel in confirm mode: %w", err)
	}
	// The client drops a notification a listener leaves unread for five
	// seconds. At most window messages are unsettled, so buffers of that
	// size can never make the client wait, whatever the caller does.
	confirms := ch.NotifyPublish(make(chan amqp.Confirmation, window))
	returns := ch.NotifyReturn(make(chan amqp.Return, window))
	closes := ch.NotifyClose(make(chan *amqp.Error, 1))
	p := &Publisher{
		ch:      ch,
		slots:   make(chan struct{}, window),
		results: make(chan Settlement, window),
		done:    make(chan struct{}),
		pending: make(map[uint64]*pending, window),
	}
	go p.loop(confirms, returns, closes)
	return p, nil
}

// Results delivers one Settlement per message Publish accepted, and is
// closed after Close once every message is settled. The caller must keep
// reading it: a full Results channel stops new publishes.
func (p *Publisher) Results() <-chan Settlement { return p.results }

// ErrPublisherClosed means the channel is gone; no more publishes.
var ErrPublisherClosed = errors.New("publishing channel closed")

// Publish sends o with mandatory=true once the window has room. An error
// before the send (ctx done, channel gone) means o was not published and
// gets no Settlement; a failed send settles o as Unknown and returns the
// error too, since the channel is then unusable.
func (p *Publisher) Publish(ctx context.Context, o Outgoing) error {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-p.done:
		return p.deadErr()
	}
	if err := ctx.Err(); err != nil {
		<-p.slots
		return err
	}
	p.mu.Lock()
	if p.dead != nil {
		p.mu.Unlock()
		<-p.slots
		return p.dead
	}
	seq := p.ch.GetNextPublishSeqNo()
	pe := &pending{ref: o.Ref}
	if o.Exact {
		digest := o.BodyDigest
		if digest == "" {
			digest = audit.BodyDigest(o.Msg.Body)
		}
		pe.print = fingerprint(o.Msg.MessageId, digest)
		p.exact++
	}
	p.pending[seq] = pe
	p.peak = max(p.peak, len(p.pending))
	p.mu.Unlock()

	msg := o.Msg
	switch {
	case o.Exact:
	case o.OwnHeaders && msg.Headers != nil:
		msg.Headers[SeqHeader] = int64(seq)
	default:
		msg.Headers = withHeader(msg.Headers, SeqHeader, int64(seq))
	}
	dc, err := p.ch.PublishWithDeferredConfirm(o.Exchange, o.RoutingKey, true, false, msg)
	if err == nil && (dc == nil || dc.DeliveryTag != seq) {
		// Only this goroutine publishes on the channel, so the tag is the
		// one reserved above; anything else would mismatch every return.
		err = fmt.Errorf("publisher: sequence number drifted (want %d)", seq)
	}
	if err != nil {
		p.settleOne(seq, Unknown, fmt.Errorf("publish failed: %w", err))
		return err
	}
	return nil
}

// Drain waits until every published message is settled or ctx is done.
func (p *Publisher) Drain(ctx context.Context) error {
	// Holding every slot means nothing is in flight.
	held := 0
	defer func() {
		for ; held > 0; held-- {
			<-p.slots
		}
	}()
	for held < cap(p.slots) {
		select {
		case p.slots <- struct{}{}:
			held++
		case <-p.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Close closes the channel: whatever still awaits a confirm is settled as
// Unknown, and Results is closed once everything is delivered there.
func (p *Publisher) Close() error {
	err := p.ch.Close()
	if errors.Is(err, amqp.ErrClosed) {
		err = nil
	}
	return err
}

// Peak is the most messages that were awaiting a confirm at once: it shows
// whether the window was used (pipelining) or starved.
func (p *Publisher) Peak() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peak
}

// Lost is why the broker closed the publishing channel, once it has; nil
// while it is open and after Close. Copies in flight then are Unknown,
// and the run that published them must say why.
func (p *Publisher) Lost() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lost
}

// why is the reason publishing stopped, given the error a publish
// returned (nil when every copy went out): the broker's own reason for
// closing the channel in place of the client's "not open", or of none.
// Call it once the results are drained, when Lost is settled.
func (p *Publisher) why(err error) error {
	lost := p.Lost()
	if lost != nil && (err == nil || errors.Is(err, amqp.ErrClosed) || errors.Is(err, ErrPublisherClosed)) {
		return lost
	}
	return err
}

// stopped says why publishing stopped after published of what: err,
// with the permission to ask for when the broker refused it, and where
// the rest is.
func stopped(published int, of string, err error, rest string) error {
	var ae *amqp.Error
	if errors.As(err, &ae) && ae.Code == amqp.AccessRefused {
		return fmt.Errorf("publishing stopped after %d%s messages: %w; the user needs the write permission on the exchange it names, "+
			"and %s", published, of, err, rest)
	}
	return fmt.Errorf("publishing stopped after %d%s messages: %w", published, of, err)
}

// Done is closed once every message is settled after the channel closed.
func (p *Publisher) Done() <-chan struct{} { return p.done }

func (p *Publisher) deadErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead != nil {
		return p.dead
	}
	return ErrPublisherClosed
}

func (p *Publisher) loop(confirms <-chan amqp.Confirmation, returns <-chan amqp.Return, closes <-chan *amqp.Error) {
	defer close(p.done)
	defer close(p.results)
	for confirms != nil {
		select {
		case r, ok := <-returns:
			if !ok {
				returns = nil
				continue
			}
			p.noteReturn(r)
		case c, ok := <-confirms:
			if !ok {
				confirms = nil
				continue
			}
			// The broker sends a message's basic.return before its ack,
			// and the client hands both over from one goroutine in that
			// order, so the return is already buffered: take it first.
			p.drainReturns(returns)
			p.settleConfirm(c)
		}
	}
	p.drainReturns(returns)
	reason, lost := ErrPublisherClosed, error(nil)
	if e, ok := <-closes; ok && e != nil {
		reason = fmt.Errorf("%w: %w", ErrPublisherClosed, e)
		lost = reason
	}
	p.mu.Lock()
	p.dead, p.lost = reason, lost
	left := make([]uint64, 0, len(p.pending))
	for seq := range p.pending {
		left = append(left, seq)
	}
	p.mu.Unlock()
	for _, seq := range left {
		p.settleOne(seq, Unknown, fmt.Errorf("no confirm before the channel closed: %w", reason))
	}
}

func (p *Publisher) drainReturns(returns <-chan amqp.Return) {
	for returns != nil {
		select {
		case r, ok := <-returns:
			if !ok {
				return
			}
			p.noteReturn(r)
		default:
			return
		}
	}
}

func (p *Publisher) noteReturn(r amqp.Return) {
	seq, ok := headerSeq(r.Headers)
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.pending[seq]; ok && (e == nil || e.print != "") {
		// Not this publisher's header: an exact message (an import)
		// carries the one of a replay it went through before it died
		// again and was exported, which names another publish or none.
		ok = false
	}
	if !ok && p.exact > 0 {
		// Returns come in publish order, each before its own confirm:
		// the oldest unsettled message that is this one was returned.
		print := fingerprint(r.MessageId, audit.BodyDigest(r.Body))
		for s, e := range p.pending {
			if e.print == print && e.returned == nil && (!ok || s < seq) {
				seq, ok = s, true
			}
		}
	}
	if !ok {
		return
	}
	if e := p.pending[seq]; e != nil {
		e.returned = &r
	}
}

func (p *Publisher) settleConfirm(c amqp.Confirmation) {
	outcome := Confirmed
	if !c.Ack {
		outcome = Nacked
	}
	p.settleOne(c.DeliveryTag, outcome, nil)
}

// settleOne reports seq's outcome and frees its slot. A returned message
// is Returned whatever follows it: the ack after a return only says the
// broker is done with a message it routed nowhere.
func (p *Publisher) settleOne(seq uint64, outcome Outcome, err error) {
	p.mu.Lock()
	e := p.pending[seq]
	delete(p.pending, seq)
	if e != nil && e.print != "" {
		p.exact--
	}
	p.mu.Unlock()
	if e == nil {
		return
	}
	s := Settlement{Ref: e.ref, Seq: seq, Outcome: outcome, Err: err}
	if e.returned != nil {
		s.Outcome, s.Err = Returned, nil
		s.ReplyCode, s.ReplyText = e.returned.ReplyCode, e.returned.ReplyText
	}
	p.results <- s
	<-p.slots
}

func headerSeq(h amqp.Table) (uint64, bool) {
	switch v := h[SeqHeader].(type) {
	case int64:
		return uint64(v), v > 0
	case int32:
		return uint64(v), v > 0
	}
	return 0, false
}

// withHeader returns a copy of h with k set, leaving the caller's table
// untouched.
func withHeader(h amqp.Table, k string, v any) amqp.Table {
	out := make(amqp.Table, len(h)+1)
	for hk, hv := range h {
		out[hk] = hv
	}
	out[k] = v
	return out
}

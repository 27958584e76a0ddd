package actions

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/sources/dlq"
)

// Streamed is an operation over a whole queue, or its first Limit
// messages: every message is read, decided, and moved or kept as it
// arrives, so memory is bounded by the windows, not by the queue.
type Streamed struct {
	Request Request
	// Limit is N, the messages the queue held when the operator answered
	// the prompt; a message that dies again during the run is past it.
	Limit int
	// Expect is how many the preview said would move, and Groups where
	// to: for progress and the intent record.
	Expect int
	Groups []Group
	Lookup Lookup
	// Resume, when set, finishes an interrupted operation under its own
	// ID: twins of its recorded confirms are removed from the queue, and
	// the rest is decided as the operation decided it.
	Resume *Resumption
	// Close, when set, closes the source once everything is settled
	// (its deliveries not acked go back), before the final record; and
	// Sweep, when set too, then opens the queue again to remove the twins
	// of confirmed copies whose acks the broker lost (a quorum queue
	// whose leader changed during the run).
	Close func() error
	Sweep func() (SweepSource, error)
}

// recordEvery bounds how many settled messages wait for their record:
// confirms are recorded write-ahead, one record (and one sync of the
// store) per batch, before their source deliveries are acked.
const (
	recordEvery = 256
	recordAfter = 50 * time.Millisecond
)

// Stream carries out op over src (docs/ARCHITECTURE.md §4.4): an intent
// record, then page by page the inbox asked once, each letter decided, a
// write-ahead record of what is about to be published, the copies
// published with confirms and mandatory within the window; each confirm
// recorded before its source delivery is acked; the first return or nack
// stops publishing, since the destination does not take the messages; a
// cancelled ctx stops publishing too. What is in flight is settled, and
// the final record written. The caller closes src, which returns every
// delivery not acked — kept, returned, nacked, unknown or never sent —
// with one bulk nack.
func Stream(ctx context.Context, src Source, op Streamed, env Env, progress func(Progress)) (*Result, error) {
	env = withDefaults(env)
	req := op.Request
	res := &Result{}
	if err := req.Validate(); err != nil {
		return res, err
	}
	if env.Audit == nil || env.Conn == nil || src == nil {
		return res, errors.New("stream: the audit store, the connection and the source are required")
	}
	if err := env.Audit.Check(ctx); err != nil {
		return res, fmt.Errorf("%w (%s): %v; nothing was changed", ErrAuditUnavailable, env.Audit.Describe(), err)
	}
	plan := &Plan{Action: req.Action, Vhost: req.Vhost, Queue: req.Queue, FilterText: req.FilterText,
		Parking: req.Parking, Reason: req.Reason, Rate: req.Rate, Release: req.Release, Groups: op.Groups}
	declareParking, err := preflight(env.Conn, plan)
	if err != nil {
		return res, err
	}
	s := &streamer{op: op, env: env, src: src, res: res, progress: progress}
	s.log = &streamLog{store: env.Audit, op: operation(plan, env)}
	if op.Resume != nil {
		s.log.op.ID, s.log.op.Target = op.Resume.Op.ID, op.Resume.Op.Target
	}
	res.Operation = s.log.op.ID
	if err := s.log.intent(ctx, op, env.Window, declareParking); err != nil {
		return res, fmt.Errorf("%w (%s): %v; nothing was changed", ErrAuditUnavailable, env.Audit.Describe(), err)
	}
	if declareParking {
		if err := declareQueue(env.Conn, req.Parking); err != nil {
			err = fmt.Errorf("declare parking queue %s: %w", req.Parking, err)
			return res, errors.Join(err, s.log.final(ctx, res, err))
		}
	}
	runErr := s.run(ctx)
	if runErr == nil || !(errors.Is(runErr, ErrSessionLost) || errors.Is(runErr, ErrAuditUnavailable)) {
		runErr = errors.Join(runErr, s.closeAndSweep(ctx))
	}
	if errors.Is(runErr, ErrSessionLost) || errors.Is(runErr, ErrAuditUnavailable) {
		// Acks may not have taken effect, or their records may be
		// missing: the operation stays open, for `dlq resume`.
		return res, fmt.Errorf("%w; the operation %s is left incomplete: `warren dlq resume %s` finishes it", runErr, res.Operation, req.Queue)
	}
	return res, errors.Join(runErr, s.log.final(ctx, res, runErr))
}

// closeAndSweep closes the source, then, where the operation asks for it
// and copies were confirmed, sweeps the queue for their twins.
func (s *streamer) closeAndSweep(ctx context.Context) error {
	if s.op.Close == nil {
		return nil
	}
	if err := s.op.Close(); err != nil {
		return fmt.Errorf("returning what was not moved: %w", err)
	}
	if s.op.Sweep == nil || len(s.twins) == 0 {
		return nil
	}
	src, err := s.op.Sweep()
	if err != nil {
		s.res.SweepNote = fmt.Sprintf("the DLQ could not be checked for twins of confirmed copies (%v): `warren dlq stats` counts what it holds", err)
		return nil
	}
	n, err := s.sweep(context.WithoutCancel(ctx), src)
	s.res.Deduplicated += n
	if n > 0 {
		s.res.SweepNote = fmt.Sprintf("%d confirmed copies came back to the DLQ after the broker lost their acks (a quorum leader change): removed as twins", n)
	}
	if err != nil {
		return fmt.Errorf("%w: removing twins of confirmed copies: %v", ErrSessionLost, err)
	}
	return nil
}

// streamer is one streamed operation in progress.
type streamer struct {
	op       Streamed
	env      Env
	src      Source
	log      *streamLog
	res      *Result
	progress func(Progress)

	mu        sync.Mutex
	inFlight  map[int]flight
	published int
	rep       reporter
	// unrecorded holds a slot for each copy published whose outcome is
	// not recorded yet: after a crash, at most a window of copies can
	// exist without a record saying so.
	unrecorded chan struct{}
	// checked are the destinations known to exist.
	checked map[Destination]bool
	// twins are the confirmed copies, kept only when the operation
	// sweeps for twins.
	twins confirmedTwins
}

// flight is what is kept of a published message until its confirm: its
// delivery tag and what the audit log names it by, never its body.
type flight struct {
	tag           uint64
	letter        dlq.DeadLetter // Body is nil
	digest        string
	dest          Destination
	userIDDropped string
	expDropped    bool
}

func (s *streamer) run(ctx context.Context) error {
	pub, err := NewPublisher(s.env.Conn, s.env.Window)
	if err != nil {
		return err
	}
	s.inFlight = make(map[int]flight, s.env.Window)
	if s.op.Sweep != nil {
		s.twins = confirmedTwins{}
	}
	s.unrecorded = make(chan struct{}, s.env.Window)
	s.checked = make(map[Destination]bool, len(s.op.Groups))
	for _, g := range s.op.Groups {
		s.checked[g.Dest] = true
	}
	s.rep = reporter{fn: s.progress, p: Progress{Operation: s.res.Operation, Total: s.op.Expect}}
	sendCtx, stopSending := context.WithCancelCause(ctx)
	defer stopSending(nil)
	settled := make(chan error, 1)
	go func() { settled <- s.settle(ctx, pub, stopSending) }()

	sendErr := s.send(sendCtx, pub)
	s.res.Cancelled = ctx.Err() != nil
	// Settle what is in flight even after a cancel: the copies are at the
	// broker already, and only a confirm says whether the source may go.
	settleCtx, cancel := context.WithTimeout(context.Background(), s.env.SettleTimeout)
	drainErr := pub.Drain(settleCtx)
	cancel()
	closeErr := pub.Close()
	settleErr := <-settled
	s.res.PeakInFlight = pub.Peak()
	// What is still in flight never reached the broker.
	s.res.NotSent += len(s.inFlight)
	s.res.Selected = s.res.Confirmed + s.res.Returned + s.res.Nacked + s.res.Unknown
	s.rep.finish(s.published)
	cause := context.Cause(sendCtx)
	switch {
	case settleErr != nil:
		return settleErr
	case errors.Is(cause, ErrSessionLost), errors.Is(cause, ErrAuditUnavailable), errors.Is(cause, errRefused):
		return cause
	case errors.Is(sendErr, ErrSessionLost), errors.Is(sendErr, ErrNoDestination):
		return sendErr
	case s.res.Cancelled:
		return nil
	case sendErr != nil:
		return fmt.Errorf("publishing stopped after %d messages: %w", s.published, sendErr)
	case drainErr != nil:
		return fmt.Errorf("confirms still missing after %s: %w", s.env.SettleTimeout, drainErr)
	}
	return closeErr
}

// send reads, decides and publishes page by page until the source ends
// or publishing must stop.
func (s *streamer) send(ctx context.Context, pub *Publisher) error {
	req := s.op.Request
	var limiter *rate.Limiter
	if req.Rate > 0 {
		limiter = rate.NewLimiter(rate.Limit(req.Rate), max(1, int(req.Rate/50)))
	}
	st := stamp{action: req.Action, operation: s.res.Operation, connUser: s.env.ConnUser, reason: req.Reason, by: s.env.Operator}
	ref := 0
	for ctx.Err() == nil {
		letters, end, err := s.src.Next(ctx, pageSize)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			// The channel holding the deliveries is gone: acks sent since
			// the last proof may not have taken effect.
			return fmt.Errorf("%w: %v", ErrSessionLost, err)
		}
		s.res.Taken += len(letters)
		applied, known := lookupPage(ctx, s.op.Lookup, letters)
		var moving []Item
		var twins []flight
		for _, d := range letters {
			if r := s.op.Resume; r != nil {
				t := TwinOf(d)
				if r.Confirmed[t] > 0 {
					// Its copy was confirmed: this is the twin to remove.
					r.Confirmed[t]--
					twins = append(twins, flight{tag: d.DeliveryTag, letter: withoutBody(d), digest: t.BodySHA256})
					continue
				}
				if r.Published[t] > 0 && operationOf(d) != s.res.Operation {
					r.Published[t]--
					s.res.PossibleDuplicates++
				}
			}
			dest, skip, _ := req.Decide(d, appliedIn(applied, known, d))
			switch {
			case operationOf(d) == s.res.Operation:
				// A copy of this operation died again: it stays.
				s.res.Kept++
			case skip == SkipApplied:
				s.res.SkippedApplied++
			case skip != Selected:
				s.res.Kept++
			default:
				moving = append(moving, Item{Letter: d, Dest: dest})
			}
		}
		s.src.Keep(len(letters) - len(moving) - len(twins))
		if err := s.dedupe(ctx, twins); err != nil {
			return err
		}
		if err := s.checkDestinations(moving); err != nil {
			s.res.NotSent += len(moving)
			return err
		}
		if len(moving) > 0 {
			if err := s.log.publishing(ctx, moving); err != nil {
				s.res.NotSent += len(moving)
				return err
			}
		}
		for i, it := range moving {
			if limiter != nil {
				if err := limiter.Wait(ctx); err != nil {
					s.res.NotSent += len(moving) - i
					return nil
				}
			}
			select {
			case s.unrecorded <- struct{}{}:
			case <-ctx.Done():
				s.res.NotSent += len(moving) - i
				return nil
			}
			st.at = s.env.Now()
			cp := makeCopy(it.Letter, st)
			fl := flight{tag: it.Letter.DeliveryTag, digest: audit.BodyDigest(it.Letter.Body), dest: it.Dest,
				userIDDropped: cp.userIDDropped, expDropped: cp.expirationDropped}
			fl.letter = withoutBody(it.Letter)
			s.mu.Lock()
			s.inFlight[ref] = fl
			s.mu.Unlock()
			err := pub.Publish(ctx, Outgoing{Ref: ref, Exchange: it.Dest.Exchange, RoutingKey: it.Dest.RoutingKey, Msg: cp.msg})
			ref++
			if err != nil {
				// This one is settled as unknown if it reached the wire,
				// else it stays in flight and is counted as not sent.
				s.res.NotSent += len(moving) - i - 1
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			s.mu.Lock()
			s.published++
			s.mu.Unlock()
		}
		if end {
			return nil
		}
	}
	return nil
}

// checkDestinations refuses the page if a destination not seen before
// knowably does not exist: nothing of the page is published. A preview
// has checked the destinations it found; this catches the others.
func (s *streamer) checkDestinations(moving []Item) error {
	var fresh []Group
	for _, it := range moving {
		if !s.checked[it.Dest] {
			s.checked[it.Dest] = true
			fresh = append(fresh, Group{Dest: it.Dest, Count: 1})
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	return CheckDestinations(s.env.Conn, s.op.Request, fresh)
}

// dedupe removes twins of recorded confirms: recorded first, then acked.
func (s *streamer) dedupe(ctx context.Context, twins []flight) error {
	if len(twins) == 0 {
		return nil
	}
	if err := s.log.outcome(ctx, audit.OutcomeDeduplicated, twins, nil); err != nil {
		return fmt.Errorf("%w (%s): recording removed twins: %v", ErrAuditUnavailable, s.env.Audit.Describe(), err)
	}
	for _, fl := range twins {
		if err := s.src.Ack(fl.tag); err != nil {
			return fmt.Errorf("%w: %v", ErrSessionLost, err)
		}
		s.res.Deduplicated++
	}
	return nil
}

func withoutBody(d dlq.DeadLetter) dlq.DeadLetter {
	d.Body = nil
	return d
}

// settle takes every settlement as it comes: a confirm joins the batch
// recorded write-ahead and then acked; a return or a nack stops
// publishing, since the destination does not take the messages.
func (s *streamer) settle(ctx context.Context, pub *Publisher, stop context.CancelCauseFunc) error {
	b := &batches{s: s, ctx: ctx}
	tick := time.NewTicker(recordAfter)
	defer tick.Stop()
	for {
		select {
		case r, ok := <-pub.Results():
			if !ok {
				return b.flushAll()
			}
			s.mu.Lock()
			fl := s.inFlight[r.Ref]
			delete(s.inFlight, r.Ref)
			s.rep.count(r.Outcome, s.published)
			s.mu.Unlock()
			if r.Outcome != Confirmed {
				// Its source stays in the DLQ: no record can make it a twin.
				<-s.unrecorded
			}
			switch r.Outcome {
			case Confirmed:
				b.confirmed = append(b.confirmed, fl)
			case Returned:
				s.res.Returned++
				b.add(audit.OutcomeReturned, fl, fmt.Sprintf("%d %s", r.ReplyCode, r.ReplyText))
				stop(fmt.Errorf("%w: %s did not route a copy (%d %s); publishing stopped and the rest stays in %s",
					errRefused, fl.dest, r.ReplyCode, r.ReplyText, s.op.Request.Queue))
			case Nacked:
				s.res.Nacked++
				b.add(audit.OutcomeNacked, fl, "")
				stop(fmt.Errorf("%w: the broker refused a copy for %s (nack: full or unavailable); publishing stopped and the rest stays in %s",
					errRefused, fl.dest, s.op.Request.Queue))
			default:
				s.res.Unknown++
				b.add(audit.OutcomeUnknown, fl, errText(r.Err))
			}
			if len(b.confirmed) >= recordEvery {
				if err := b.flushConfirmed(); err != nil {
					stop(err)
				}
			}
		case <-tick.C:
			if err := b.flushConfirmed(); err != nil {
				stop(err)
			}
		}
	}
}

// operationOf is the operation that published d, if warren did.
func operationOf(d dlq.DeadLetter) string {
	op, _ := d.Headers[HeaderOperation].(string)
	return op
}

// errRefused means the destination did not take a copy.
var errRefused = errors.New("destination refused the messages")

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// batches gathers settled messages into records.
type batches struct {
	s         *streamer
	ctx       context.Context
	confirmed []flight
	others    map[string][]flight
	replies   map[string][]string
	unproven  int // acks sent since the last proof
	failed    error
}

func (b *batches) add(outcome string, fl flight, reply string) {
	if b.others == nil {
		b.others, b.replies = map[string][]flight{}, map[string][]string{}
	}
	b.others[outcome] = append(b.others[outcome], fl)
	b.replies[outcome] = append(b.replies[outcome], reply)
	if len(b.others[outcome]) >= recordEvery {
		b.flushOther(outcome)
	}
}

// flushConfirmed records the batch, then acks its source deliveries: a
// crash between the two leaves copies whose twins in the DLQ the audit
// log names, so `dlq resume` removes them. Every syncEvery acks are
// proven by a round trip; an ack that cannot be proven leaves a twin.
func (b *batches) flushConfirmed() error {
	if len(b.confirmed) == 0 || b.failed != nil {
		return b.failed
	}
	batch := b.confirmed
	b.confirmed = nil
	s := b.s
	defer func() {
		for range batch {
			<-s.unrecorded
		}
	}()
	if err := s.log.outcome(b.ctx, audit.OutcomeConfirmed, batch, nil); err != nil {
		s.res.Confirmed += len(batch)
		s.res.AckFailed += len(batch)
		b.failed = fmt.Errorf("%w (%s): recording confirmed messages: %v", ErrAuditUnavailable, s.env.Audit.Describe(), err)
		return b.failed
	}
	s.res.Confirmed += len(batch)
	tags := make([]uint64, len(batch))
	for i, fl := range batch {
		tags[i] = fl.tag
	}
	if err := s.src.AckAll(tags); err != nil {
		// Some acks may have gone out before the failure: none is
		// counted as moved, and resume tells twins by the records.
		s.res.AckFailed += len(batch)
		b.failed = fmt.Errorf("%w: %v", ErrSessionLost, err)
		return b.failed
	}
	for _, fl := range batch {
		s.res.Moved++
		b.unproven++
		countDrops(s.res, fl)
		if s.twins != nil {
			s.twins.add(fl)
		}
	}
	if b.unproven >= syncEvery {
		return b.prove()
	}
	return nil
}

func (b *batches) prove() error {
	if b.unproven == 0 {
		return nil
	}
	if err := b.s.src.Sync(); err != nil {
		b.s.res.Moved -= b.unproven
		b.s.res.AckFailed += b.unproven
		b.failed = fmt.Errorf("%w: %v", ErrSessionLost, err)
		return b.failed
	}
	b.unproven = 0
	return nil
}

func (b *batches) flushOther(outcome string) {
	all := b.others[outcome]
	if len(all) == 0 {
		return
	}
	if err := b.s.log.outcome(b.ctx, outcome, all, b.replies[outcome]); err != nil && b.failed == nil {
		b.failed = fmt.Errorf("%w (%s): recording %s messages: %v", ErrAuditUnavailable, b.s.env.Audit.Describe(), outcome, err)
	}
	b.others[outcome], b.replies[outcome] = nil, nil
}

func (b *batches) flushAll() error {
	err := b.flushConfirmed()
	if err == nil {
		err = b.prove()
	}
	for outcome := range b.others {
		b.flushOther(outcome)
	}
	if err == nil {
		err = b.failed
	}
	return err
}

func countDrops(res *Result, fl flight) {
	if fl.userIDDropped != "" {
		res.UserIDDropped++
	}
	if fl.expDropped {
		res.ExpirationDropped++
	}
}

package actions

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
)

// Walk is an operation over a whole queue, or its first Limit
// messages: every message is read, decided, and moved or kept as it
// arrives, so memory is bounded by the windows, not by the queue.
type Walk struct {
	Request Request
	// Limit is N, the messages the queue held when the operator answered
	// the prompt; a message that dies again during the run is past it.
	Limit int
	// Expect is how many the preview said would move, and Groups where
	// to: for progress and the intent record. ExpectRead says Expect is
	// how many are to be read instead: no preview counted what moves.
	Expect     int
	ExpectRead bool
	Groups     []Group
	Lookup     Lookup
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
	// Gate, when set, is asked before each copy goes out: a staged
	// replay's canary and ramp, the consumers' pace. A *HaltError from
	// it halts the run: what is in flight settles, the rest stays, and
	// the operation is left open with a halted record, for `dlq resume`.
	Gate Gate
	// Run, when set, marks each copy with this run (x-warren-run): the
	// copies of this run that die again stay in the DLQ, while those of
	// an earlier run of the operation (a halted one) are replayed again.
	Run string
	// Staged is what the intent records of the staging: canary,
	// canary_wait, halt_at, pace. Detail is more for the intent (an
	// import's file and its sha256).
	Staged map[string]string
	Detail map[string]string
}

// recordEvery bounds how many settled messages wait for their record:
// confirms are recorded write-ahead, one record (and one sync of the
// store) per batch, before their source deliveries are acked.
const (
	recordEvery = 128
	recordAfter = 20 * time.Millisecond
)

// RunWalk carries out op over src (docs/ARCHITECTURE.md §4.4): an intent
// record, then page by page the inbox asked once, each letter decided, a
// write-ahead record of what is about to be published, the copies
// published with confirms and mandatory within the window; each confirm
// recorded before its source delivery is acked; the first return or nack
// stops publishing, since the destination does not take the messages; a
// cancelled ctx stops publishing too. What is in flight is settled, and
// the final record written. The caller closes src, which returns every
// delivery not acked — kept, returned, nacked, unknown or never sent —
// with one bulk nack.
func RunWalk(ctx context.Context, src Source, op Walk, env Env, progress func(Progress)) (*Result, error) {
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
	res.kept.Request = req
	s := &walker{op: op, env: env, src: src, res: res, progress: progress}
	s.log = &walkLog{store: env.Audit, sign: env.Checkpoint, op: operation(plan, env)}
	if t := fixedTarget(req); len(op.Groups) == 0 && t != "" {
		// Not previewed, yet every copy goes to one place.
		s.log.op.Target = t
	}
	if op.Resume != nil {
		s.log.op.ID, s.log.op.Target = op.Resume.Op.ID, op.Resume.Op.Target
	}
	res.Operation = s.log.op.ID
	if r, ok := op.Gate.(*Ramp); ok {
		r.Record = func(v domain.StageVerdict) error {
			if err := s.log.stage(ctx, v); err != nil {
				// As every record's: the operation stays open.
				return fmt.Errorf("%w (%s): recording the verdict of %s: %v", ErrAuditUnavailable, env.Audit.Describe(), v.Name(), err)
			}
			return nil
		}
		defer func() {
			res.Stages = r.Verdicts()
			if len(res.Stages) > 0 {
				res.Canary = &res.Stages[0]
			}
		}()
	}
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
	var halt *HaltError
	if errors.As(runErr, &halt) {
		// Nothing rolls back: the operation stays open, halted, for
		// `dlq resume` once the consumer is fixed.
		res.Halted, res.HaltReason = true, halt.Reason
		return res, errors.Join(runErr, s.log.halted(ctx, res, s.unsent, halt))
	}
	if errors.Is(runErr, ErrSessionLost) || errors.Is(runErr, ErrAuditUnavailable) {
		// Acks may not have taken effect, or their records may be
		// missing: the operation stays open, for `dlq resume`. What
		// was recorded publishing and never sent is recorded so, when
		// the store takes it, or a resume would count it as possibly
		// published twice.
		left := fmt.Errorf("%w; the operation %s is left incomplete: `warren dlq resume %s` finishes it", runErr, res.Operation, req.Queue)
		if err := s.log.notSent(ctx, s.unsent); err != nil {
			return res, errors.Join(left, fmt.Errorf("recording %d messages never sent: %w", len(s.unsent), err))
		}
		return res, left
	}
	if req.Action == ActionImport && (runErr != nil || res.Cancelled || res.Taken < op.Expect || res.Left() > 0) {
		// An import's file keeps every message, those it never read
		// too: an import that did not publish the whole file was
		// interrupted, not finished, whatever stopped it. It stays open,
		// as a killed one does, and running it again finishes it,
		// skipping what was confirmed; a final record would make
		// running it again publish the confirmed messages twice.
		res.Incomplete = true
		return res, errors.Join(runErr, s.log.leaveOpen(ctx, s.unsent))
	}
	if err := s.log.notSent(ctx, s.unsent); err != nil {
		return res, errors.Join(runErr, err)
	}
	return res, errors.Join(runErr, s.log.final(ctx, res, runErr))
}

// closeAndSweep closes the source, then, where the operation asks for it
// and copies were confirmed, sweeps the queue for their twins.
func (s *walker) closeAndSweep(ctx context.Context) error {
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

// walker is one walk in progress.
type walker struct {
	op       Walk
	env      Env
	src      Source
	log      *walkLog
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
	// stop stops publishing, with the reason.
	stop context.CancelCauseFunc
	// unsent are the messages recorded as publishing that never went
	// out: a halt records them, so a resume does not take them for
	// possible duplicates.
	unsent []flight
}

// flight is what is kept of a published message until its outcome is
// recorded: its delivery tag and what the audit log names it by, never
// its body or headers (a window of them would be most of the heap).
type flight struct {
	tag           uint64
	messageID     string
	logicalID     string
	size          int
	digest        string
	death         string // DeathDigest
	dest          Destination
	userIDDropped string
	expDropped    bool
	run           string // the source's x-warren-run
}

func (s *walker) run(ctx context.Context) error {
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
	s.rep = reporter{fn: s.progress, p: Progress{Operation: s.res.Operation, Total: s.op.Expect, OfRead: s.op.ExpectRead}}
	s.log.j = newJournal(ctx, s.env.Audit)
	defer func() {
		s.log.j.close()
		s.log.j = nil
	}()
	sendCtx, stopSending := context.WithCancelCause(ctx)
	defer stopSending(nil)
	settled := make(chan error, 1)
	s.stop = stopSending
	go func() { settled <- s.settle(ctx, pub) }()

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
	// What is still in flight never reached the broker: recorded as
	// publishing, it is recorded not sent, else a resume would count
	// it a possible duplicate.
	s.res.NotSent += len(s.inFlight)
	for _, ref := range slices.Sorted(maps.Keys(s.inFlight)) {
		s.unsent = append(s.unsent, s.inFlight[ref])
	}
	s.res.Selected = s.res.Confirmed + s.res.Returned + s.res.Nacked + s.res.Unknown
	s.rep.finish(s.published)
	cause := context.Cause(sendCtx)
	switch {
	case settleErr != nil:
		return settleErr
	case errors.Is(cause, ErrSessionLost), errors.Is(cause, ErrAuditUnavailable), errors.Is(cause, errRefused), errors.Is(cause, ErrHalted):
		return cause
	case errors.Is(sendErr, ErrSessionLost), errors.Is(sendErr, ErrNoDestination), errors.Is(sendErr, ErrDestinationGone):
		return sendErr
	case s.res.Cancelled:
		return nil
	case pub.why(sendErr) != nil:
		// A channel the broker closed: the copies in flight are unknown,
		// and this is why, whether or not every copy went out before.
		return stopped(s.published, "", pub.why(sendErr), s.rest())
	case drainErr != nil:
		return fmt.Errorf("confirms still missing after %s: %w", s.env.SettleTimeout, drainErr)
	}
	return closeErr
}

// send reads, decides and publishes page by page until the source ends
// or publishing must stop. The pages overlap: while one page's
// write-ahead record is being stored, the page before it is published.
// No copy is published before its page's record is durable.
func (s *walker) send(ctx context.Context, pub *Publisher) error {
	p := &pager{s: s, pub: pub, st: stamp{action: s.op.Request.Action, operation: s.res.Operation, run: s.op.Run,
		connUser: s.env.ConnUser, reason: s.op.Request.Reason, by: s.env.Operator}}
	if r := s.op.Request.Rate; r > 0 {
		p.limiter = rate.NewLimiter(rate.Limit(r), max(1, int(r/50)))
	}
	var waiting *page // recorded (or being recorded), not yet published
	defer func() {
		if waiting != nil {
			// Stopped before its turn: none of it reached the broker.
			s.notSent(waiting, 0)
		}
	}()
	for ctx.Err() == nil {
		next, end, err := p.read(ctx)
		if err != nil {
			if waiting != nil && !errors.Is(err, ErrSessionLost) {
				// The page before is recorded as being published: it
				// goes out, so the record stays true. Not once the
				// feed's channel is gone: its sources are back in the
				// queue, and a copy would be a duplicate.
				w := waiting
				waiting = nil
				err = errors.Join(err, p.publish(ctx, w))
			}
			return err
		}
		if waiting != nil {
			w := waiting
			waiting = nil
			if err := p.publish(ctx, w); err != nil {
				if next != nil {
					s.notSent(next, 0)
				}
				return err
			}
		}
		waiting = next
		if end {
			break
		}
	}
	if waiting != nil && ctx.Err() == nil {
		w := waiting
		waiting = nil
		if err := p.publish(ctx, w); err != nil {
			return err
		}
	}
	if f, ok := s.op.Gate.(interface{ Finish(context.Context) error }); ok && ctx.Err() == nil {
		// The last stage's figures, as they stand.
		if err := f.Finish(ctx); err != nil {
			return fmt.Errorf("%w (%s): recording the last stage: %v", ErrAuditUnavailable, s.env.Audit.Describe(), err)
		}
	}
	return nil
}

// notSent counts pg's messages from i on as never published, and keeps
// their names for a halt's record.
func (s *walker) notSent(pg *page, i int) {
	s.res.NotSent += len(pg.moving) - i
	for j := i; j < len(pg.moving); j++ {
		s.unsent = append(s.unsent, flightOf(pg.moving[j].Letter, pg.digests[j], pg.deaths[j]))
	}
}

// page is one page's moving messages and the store's answer on its
// write-ahead record.
type page struct {
	moving   []Item
	digests  []string // parallel to moving
	deaths   []string // parallel to moving: DeathDigest
	recorded chan error
}

// pager reads, decides and publishes the pages of one walk.
type pager struct {
	s       *walker
	pub     *Publisher
	st      stamp
	limiter *rate.Limiter
	ref     int
}

// read takes the next page from the source, decides each letter, and
// hands the write-ahead record of its moving messages to the journal. It
// returns a nil page when nothing of it moves.
func (p *pager) read(ctx context.Context) (*page, bool, error) {
	s := p.s
	n := pageSize
	if r := s.op.Request.Rate; r > 0 {
		// A page is recorded before it goes out: at a rate, a page of a
		// second's copies keeps what a kill leaves recorded and unsent
		// (counted possible duplicates by the resume) to what was due.
		n = min(n, max(1, int(math.Ceil(r))))
	}
	letters, end, err := s.src.Next(ctx, n)
	if err != nil {
		if ctx.Err() != nil {
			return nil, true, nil
		}
		// The channel holding the deliveries is gone: acks sent since
		// the last proof may not have taken effect.
		return nil, true, fmt.Errorf("%w: %v", ErrSessionLost, err)
	}
	s.res.Taken += len(letters)
	s.mu.Lock()
	s.rep.read(s.res.Taken, s.published)
	s.mu.Unlock()
	applied, known := lookupPage(ctx, s.op.Lookup, letters)
	moving := make([]Item, 0, len(letters))
	var twins []flight
	for _, d := range letters {
		if s.ownCopy(d) {
			// A copy of this run died again: it stays. (A copy of a
			// halted run of the operation is replayed again.)
			s.res.Kept++
			s.res.diedAgain++
			continue
		}
		if r := s.op.Resume; r != nil {
			t := TwinOf(d)
			switch r.match(t) {
			case twinOfConfirmed:
				// Its copy was confirmed: this is the twin to remove.
				twins = append(twins, flightOf(d, t.BodySHA256, t.Death))
				continue
			case maybePublished:
				s.res.PossibleDuplicates++
			}
		}
		dest, skip, err := s.op.Request.Decide(d, appliedIn(applied, known, d))
		switch {
		case skip == SkipApplied:
			s.res.SkippedApplied++
		case skip != Selected:
			s.res.Kept++
			s.res.kept.count(skip, err)
		default:
			moving = append(moving, Item{Letter: d, Dest: dest})
		}
	}
	s.src.Keep(len(letters) - len(moving) - len(twins))
	if err := s.dedupe(ctx, twins); err != nil {
		s.res.NotSent += len(moving)
		return nil, true, err
	}
	if err := s.checkDestinations(moving); err != nil {
		s.res.NotSent += len(moving)
		return nil, true, err
	}
	if len(moving) == 0 {
		return nil, end, nil
	}
	pg := &page{moving: moving, digests: make([]string, len(moving)), deaths: make([]string, len(moving)), recorded: make(chan error, 1)}
	for i, it := range moving {
		pg.digests[i] = it.Letter.BodyDigest
		if pg.digests[i] == "" {
			pg.digests[i] = audit.BodyDigest(it.Letter.Body)
		}
		pg.deaths[i] = DeathDigest(it.Letter)
	}
	s.log.j.submit(s.log.publishingRecord(moving, pg.digests, pg.deaths), func(err error) { pg.recorded <- err })
	return pg, end, nil
}

// publish waits for the page's write-ahead record, then publishes its
// messages within the window.
func (p *pager) publish(ctx context.Context, pg *page) error {
	s := p.s
	if err := <-pg.recorded; err != nil {
		s.notSent(pg, 0)
		return fmt.Errorf("%w (%s): recording what is about to be published: %v", ErrAuditUnavailable, s.env.Audit.Describe(), err)
	}
	for i, it := range pg.moving {
		if p.limiter != nil {
			if err := p.limiter.Wait(ctx); err != nil {
				s.notSent(pg, i)
				return nil
			}
		}
		if g := s.op.Gate; g != nil {
			if err := g.Admit(ctx, Copy{LogicalID: it.Letter.LogicalID, Dest: it.Dest}); err != nil {
				s.notSent(pg, i)
				if errors.Is(err, ErrHalted) {
					s.stop(err)
					return nil
				}
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
		}
		select {
		case s.unrecorded <- struct{}{}:
		case <-ctx.Done():
			s.notSent(pg, i)
			return nil
		}
		p.st.at = s.env.Now()
		cp := makeCopy(it.Letter, p.st)
		exact, digest := s.op.Request.Action == ActionImport, ""
		if exact {
			digest = pg.digests[i] // an exact copy's body is the letter's
		}
		fl := flightOf(it.Letter, pg.digests[i], pg.deaths[i])
		fl.dest, fl.userIDDropped, fl.expDropped = it.Dest, cp.userIDDropped, cp.expirationDropped
		ref := p.ref
		p.ref++
		s.mu.Lock()
		s.inFlight[ref] = fl
		s.mu.Unlock()
		err := p.pub.Publish(ctx, Outgoing{Ref: ref, Exchange: it.Dest.Exchange, RoutingKey: it.Dest.RoutingKey, Msg: cp.msg,
			OwnHeaders: true, Exact: exact, BodyDigest: digest})
		if err != nil {
			// This one is settled as unknown if it reached the wire,
			// else it stays in flight and is counted as not sent.
			s.notSent(pg, i+1)
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		s.mu.Lock()
		s.published++
		s.mu.Unlock()
	}
	return nil
}

// checkDestinations refuses the page if a destination not seen before
// knowably does not exist: nothing of the page is published. A preview
// has checked the destinations it found; this catches the others.
func (s *walker) checkDestinations(moving []Item) error {
	var fresh []Group
	at := map[Destination]int{} // a fresh destination's place in fresh
	for _, it := range moving {
		if i, ok := at[it.Dest]; ok {
			fresh[i].Count++ // the page's messages going there
			continue
		}
		if !s.checked[it.Dest] {
			s.checked[it.Dest] = true
			at[it.Dest] = len(fresh)
			fresh = append(fresh, Group{Dest: it.Dest, Count: 1})
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	missing, err := missingDestinations(s.env.Conn, s.op.Request, fresh, true)
	if err != nil || missing == nil {
		return err
	}
	s.mu.Lock()
	published := s.published
	s.mu.Unlock()
	if published > 0 {
		// Found missing on a later page: the copies before it went
		// out, so "nothing was changed" would be false, and it is no
		// refusal but a run stopped midway.
		return fmt.Errorf("%w midway, once earlier pages' copies had gone out (the result counts them): %w; the messages not moved stay in the DLQ",
			ErrDestinationGone, missing)
	}
	return fmt.Errorf("%w: %w", ErrNoDestination, missing)
}

// ErrDestinationGone means a destination found missing mid-walk, once
// copies had gone out: the run stopped there.
var ErrDestinationGone = errors.New("destination missing")

// dedupe removes twins of recorded confirms: recorded first, then acked.
func (s *walker) dedupe(ctx context.Context, twins []flight) error {
	if len(twins) == 0 {
		return nil
	}
	if err := s.log.outcome(ctx, domain.OutcomeDeduplicated, twins, nil); err != nil {
		return fmt.Errorf("%w (%s): recording removed twins: %v", ErrAuditUnavailable, s.env.Audit.Describe(), err)
	}
	for _, fl := range twins {
		if err := s.src.Ack(fl.tag); err != nil {
			return fmt.Errorf("%w: %v", ErrSessionLost, err)
		}
	}
	// Proven at once: the final record must not say twins were removed
	// whose acks the broker never took.
	if err := s.src.Sync(); err != nil {
		return fmt.Errorf("%w: %v", ErrSessionLost, err)
	}
	s.res.Deduplicated += len(twins)
	return nil
}

// flightOf is what is kept of d, whose body's sha256 is digest and
// whose DeathDigest is death.
func flightOf(d domain.DeadLetter, digest, death string) flight {
	return flight{tag: d.DeliveryTag, messageID: d.MessageID, logicalID: d.LogicalID, size: d.Size, digest: digest, death: death, run: runOf(d)}
}

// settle takes every settlement as it comes: a confirm joins the batch
// recorded write-ahead and then acked; a return or a nack stops
// publishing, since the destination does not take the messages.
func (s *walker) settle(ctx context.Context, pub *Publisher) error {
	b := &batches{s: s}
	stop := s.stop
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
				b.add(domain.OutcomeReturned, fl, fmt.Sprintf("%d %s", r.ReplyCode, r.ReplyText))
				stop(fmt.Errorf("%w: %s did not route a copy (%d %s); publishing stopped and %s",
					errRefused, fl.dest, r.ReplyCode, r.ReplyText, s.rest()))
			case Nacked:
				s.res.Nacked++
				b.add(domain.OutcomeNacked, fl, "")
				stop(fmt.Errorf("%w: the broker refused a copy for %s (nack: full or unavailable); publishing stopped and %s",
					errRefused, fl.dest, s.rest()))
			default:
				s.res.Unknown++
				b.add(domain.OutcomeUnknown, fl, errText(r.Err))
			}
			// A batch goes to the journal once it is full or no other
			// settlement is waiting: the journal groups what comes in
			// while it syncs, so a copy holds its slot of the window
			// for a sync or two, not for a batch to fill.
			if len(b.confirmed) >= recordEvery || (len(b.confirmed) > 0 && len(pub.Results()) == 0) {
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

// rest says where what a stop leaves unpublished is: in the DLQ, or in
// an import's file.
func (s *walker) rest() string {
	if s.op.Request.Action == ActionImport {
		return "the rest is not published"
	}
	return "the rest stays in " + s.op.Request.Queue
}

// operationOf is the operation that published d, if warren did.
func operationOf(d domain.DeadLetter) string {
	op, _ := d.Headers[HeaderOperation].(string)
	return op
}

// ownCopy reports a copy this run published that died again.
func (s *walker) ownCopy(d domain.DeadLetter) bool {
	return operationOf(d) == s.res.Operation && runOf(d) == s.op.Run
}

// runOf is the run of an operation that published d; "" when the copy
// names none.
func runOf(d domain.DeadLetter) string {
	run, _ := d.Headers[HeaderRun].(string)
	return run
}

// errRefused means the destination did not take a copy.
var errRefused = errors.New("destination refused the messages")

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// batches gathers settled messages into records, handed to the journal.
type batches struct {
	s         *walker
	confirmed []flight
	others    map[string][]flight
	replies   map[string][]string
	unproven  int // acks sent since the last proof; the journal's

	// mu guards failed, proving, and the counts a proof corrects.
	mu      sync.Mutex
	failed  error
	proving bool
	proofs  sync.WaitGroup
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

func (b *batches) err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.failed
}

func (b *batches) fail(err error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failed == nil {
		b.failed = err
	}
	return b.failed
}

// flushConfirmed hands the batch's record to the journal, which acks its
// source deliveries once the record is durable (recorded): a crash
// between the two leaves copies whose twins in the DLQ the audit log
// names, so `dlq resume` removes them.
func (b *batches) flushConfirmed() error {
	if len(b.confirmed) == 0 {
		return b.err()
	}
	batch := b.confirmed
	b.confirmed = nil
	b.s.log.j.submit(b.s.log.outcomeRecord(domain.OutcomeConfirmed, batch, nil), func(err error) {
		if err := b.recorded(batch, err); err != nil {
			b.s.stop(err)
		}
	})
	return b.err()
}

// recorded runs on the journal's goroutine once the batch's record is
// stored (err nil) or cannot be: it acks the batch's source deliveries
// only in the first case. Every syncEvery acks are proven by a round
// trip, one at a time; an ack that cannot be proven leaves a twin.
func (b *batches) recorded(batch []flight, err error) error {
	s := b.s
	defer b.release(batch)
	if prior := b.err(); prior != nil {
		s.res.Confirmed += len(batch)
		b.ackFailed(len(batch))
		return prior
	}
	s.res.Confirmed += len(batch)
	if err != nil {
		b.ackFailed(len(batch))
		return b.fail(fmt.Errorf("%w (%s): recording confirmed messages: %v", ErrAuditUnavailable, s.env.Audit.Describe(), err))
	}
	tags := make([]uint64, len(batch))
	for i, fl := range batch {
		tags[i] = fl.tag
	}
	if err := s.src.AckAll(tags); err != nil {
		// Some acks may have gone out before the failure: none is
		// counted as moved, and resume tells twins by the records.
		b.ackFailed(len(batch))
		return b.fail(fmt.Errorf("%w: %v", ErrSessionLost, err))
	}
	b.mu.Lock()
	for _, fl := range batch {
		s.res.Moved++
		countDrops(s.res, fl)
		if s.twins != nil {
			s.twins.add(fl)
		}
	}
	b.unproven += len(batch)
	if b.unproven >= syncEvery && !b.proving {
		// Proven off the journal's path: the next records and acks do
		// not wait for the round trip.
		n := b.unproven
		b.unproven, b.proving = 0, true
		b.proofs.Add(1)
		go func() {
			defer b.proofs.Done()
			b.proven(n, s.src.Sync())
		}()
	}
	b.mu.Unlock()
	return nil
}

func (b *batches) ackFailed(n int) {
	b.mu.Lock()
	b.s.res.AckFailed += n
	b.mu.Unlock()
}

// proven settles a proof of n acks: if the round trip failed, they may
// not have taken effect.
func (b *batches) proven(n int, err error) {
	b.mu.Lock()
	b.proving = false
	if err != nil {
		b.s.res.Moved -= n
		b.s.res.AckFailed += n
		if b.failed == nil {
			b.failed = fmt.Errorf("%w: %v", ErrSessionLost, err)
		}
		err = b.failed
	}
	b.mu.Unlock()
	if err != nil {
		b.s.stop(err)
	}
}

// release frees the window's slots of a batch whose outcome is recorded,
// or will never be.
func (b *batches) release(batch []flight) {
	for range batch {
		<-b.s.unrecorded
	}
}

// prove proves the acks not proven yet, once no proof is in flight.
func (b *batches) prove() error {
	b.proofs.Wait()
	if b.unproven == 0 {
		return b.err()
	}
	n := b.unproven
	b.unproven = 0
	b.proven(n, b.s.src.Sync())
	return b.err()
}

func (b *batches) flushOther(outcome string) {
	all := b.others[outcome]
	if len(all) == 0 {
		return
	}
	b.s.log.j.submit(b.s.log.outcomeRecord(outcome, all, b.replies[outcome]), func(err error) {
		if err != nil {
			b.fail(fmt.Errorf("%w (%s): recording %s messages: %v", ErrAuditUnavailable, b.s.env.Audit.Describe(), outcome, err))
		}
	})
	b.others[outcome], b.replies[outcome] = nil, nil
}

// flushAll hands in what is left, waits for the journal to store it and
// send its acks, and proves the last acks. It flushes the journal rather
// than closing it: the publisher's channel may be gone while the walk
// still reads a page, whose record must find the journal open.
func (b *batches) flushAll() error {
	_ = b.flushConfirmed()
	for outcome := range b.others {
		b.flushOther(outcome)
	}
	b.s.log.j.flush()
	if err := b.err(); err != nil {
		// A proof in flight may still find its acks unproven: the
		// counts are final only once it is done.
		b.proofs.Wait()
		return err
	}
	return b.prove()
}

func countDrops(res *Result, fl flight) {
	if fl.userIDDropped != "" {
		res.UserIDDropped++
	}
	if fl.expDropped {
		res.ExpirationDropped++
	}
}

// fixedTarget is where every copy of req goes when that is known before
// any message is read: a quarantine's parking queue, or a --to with its
// routing key; "" when each message's own origin or key decides.
func fixedTarget(req Request) string {
	switch {
	case req.Action == ActionQuarantine && req.Parking != "":
		return Destination{RoutingKey: req.Parking}.Target()
	case req.To != nil && !req.To.KeepKey:
		return Destination{Exchange: req.To.Exchange, RoutingKey: req.To.RoutingKey}.Target()
	}
	return ""
}

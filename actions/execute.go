package actions

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"golang.org/x/time/rate"

	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
)

// Defaults of Env.
const (
	// DefaultWindow is the confirm window. Keep it well below the browse
	// session's prefetch: acks wait for confirms, so a prefetch equal to
	// the window starves the deliveries (docs/ARCHITECTURE.md §4.4).
	DefaultWindow = 2048
	// DefaultSettleTimeout bounds the wait for in-flight confirms after a
	// cancel or a failure; what is still unconfirmed then is unknown.
	DefaultSettleTimeout = 30 * time.Second
	progressEvery        = 100 * time.Millisecond
)

// NotSent is the outcome of a selected message that was never published
// (the operation was cancelled or the channel was lost first). It stays in
// the DLQ, and unlike Unknown it is certainly not at the destination.
const NotSent Outcome = "not_sent"

// ErrAuditUnavailable means the audit store could not take the intent
// record, so the operation did not start and no message moved.
var ErrAuditUnavailable = errors.New("audit store unavailable")

// ErrSessionLost means the browse session stopped holding the plan's
// deliveries mid-operation (its channel died, or it was closed): an ack
// or return failed. The broker takes back what a dead session held, so
// publishing stopped, since a copy of a message already back in the DLQ
// would exist twice.
var ErrSessionLost = errors.New("browse session no longer holds the messages; publishing stopped")

// Holder is the browse session that holds the plan's deliveries; acks and
// returns must happen on the channel the deliveries came from.
type Holder interface {
	Ack(tag uint64) error    // one delivery, never multiple
	Return(tag uint64) error // basic.nack with requeue, one delivery
	// Sync makes a round trip on the browse channel: nil proves that the
	// acks sent before it took effect.
	Sync() error
}

// syncEvery is how many acks may await proof (a Sync) at once; if the
// browse channel dies, at most this many confirmed messages are unknown.
const syncEvery = 256

// Env is what Execute acts with.
type Env struct {
	// Conn opens the dedicated confirm channel (and the parking queue).
	Conn    *amqp.Connection
	Session Holder
	// Stream says the source is a stream: nothing can be removed from it,
	// so offsets are recorded instead of acks.
	Stream bool
	Audit  audit.Store
	// Checkpoint, when set, signs a checkpoint over the audit log's
	// head after every operation's final record.
	Checkpoint *audit.SigningKey
	// Who and where, for the audit log and the quarantine headers.
	Operator string
	Host     string
	Context  string
	// ConnUser is the user Conn logged in as; a foreign user_id is dropped.
	ConnUser string
	// Optional; zero values take the defaults above.
	Window        int
	SettleTimeout time.Duration
	Now           func() time.Time
	OperationID   string
}

// Progress is a running count, reported at most every 100 ms and once at
// the end.
type Progress struct {
	Operation string
	// Total is how many are expected to move, or, with OfRead, how many
	// are to be read (no preview counted those that move); Read is how
	// many were read so far.
	Total     int
	OfRead    bool
	Read      int
	Published int
	Confirmed int
	Returned  int
	Nacked    int
	Unknown   int
	Done      bool
}

// Result is what an operation did.
type Result struct {
	domain.Counts
	// AckFailed counts confirmed copies whose source delivery could not
	// be acked (browse channel lost): those exist twice now.
	AckFailed         int              `json:"-"`
	UserIDDropped     int              `json:"-"`
	ExpirationDropped int              `json:"-"`
	PeakInFlight      int              `json:"-"`
	Outcomes          []MessageOutcome `json:"-"`
	// SweepNote says what the sweep for twins found, or why it could
	// not look.
	SweepNote string `json:"-"`
	// Head is the audit log's head after the operation's last record,
	// for the operator's ticket; nil when its final record was not
	// written.
	Head *domain.AuditHead `json:"-"`
	// kept tallies, by reason, what a walk read and left in the queue;
	// diedAgain counts the copies of the run itself it read back.
	kept      Preview
	diedAgain int
}

// MessageOutcome is what happened to one selected message.
type MessageOutcome struct {
	Item          int // index into Plan.Items
	Outcome       Outcome
	Reply         string // for Returned: the broker's reply code and text
	Err           error  // for Unknown
	SourceAcked   bool
	AckErr        error
	UserIDDropped string
	ExpDropped    bool
}

// Execute carries out plan (docs/ARCHITECTURE.md §4.4): audit check and intent record
// (a failure there stops everything, wrapped in ErrAuditUnavailable), the
// parking queue declared when missing, every item published on a new
// confirm channel within a bounded window, each source delivery acked on
// the browse session once its copy is confirmed and not returned, all
// others returned to the DLQ, then outcome records and a final record.
// Cancelling ctx stops publishing; what is in flight is still settled
// (within SettleTimeout) and reported.
func Execute(ctx context.Context, plan *Plan, env Env, progress func(Progress)) (*Result, error) {
	env = withDefaults(env)
	res := &Result{Counts: domain.Counts{Selected: plan.Selected(), SkippedApplied: len(plan.SkippedApplied)}}
	if plan.Selected() == 0 {
		return res, nil
	}
	if env.Audit == nil || env.Conn == nil || (env.Session == nil && !env.Stream) {
		return res, errors.New("execute: the audit store, the connection and the browse session are required")
	}
	if err := env.Audit.Check(ctx); err != nil {
		return res, fmt.Errorf("%w (%s): %v; nothing was changed", ErrAuditUnavailable, env.Audit.Describe(), err)
	}
	declareParking, err := preflight(env.Conn, plan)
	if err != nil {
		return res, err
	}
	op := operation(plan, env)
	res.Operation = op.ID
	log := &auditLog{store: env.Audit, sign: env.Checkpoint, op: op, plan: plan, stream: env.Stream}
	if err := log.intent(ctx, env.Window, declareParking); err != nil {
		return res, fmt.Errorf("%w (%s): %v; nothing was changed", ErrAuditUnavailable, env.Audit.Describe(), err)
	}
	if declareParking {
		if err := declareQueue(env.Conn, plan.Parking); err != nil {
			err = fmt.Errorf("declare parking queue %s: %w", plan.Parking, err)
			abandon(plan, env, res)
			return res, errors.Join(err, log.finish(ctx, res, err))
		}
	}
	runErr := run(ctx, plan, env, log, res, progress)
	return res, errors.Join(runErr, log.finish(ctx, res, runErr))
}

func withDefaults(env Env) Env {
	if env.Window <= 0 {
		env.Window = DefaultWindow
	}
	if env.SettleTimeout <= 0 {
		env.SettleTimeout = DefaultSettleTimeout
	}
	if env.Now == nil {
		env.Now = time.Now
	}
	if env.OperationID == "" {
		env.OperationID = audit.NewOperationID()
	}
	return env
}

func operation(plan *Plan, env Env) audit.Op {
	target := "multiple"
	if len(plan.Groups) == 1 {
		target = plan.Groups[0].Dest.Target()
	}
	return audit.Op{
		ID: env.OperationID, Action: plan.Action, Operator: env.Operator, Host: env.Host,
		Context: env.Context, Vhost: plan.Vhost, Queue: plan.Queue, Target: target,
	}
}

// run publishes the plan's items and settles each source delivery as its
// outcome arrives, so acks stream out while later items are still being
// published.
func run(ctx context.Context, plan *Plan, env Env, log *auditLog, res *Result, progress func(Progress)) error {
	opID := log.op.ID
	window := min(env.Window, plan.Selected())
	pub, err := NewPublisher(env.Conn, window)
	if err != nil {
		abandon(plan, env, res)
		return err
	}
	outcomes := notSent(plan)
	var published atomic.Int64
	rep := &reporter{fn: progress, p: Progress{Operation: opID, Total: plan.Selected()}}
	sendCtx, stopSending := context.WithCancelCause(ctx)
	defer stopSending(nil)
	settled := make(chan struct{})
	// Proven moves go to the audit log as they happen, so an operation
	// killed mid-way still says which messages certainly moved.
	acks := &ackProof{env: env, outcomes: outcomes, proven: func(batch []int) error {
		return log.confirmed(ctx, outcomes, batch)
	}}
	go func() {
		defer close(settled)
		for s := range pub.Results() {
			o := &outcomes[s.Ref]
			o.Outcome, o.Err = s.Outcome, s.Err
			if s.Outcome == Returned {
				o.Reply = fmt.Sprintf("%d %s", s.ReplyCode, s.ReplyText)
			}
			err := settleSource(env, plan.Items[s.Ref], o)
			if err != nil {
				stopSending(fmt.Errorf("%w: %v", ErrSessionLost, err))
			} else if o.SourceAcked {
				if err := acks.add(s.Ref); err != nil {
					stopSending(stopCause(err))
				}
			}
			rep.count(o.Outcome, int(published.Load()))
		}
	}()

	var limiter *rate.Limiter
	if plan.Rate > 0 {
		// A burst of 20 ms worth of messages keeps high rates reachable
		// when a timer fires late, without a visible spike.
		limiter = rate.NewLimiter(rate.Limit(plan.Rate), max(1, int(plan.Rate/50)))
	}
	st := stamp{action: plan.Action, operation: opID, connUser: env.ConnUser, reason: plan.Reason, by: env.Operator}
	var sendErr error
	for i, it := range plan.Items {
		if limiter != nil {
			if sendErr = limiter.Wait(sendCtx); sendErr != nil {
				break
			}
		}
		st.at = env.Now()
		cp := makeCopy(it.source(), st)
		outcomes[i].UserIDDropped, outcomes[i].ExpDropped = cp.userIDDropped, cp.expirationDropped
		sendErr = pub.Publish(sendCtx, Outgoing{Ref: i, Exchange: it.Dest.Exchange, RoutingKey: it.Dest.RoutingKey, Msg: cp.msg})
		if sendErr != nil {
			break
		}
		published.Add(1)
	}
	res.Cancelled = ctx.Err() != nil
	// Settle what is in flight even after a cancel: the copies are at the
	// broker already, and only a confirm says whether the source may go.
	settleCtx, cancel := context.WithTimeout(context.Background(), env.SettleTimeout)
	drainErr := pub.Drain(settleCtx)
	cancel()
	closeErr := pub.Close()
	<-settled
	for i := range outcomes {
		if outcomes[i].Outcome == NotSent {
			_ = settleSource(env, plan.Items[i], &outcomes[i])
		}
	}
	if err := acks.prove(); err != nil {
		stopSending(stopCause(err))
	}
	res.PeakInFlight = pub.Peak()
	tally(res, outcomes)
	rep.finish(int(published.Load()))
	if cause := context.Cause(sendCtx); errors.Is(cause, ErrSessionLost) || errors.Is(cause, ErrAuditUnavailable) {
		return cause
	}
	if res.Cancelled {
		return nil
	}
	// A channel the broker closed: the copies in flight are unknown, and
	// this is why, whether or not every copy went out before.
	if sendErr = pub.why(sendErr); sendErr != nil {
		return stopped(int(published.Load()), fmt.Sprintf(" of %d", plan.Selected()), sendErr, "the rest stays in "+plan.Queue)
	}
	if drainErr != nil {
		return fmt.Errorf("confirms still missing after %s: %w", env.SettleTimeout, drainErr)
	}
	return closeErr
}

// settleSource acks the source delivery of a confirmed copy and returns
// every other one to the DLQ. A stream keeps everything: its offset goes
// to the audit log instead.
//
// If the browse channel is gone the broker has requeued the delivery
// already, so a failed return loses nothing; a failed ack leaves the
// message twice, at the destination and back in the DLQ.
func settleSource(env Env, it Item, o *MessageOutcome) error {
	if env.Stream {
		return nil
	}
	tag := it.Letter.DeliveryTag
	if o.Outcome == Confirmed {
		o.AckErr = env.Session.Ack(tag)
		o.SourceAcked = o.AckErr == nil
		if o.AckErr != nil {
			// The copy is at the destination and the source is back in
			// the DLQ (or soon will be): the message may exist twice.
			o.Outcome, o.Err = Unknown, fmt.Errorf("confirmed, but the source ack failed: %w", o.AckErr)
		}
		return o.AckErr
	}
	return env.Session.Return(tag)
}

// stopCause says why publishing stops after a failed proof: the audit
// store refused the record, or the browse session is gone.
func stopCause(err error) error {
	if errors.Is(err, ErrAuditUnavailable) {
		return err
	}
	return fmt.Errorf("%w: %v", ErrSessionLost, err)
}

// ackProof tracks acks the broker has not yet been proven to process. An
// ack gets no reply, and one sent just before the channel dies may never
// take effect: its delivery returns to the DLQ while the copy sits at the
// destination. Only a later round trip on the same channel proves it.
type ackProof struct {
	env      Env
	outcomes []MessageOutcome
	pending  []int
	// proven, when set, is told each batch whose acks were proven.
	proven func(batch []int) error
}

// add records an ack and proves the batch once syncEvery are pending.
func (p *ackProof) add(i int) error {
	p.pending = append(p.pending, i)
	if len(p.pending) < syncEvery {
		return nil
	}
	return p.prove()
}

// prove syncs the browse channel; on failure every pending ack is
// unproven, so its message may exist twice and its outcome is unknown.
func (p *ackProof) prove() error {
	if len(p.pending) == 0 || p.env.Stream {
		return nil
	}
	err := p.env.Session.Sync()
	if err != nil {
		for _, i := range p.pending {
			o := &p.outcomes[i]
			o.Outcome, o.SourceAcked = Unknown, false
			o.AckErr = err
			o.Err = fmt.Errorf("confirmed, but the source ack was not proven before the browse channel failed: %w", err)
		}
	} else if p.proven != nil {
		err = p.proven(append([]int(nil), p.pending...))
	}
	p.pending = p.pending[:0]
	return err
}

// abandon returns every source delivery of a plan that never started.
func abandon(plan *Plan, env Env, res *Result) {
	outcomes := notSent(plan)
	for i := range outcomes {
		_ = settleSource(env, plan.Items[i], &outcomes[i])
	}
	tally(res, outcomes)
}

func notSent(plan *Plan) []MessageOutcome {
	out := make([]MessageOutcome, plan.Selected())
	for i := range out {
		out[i] = MessageOutcome{Item: i, Outcome: NotSent}
	}
	return out
}

func tally(res *Result, outcomes []MessageOutcome) {
	res.Outcomes = outcomes
	for _, o := range outcomes {
		switch o.Outcome {
		case Confirmed:
			res.Confirmed++
		case Returned:
			res.Returned++
		case Nacked:
			res.Nacked++
		case Unknown:
			res.Unknown++
		case NotSent:
			res.NotSent++
		}
		if o.AckErr != nil {
			res.AckFailed++
		}
		if o.UserIDDropped != "" {
			res.UserIDDropped++
		}
		if o.ExpDropped {
			res.ExpirationDropped++
		}
	}
}

// reporter throttles progress callbacks. The settling goroutine counts
// outcomes with it and a walk's reading goroutine its reads, each under
// the walker's mutex; finish runs once both are done.
type reporter struct {
	fn   func(Progress)
	p    Progress
	last time.Time
}

func (r *reporter) count(o Outcome, published int) {
	switch o {
	case Confirmed:
		r.p.Confirmed++
	case Returned:
		r.p.Returned++
	case Nacked:
		r.p.Nacked++
	case Unknown:
		r.p.Unknown++
	}
	r.report(published)
}

// report passes the figures on, at most every progressEvery.
func (r *reporter) report(published int) {
	if r.fn == nil {
		return
	}
	if now := time.Now(); now.Sub(r.last) >= progressEvery {
		r.last = now
		r.p.Published = published
		r.fn(r.p)
	}
}

// read notes that n messages were read in all, reported at most every
// progressEvery as the settles are: a filter that moves few of them
// still shows the run going.
func (r *reporter) read(n, published int) {
	r.p.Read = n
	r.report(published)
}

func (r *reporter) finish(published int) {
	if r.fn == nil {
		return
	}
	r.p.Published, r.p.Done = published, true
	r.fn(r.p)
}

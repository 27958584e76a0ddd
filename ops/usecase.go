package ops

import (
	"context"
	"errors"
	"fmt"
	amqp "github.com/rabbitmq/amqp091-go"
	"sort"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/sources/dlq"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
)

// The use case both front ends call for every operation on dead letters
// (replay, quarantine, a release from a parking queue, an edit, a
// resume): Plan decides what would happen and what the operator must
// answer, touching nothing; Run carries a plan out. The command line
// parses flags, prints the plan and asks; the dashboard shows it and
// asks; neither sequences the steps (docs/ARCHITECTURE.md, "Use cases").

// Scope is what the operator asked for.
type Scope struct {
	Action Action
	Queue  domain.QueueRef

	// Held holds the letters to act on (the dashboard's selection); nil
	// acts on the whole queue, or on its first Limit messages.
	Held    Holder
	Letters []domain.DeadLetter
	Limit   int
	// Unasked says no one is asked (--yes): the plan reads nothing, and
	// the run decides each message as it streams.
	Unasked bool
	// DryRun plans only: a read-only context or an audit store that
	// cannot be written is then no refusal.
	DryRun bool
	// AllowRisk browses a quorum DLQ whose delivery limit a browse counts
	// against (a stream's page is held by a browse).
	AllowRisk bool

	// What narrows and directs the operation: a filter over the
	// letters, a destination override, applied messages included, a
	// rate limit, a quarantine's reason.
	Filter         actions.Matcher
	FilterText     string
	To             *actions.Override
	IncludeApplied bool
	Rate           float64
	Reason         string

	// Operation is the operation a resume finishes; "" takes the latest
	// incomplete one on Queue.
	Operation string
	// Draft and EditorErr are an edit's: the draft StartEdit wrote, and
	// how the operator's editor exited.
	Draft     *EditDraft
	EditorErr error

	// Staging is a replay's canary, ramp, halt share and pace; a resume
	// takes the operation's own, with a fresh canary, unless NoCanary.
	Staging  Staging
	NoCanary bool

	// File is an import's export file; Queue names the vhost it goes
	// to, and To where. StartOver imports the whole file anew where an
	// interrupted import of it would be finished.
	File      string
	StartOver bool
}

// Confirm is what the operator must answer before a plan runs: y, or the
// phrase typed exactly when Why asks for it.
type Confirm struct {
	// Phrase is the queue's name (safe for a terminal) and the count;
	// "" when a y is enough.
	Phrase string
	// Why says why the phrase is asked: a production context, or more
	// messages than the context's threshold.
	Why string
	// File says the phrase names a file (an import's), not a queue.
	File bool
}

// Warning is the line a prompt shows above a typed confirmation; "" when
// none is asked.
func (c Confirm) Warning() string {
	if c.Phrase == "" {
		return ""
	}
	if c.File {
		return c.Why + ": type the file name and the count to confirm"
	}
	return c.Why + ": type the queue name and the count to confirm"
}

// confirmFor is the one rule for typed confirmations: in a production
// context, or above the context's threshold, the operator types the
// queue's name and the count.
func confirmFor(c *config.Context, queue string, n int) Confirm {
	threshold := c.ConfirmThreshold
	if threshold <= 0 {
		threshold = config.DefaultConfirmThreshold
	}
	why := ""
	switch {
	case c.IsProd():
		why = "production context"
	case n > threshold:
		why = "more than " + format.Messages(threshold)
	default:
		return Confirm{}
	}
	return Confirm{Phrase: fmt.Sprintf("%s %d", sanitize.Text(queue), n), Why: why}
}

// Plan is a dry run of an operation, as the prompt shows it; Run carries
// it out. Close it when it will not run (a stream's page is held).
type Plan struct {
	Action Action
	Queue  domain.QueueRef
	// Decided is false for an unasked plan: the run decides each message
	// as it goes, so the counts below are unknown.
	Decided bool
	// Summary is one sentence stating counts and destinations: the
	// prompt's question.
	Summary string
	// Selected is how many messages the operator picked; Publish is how
	// many the plan moves. The rest stay: already applied, quarantined,
	// or without a destination.
	Selected       int
	Publish        int
	SkippedApplied int
	// Filtered is how many a whole-queue plan read that its filter left
	// out (those stay too).
	Filtered     int
	Destinations []Destination
	Bytes        int64
	Rate         float64 // messages per second; 0 means unlimited
	// Warnings are what reading found that the operator should read
	// before answering (a page held of a stream, an inbox that did not
	// answer).
	Warnings []string
	// Lines detail the plan, one line per destination and skip.
	Lines []string
	// Diff is an edit's unified diff of headers and body (untrusted:
	// sanitise before showing it).
	Diff string
	// Confirm is what the operator must answer.
	Confirm Confirm
	// A resume's figures: the recorded confirms whose twins may still be
	// in the DLQ, the copies published without a recorded confirm, and
	// the DLQ's depth when the plan was read.
	Operation          string
	Twins, Unconfirmed int
	Depth              int
	// Staging is how the replay goes out: canary, ramp, pace; the run
	// reads it, so a prompt may change it with Stage. CanStage says the
	// run can be staged at all: a replay or a resume over the whole
	// queue.
	Staging  Staging
	CanStage bool
	// target and groups are a whole-queue plan's, which CheckStaging
	// checks a staging against.
	target *Target
	groups []actions.Group

	run   func(ctx context.Context, progress func(Progress)) (Result, error)
	close func() error
}

// CheckStaging says, before the operator confirms, whether the run
// would refuse st before anything moves: the consumers' pace where a
// destination has no consumer, a canary waited for on destination
// queues no consumer takes from. nil when the plan cannot be staged or
// its destinations are not known yet; the run checks again.
func (o *Ops) CheckStaging(ctx context.Context, p *Plan, st Staging) error {
	if p == nil || !p.CanStage || p.target == nil {
		return nil
	}
	return o.checkStaging(ctx, p.target, p.groups, st)
}

func (o *Ops) checkStaging(ctx context.Context, t *Target, groups []actions.Group, st Staging) error {
	if len(groups) == 0 {
		return nil
	}
	if st.RateAuto {
		if err := o.checkPace(ctx, t, groups); err != nil {
			return err
		}
	}
	if st.Canary > 0 {
		return o.checkCanary(ctx, t, groups, st)
	}
	return nil
}

// Stage sets how the run goes out, as the prompt's answer says: a plan
// that cannot be staged refuses any staging.
func (p *Plan) Stage(st Staging) error {
	if err := st.Validate(); err != nil {
		return err
	}
	if st.Active() && !p.CanStage {
		return errors.New("only a replay of the whole queue can go out with a canary or the consumers' pace")
	}
	p.Staging = st
	return nil
}

// Idle reports a plan that would change nothing: it moves no message
// (a resume still removes twins and closes the operation, and so does
// finishing an interrupted import whose every message was confirmed:
// neither is idle).
func (p *Plan) Idle() bool {
	return p.Decided && p.Publish == 0 && p.Action != Resume && p.Operation == ""
}

// Close releases what the plan holds; a plan that ran holds nothing. A
// closed plan does not run.
func (p *Plan) Close() error {
	if p == nil {
		return nil
	}
	p.run = nil
	if p.close == nil {
		return nil
	}
	c := p.close
	p.close = nil
	return c()
}

// Destination is where some of the messages go.
type Destination struct {
	Name  string // e.g. "queue orders" or "exchange orders / order.created"
	Count int
}

// Plan decides what s would do, touching nothing: the counts, the
// destinations, the question and what the operator must type. Outside a
// dry run it refuses first what Run would refuse: a read-only context,
// an audit store that cannot be written, a parking queue quarantined.
func (o *Ops) Plan(ctx context.Context, s Scope) (*Plan, error) {
	if s.Action == Edit && s.Draft != nil {
		// The draft holds the message's body: planning removes it, a
		// refused plan too.
		defer s.Draft.Discard()
	}
	if err := o.parkingRefusal(s); err != nil {
		return nil, err
	}
	if err := o.stagingRefusal(s); err != nil {
		return nil, err
	}
	if !s.DryRun {
		if err := o.writable(string(s.Action)); err != nil {
			return nil, err
		}
		if err := o.CheckAudit(ctx); err != nil {
			return nil, err
		}
	}
	var (
		p   *Plan
		err error
	)
	switch {
	case s.Action == Edit:
		p, err = o.planEdit(ctx, s)
	case s.Action == Resume:
		p, err = o.planResume(ctx, s)
	case s.Action == Import:
		p, err = o.planImport(ctx, s)
	case s.Held != nil:
		p, err = o.planHeld(ctx, s, s.Held.holder())
	default:
		p, err = o.planQueue(ctx, s)
	}
	if err != nil {
		return nil, err
	}
	p.Action, p.Queue = s.Action, s.Queue
	if s.Action != Resume {
		p.Staging = s.Staging
	}
	if p.Decided {
		p.Confirm = confirmFor(o.c.Context, s.Queue.Name, p.Publish)
		p.Confirm.File = p.Confirm.Phrase != "" && s.Action == Import
	}
	return p, nil
}

// Run carries out a plan; progress is called from the operation's
// goroutines. Cancelling ctx stops publishing: what is in flight
// settles, and everything not moved stays in the DLQ.
func (o *Ops) Run(ctx context.Context, p *Plan, progress func(Progress)) (Result, error) {
	if p == nil || p.run == nil {
		return Result{}, errors.New("no plan to run (Plan makes one)")
	}
	if err := o.writable(string(p.Action)); err != nil {
		return Result{}, err
	}
	run := p.run
	p.run = nil // a plan runs once
	defer p.Close()
	return run(ctx, progress)
}

// planQueue plans s over the whole queue: a stream's first page is held
// and planned; another queue is previewed (every message read, decided
// and given back), unless no one is asked.
func (o *Ops) planQueue(ctx context.Context, s Scope) (*Plan, error) {
	t, err := o.Resolve(ctx, s.Queue)
	if err != nil {
		return nil, err
	}
	t.Opts.AllowLimitRisk = s.AllowRisk
	if t.Info.Type == domain.TypeStream {
		if s.Staging.Active() {
			return nil, &actions.RequestError{Err: fmt.Errorf("%s is a stream, acted on one held page at a time: replay it without --canary or --rate auto", sanitize.Text(s.Queue.Name))}
		}
		return o.planStream(ctx, t, s) // plans what it holds, as planHeld
	}
	r, err := o.request(s)
	if err != nil {
		return nil, err
	}
	if s.Unasked {
		return o.planUnasked(t, r, s)
	}
	return o.planWhole(ctx, t, r, s)
}

// planHeld plans s over the letters h holds. The inbox is asked afresh,
// so a message applied since its page was read is still skipped; where
// it cannot answer, Warnings say so.
func (o *Ops) planHeld(ctx context.Context, s Scope, h *Browse) (*Plan, error) {
	r, err := o.request(s)
	if err != nil {
		return nil, err
	}
	applied, known, note := o.Applied(ctx, s.Queue, s.Letters)
	r.Letters, r.Applied, r.InboxKnown = s.Letters, applied, known
	ap, err := actions.NewPlan(r)
	if err != nil {
		return nil, err
	}
	p := &Plan{
		Decided: true, Summary: ap.Summary(), Selected: len(s.Letters), Publish: ap.Selected(),
		SkippedApplied: len(ap.SkippedApplied), Bytes: ap.Bytes, Rate: ap.Rate, Lines: ap.Lines(),
		run: func(ctx context.Context, progress func(Progress)) (Result, error) {
			return o.execute(ctx, ap, h, progress)
		},
	}
	if note != "" {
		p.Warnings = append(p.Warnings, note)
	}
	p.Warnings = append(p.Warnings, o.destinationWarnings(ctx, s.Queue.Vhost, ap.Groups)...)
	for _, g := range ap.Groups {
		p.Destinations = append(p.Destinations, Destination{Name: g.Dest.String(), Count: g.Count})
	}
	return p, nil
}

// PaceFlag ends a warning that the consumers' pace would answer, as the
// command line words it; a screen says its own key instead.
const PaceFlag = " (--rate auto)"

// destinationWarnings are what the destinations' bindings and limits
// say the operator should know before answering: a key routed nowhere,
// a queue the copies would overflow.
func (o *Ops) destinationWarnings(ctx context.Context, vhost string, groups []actions.Group) []string {
	routes := o.routes(ctx, vhost, groups)
	return append(unrouted(groups, routes), o.overflowing(ctx, vhost, groups, routes)...)
}

// routes are the queues each exchange destination of groups reaches, as
// the management API lists the bindings, read once for both warnings;
// a destination whose bindings could not be read is absent.
func (o *Ops) routes(ctx context.Context, vhost string, groups []actions.Group) map[actions.Destination][]domain.QueueRef {
	r, ok := o.c.Mgmt.(router)
	if !ok {
		return nil
	}
	out := map[actions.Destination][]domain.QueueRef{}
	for _, g := range groups {
		if g.Dest.Exchange == "" {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, routeTimeout)
		refs, err := r.RouteKey(rctx, vhost, g.Dest.Exchange, g.Dest.RoutingKey)
		cancel()
		if err == nil {
			out[g.Dest] = refs
		}
	}
	return out
}

// overflowing warns of each destination queue whose max-length the
// copies going there would pass while its overflow drops the oldest
// (drop-head, the default): they would push out what waits there for
// its consumers — and, when more copies go than the queue holds, copies
// already confirmed, whose sources are gone from the DLQ — dead-lettered
// or, without a dead-letter exchange, dropped. (reject-publish refuses
// the copy instead: the run stops there, nothing lost.) The consumers'
// pace keeps the depth where it starts.
func (o *Ops) overflowing(ctx context.Context, vhost string, groups []actions.Group, routes map[actions.Destination][]domain.QueueRef) []string {
	going := map[string]int64{} // queue → copies that reach it
	for _, g := range groups {
		if g.Dest.Exchange == "" {
			going[g.Dest.RoutingKey] += int64(g.Count)
			continue
		}
		for _, q := range routes[g.Dest] {
			going[q.Name] += int64(g.Count)
		}
	}
	if len(going) == 0 {
		return nil
	}
	refs := make([]domain.QueueRef, 0, len(going))
	for name := range going {
		refs = append(refs, domain.QueueRef{Vhost: vhost, Name: name})
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].Name < refs[j].Name })
	snap, err := o.c.Mgmt.Snapshot(ctx, domain.SnapshotOptions{Vhost: vhost, RatesFor: refs, OnlyRows: true})
	if err != nil {
		return nil // the run meets the queue as it is
	}
	var out []string
	var conn *amqp.Connection // the ready count, exact and at once (the API's lags)
	defer func() {
		if conn != nil {
			_ = conn.Close()
		}
	}()
	for _, ref := range refs {
		q := snap.Queue(ref)
		if q == nil || q.Overflow() != "drop-head" {
			continue
		}
		limit, ok := q.LimitSetting("max-length")
		if !ok || limit < 0 {
			continue
		}
		if conn == nil {
			if conn, err = o.c.Dial(vhost); err != nil {
				return out
			}
		}
		ready, err := readyCount(conn, ref.Name)
		if err != nil {
			continue
		}
		n := going[ref.Name]
		if ready+n <= limit {
			continue
		}
		fate := "dead-lettered"
		if !q.HasDLX {
			fate = "dropped: it has no dead-letter exchange"
		}
		w := fmt.Sprintf("queue %s holds %d of its max-length %d (overflow drop-head): the %s going there would push out the %s at its head, %s",
			sanitize.Text(ref.Name), ready, limit, format.Messages(int(n)), format.Messages(int(ready+n-limit)), fate)
		if n > limit {
			w += fmt.Sprintf(" — %s of them copies this run confirmed, whose sources leave the DLQ", format.Messages(int(n-limit)))
		}
		out = append(out, w+"; raise its limit, or replay at the consumers' pace"+PaceFlag)
	}
	return out
}

// readyCount is the ready messages of queue, by a passive declare.
func readyCount(conn *amqp.Connection, queue string) (int64, error) {
	ch, err := conn.Channel()
	if err != nil {
		return 0, err
	}
	defer ch.Close()
	q, err := ch.QueueDeclarePassive(queue, false, false, false, false, nil)
	if err != nil {
		return 0, err
	}
	return int64(q.Messages), nil
}

// unrouted warns of each exchange destination whose routing key the
// exchange routes to no queue, as the management API lists its bindings
// (followed through exchange-to-exchange bindings and alternate
// exchanges): the run's first copy there would come back unroutable and
// stop it, nothing lost. A warning, not a refusal: the bindings read
// may be seconds old, and may change before the run.
func unrouted(groups []actions.Group, routes map[actions.Destination][]domain.QueueRef) []string {
	var out []string
	for _, g := range groups {
		d := g.Dest
		if refs, read := routes[d]; d.Exchange == "" || !read || len(refs) > 0 {
			continue
		}
		out = append(out, fmt.Sprintf("%s routes to no queue, as the management API lists its bindings: the first of the %s going there would come back unroutable and stop the run, nothing lost; bind a queue to it or name another destination",
			d, format.Messages(g.Count)))
	}
	return out
}

// planWhole previews r over the whole queue (or its first s.Limit
// messages): every message is read, decided and given back in order,
// and a destination that knowably does not exist refuses the operation
// before anything moves. The run streams over the messages the queue
// holds when it starts, as many as the preview read.
func (o *Ops) planWhole(ctx context.Context, t *Target, r actions.Request, s Scope) (*Plan, error) {
	pre, others, err := o.preview(ctx, t, r, s.Limit)
	if err != nil {
		return nil, err
	}
	if pre.Moving > 0 {
		if err := o.checkDestinations(t, pre); err != nil {
			return nil, err
		}
		if err := o.checkStaging(ctx, t, pre.Groups, s.Staging); err != nil {
			return nil, err
		}
	}
	destWarnings := o.destinationWarnings(ctx, s.Queue.Vhost, pre.Groups)
	p := &Plan{
		Decided: true, Summary: pre.Summary(), Selected: pre.Read, Publish: pre.Moving,
		SkippedApplied: pre.SkippedApplied, Filtered: pre.Filtered, Bytes: pre.Bytes, Rate: s.Rate, Lines: pre.Lines(),
		CanStage: s.Action == Replay, target: t, groups: pre.Groups,
	}
	if others.held > 0 && s.Limit == 0 {
		// Not the whole queue, whatever the plan's count says.
		p.Warnings = append(p.Warnings, fmt.Sprintf("%s; this %s leaves them in %s", domain.HeldNote(others.held), r.Action, s.Queue.Name))
	}
	p.Warnings = append(p.Warnings, destWarnings...)
	p.run = func(ctx context.Context, progress func(Progress)) (Result, error) {
		return o.walkPreviewed(ctx, t, pre, p.Staging, progress)
	}
	for _, g := range pre.Groups {
		p.Destinations = append(p.Destinations, Destination{Name: g.Dest.String(), Count: g.Count})
	}
	return p, nil
}

// planUnasked plans r without reading the queue: no one is asked, so the
// run decides as it goes over the messages the queue holds when it
// starts (at most s.Limit), and each destination is checked as it first
// comes up.
func (o *Ops) planUnasked(t *Target, r actions.Request, s Scope) (*Plan, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	p := &Plan{
		Summary:  fmt.Sprintf("%s every message %s holds when the run starts", r.Action, s.Queue.Name),
		Rate:     s.Rate,
		CanStage: s.Action == Replay,
	}
	p.run = func(ctx context.Context, progress func(Progress)) (Result, error) {
		return o.walkNow(ctx, t, r, s.Limit, p.Staging, progress)
	}
	return p, nil
}

// The most messages of a stream one operation acts on: a stream is
// acted on one held page at a time, which nothing removes from it.
const (
	defaultStreamLimit = 10000
	maxStreamLimit     = dlq.MaxHeld
	// streamWindow keeps the prefetch well above the confirm window as
	// pages accumulate.
	streamWindow = 4096
)

// planStream holds the first s.Limit messages of the stream t (10 000 by
// default) and plans s over them; the plan holds them until it runs or
// is closed, and the run records the offsets.
func (o *Ops) planStream(ctx context.Context, t *Target, s Scope) (*Plan, error) {
	limit := s.Limit
	if limit == 0 {
		limit = defaultStreamLimit
	}
	if limit > maxStreamLimit {
		return nil, &actions.RequestError{Err: fmt.Errorf("--limit %d: a stream is acted on one page at a time, at most %d", limit, maxStreamLimit)}
	}
	t.Opts.Window = min(streamWindow, limit)
	b, err := o.Browse(ctx, t)
	if err != nil {
		return nil, err
	}
	acted, note := o.streamActed(ctx, s.Queue)
	letters, skipped, notes, err := holdLetters(ctx, b, limit, func(d domain.DeadLetter) bool { return acted[d.Offset] != "" })
	if err != nil {
		return nil, errors.Join(err, b.Close())
	}
	if len(skipped) > 0 {
		note = actedNote(acted, skipped)
	}
	if note != "" {
		notes = append(notes, note)
	}
	s.Letters = letters
	p, err := o.planHeld(ctx, s, b)
	if err != nil {
		return nil, errors.Join(err, b.Close())
	}
	p.Warnings = append(notes, p.Warnings...)
	p.close = b.Close
	return p, nil
}

// holdLetters pages through b until the queue ends or limit letters are
// held that skip does not take out (those an earlier operation moved out
// of a stream), or a page can hold no more; the letters past limit stay
// held until b closes. skipped are the letters taken out.
func holdLetters(ctx context.Context, b *Browse, limit int, skip func(domain.DeadLetter) bool) (letters, skipped []domain.DeadLetter, notes []string, err error) {
	refused, end, kept := 0, false, 0
	for {
		page, err := b.Next(ctx)
		if err != nil {
			return nil, nil, nil, err
		}
		notes = append(notes, page.Notes...)
		refused += len(page.Refused)
		for _, d := range page.Letters {
			if !skip(d) {
				kept++
			}
		}
		if end = page.End; end || kept >= limit || len(b.Letters()) >= maxStreamLimit {
			break
		}
	}
	more := !end
	for _, d := range b.Letters() {
		switch {
		case skip(d):
			skipped = append(skipped, d)
		case len(letters) < limit:
			letters = append(letters, d)
		default:
			more = true
		}
	}
	if more && len(letters) == limit {
		notes = append(notes, fmt.Sprintf("--limit %d reached: more messages stay in the queue for another run", limit))
	} else if more {
		notes = append(notes, fmt.Sprintf("a page holds at most %d messages, %d of them moved before: more messages stay in the queue for another run", maxStreamLimit, len(skipped)))
	}
	if refused > 0 {
		stay := " stay"
		if refused == 1 {
			stay = " stays"
		}
		notes = append(notes, format.Messages(refused)+" refused by the delivery-limit guard"+stay+" untouched")
	}
	return letters, skipped, notes, nil
}

// stagingRefusal refuses a canary or an automatic pace where it cannot
// be: anything but a replay, a selection held on the screen or a
// stream's page (a canary stages a walk over the queue).
func (o *Ops) stagingRefusal(s Scope) error {
	st := s.Staging
	if err := st.Validate(); err != nil {
		return &actions.RequestError{Err: err}
	}
	if !st.Active() {
		return nil
	}
	what := "--canary"
	if st.Canary == 0 {
		what = "--rate auto"
	}
	switch {
	case s.Action == Import && st.Canary == 0:
		return nil // an import goes at the consumers' pace too
	case s.Action != Replay:
		return &actions.RequestError{Err: fmt.Errorf("%s stages a replay: %s publishes without it", what, s.Action)}
	case s.Held != nil:
		return &actions.RequestError{Err: fmt.Errorf("%s stages a replay of the whole queue (or its first --limit): replay the selection without it, or the whole queue", what)}
	}
	return nil
}

// parkingRefusal refuses a quarantine from a parking queue, for every
// front end: before anything is read with what the config says, and
// again once the broker's pairing is known.
func (o *Ops) parkingRefusal(s Scope) error {
	if s.Action == Quarantine && o.knowledgeOf(s.Queue).Release {
		return &actions.RequestError{Err: fmt.Errorf("%s is a parking queue already; replay from it to release its messages", sanitize.Text(s.Queue.Name))}
	}
	return nil
}

// request is the operator's scope with what the config and the broker
// know of the queue: whether it is a parking queue (a release), and
// where a quarantine parks.
func (o *Ops) request(s Scope) (actions.Request, error) {
	if err := o.parkingRefusal(s); err != nil {
		return actions.Request{}, err
	}
	k := o.knowledgeOf(s.Queue)
	return actions.Request{
		Action: string(s.Action), Vhost: s.Queue.Vhost, Queue: s.Queue.Name,
		Filter: s.Filter, FilterText: s.FilterText,
		IncludeApplied: s.IncludeApplied, Release: k.Release, To: s.To, Parking: k.Parking,
		Reason: s.Reason, Rate: s.Rate, Now: o.c.Now(), Origins: o.origins(s.Queue),
	}, nil
}

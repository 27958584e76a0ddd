package ops

import (
	"context"
	"errors"
	"fmt"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/domain"
)

// planHandle is what Execute needs back from Plan.
type planHandle struct {
	plan *actions.Plan
	hold *Browse
}

// holder is the browse session that holds a request's letters.
func holder(s any) *Browse {
	switch s := s.(type) {
	case *Browse:
		return s
	case *session:
		return s.Browse
	}
	return nil
}

// Plan computes the operation on the letters, touching nothing. The
// inbox is asked afresh, so a message applied since its page was read is
// still skipped; where it cannot answer, Warnings say so.
func (o *Ops) Plan(ctx context.Context, req PlanRequest) (Plan, error) {
	if req.Whole {
		return o.planWhole(ctx, req)
	}
	h := holder(req.Session)
	if h == nil {
		return Plan{}, errors.New("no browse session holds these messages")
	}
	r, err := o.request(req)
	if err != nil {
		return Plan{}, err
	}
	applied, known, note := o.Applied(ctx, req.Queue, req.Letters)
	r.Letters, r.Applied, r.InboxKnown = req.Letters, applied, known
	p, err := actions.NewPlan(r)
	if err != nil {
		return Plan{}, err
	}
	out := Plan{
		Action: req.Action, Summary: p.Summary(), Selected: len(req.Letters), Publish: p.Selected(),
		SkippedApplied: len(p.SkippedApplied), Bytes: p.Bytes, Rate: p.Rate, Lines: p.Lines(),
		Handle: planHandle{plan: p, hold: h},
	}
	if note != "" {
		out.Warnings = append(out.Warnings, note)
	}
	for _, g := range p.Groups {
		out.Destinations = append(out.Destinations, Destination{Name: g.Dest.String(), Count: g.Count})
	}
	return out, nil
}

// wholeHandle is what Execute needs back from a whole-queue plan.
type wholeHandle struct {
	target  *Target
	preview *actions.Preview
}

// planWhole previews req over the whole queue: every message is read,
// decided and given back in order, and a destination that knowably does
// not exist refuses the operation before anything moves.
func (o *Ops) planWhole(ctx context.Context, req PlanRequest) (Plan, error) {
	t, err := o.Resolve(ctx, req.Queue)
	if err != nil {
		return Plan{}, err
	}
	pre, err := o.Preview(ctx, t, req, 0)
	if err != nil {
		return Plan{}, guardRefusal(err)
	}
	if pre.Moving > 0 {
		if err := o.CheckDestinations(t, pre); err != nil {
			return Plan{}, err
		}
	}
	out := Plan{
		Action: req.Action, Summary: pre.Summary(), Selected: pre.Read, Publish: pre.Moving,
		SkippedApplied: pre.SkippedApplied, Bytes: pre.Bytes, Rate: req.Rate, Lines: pre.Lines(),
		Handle: wholeHandle{target: t, preview: pre},
	}
	for _, g := range pre.Groups {
		out.Destinations = append(out.Destinations, Destination{Name: g.Dest.String(), Count: g.Count})
	}
	return out, nil
}

// guardRefusal is the guard's refusal in this package's terms; other
// errors pass unchanged.
func guardRefusal(err error) error {
	var refused *domain.RefusedError
	if errors.As(err, &refused) {
		return &RefusedError{Reason: refused.Reason}
	}
	return err
}

// request is the operator's request with what the config and the broker
// know of the queue: whether it is a parking queue (a release), and where
// a quarantine parks.
func (o *Ops) request(req PlanRequest) (actions.Request, error) {
	k := o.knowledgeOf(req.Queue)
	if req.Action == Quarantine && k.Release {
		return actions.Request{}, &actions.RequestError{Err: fmt.Errorf("%s is a parking queue already; replay from it to release its messages", req.Queue.Name)}
	}
	return actions.Request{
		Action: string(req.Action), Vhost: req.Queue.Vhost, Queue: req.Queue.Name,
		Filter: req.Filter, FilterText: req.FilterText,
		IncludeApplied: req.IncludeApplied, Release: k.Release, To: req.To, Parking: k.Parking,
		Reason: req.Reason, Rate: req.Rate, Now: o.c.Now(), Origins: o.origins(req.Queue),
	}, nil
}

// Execute runs a confirmed plan on the session that holds its messages.
// The copies are published on a connection of their own, so flow control
// on them never holds up the acks of the browse channel. progress is
// called from Execute's goroutine.
func (o *Ops) Execute(ctx context.Context, plan Plan, progress func(Progress)) (Result, error) {
	if err := o.writable(string(plan.Action)); err != nil {
		return Result{}, err
	}
	if w, ok := plan.Handle.(wholeHandle); ok {
		return o.Stream(ctx, w.target, w.preview, progress)
	}
	h, ok := plan.Handle.(planHandle)
	if !ok {
		return Result{}, errors.New("the plan was not made by this session")
	}
	// A round trip proves the session's channel alive before anything is
	// published: had it died while the prompt was open (a lost network,
	// the broker's consumer timeout), the broker has the messages back,
	// and every copy would exist beside its source.
	if err := h.hold.Sync(); err != nil {
		return Result{}, fmt.Errorf("the messages are no longer held in %s (its browse session ended: %v): nothing was published; reopen the DLQ and try again", h.plan.Queue, err)
	}
	st, err := o.AuditStore()
	if err != nil {
		return Result{}, fmt.Errorf("%w: %v; nothing was changed", actions.ErrAuditUnavailable, err)
	}
	key, err := o.signingKey()
	if err != nil {
		return Result{}, err
	}
	conn, err := o.c.Dial(h.plan.Vhost)
	if err != nil {
		return Result{}, fmt.Errorf("connecting the publisher: %w; nothing was changed", err)
	}
	defer conn.Close()
	c := o.c.Context
	env := actions.Env{
		Conn: conn, Session: h.hold, Stream: h.hold.ReadOnly(), Audit: st, Checkpoint: key,
		Operator: o.c.Operator, Host: o.host, Context: c.Name, ConnUser: c.Username, Now: o.c.Now,
	}
	res, err := actions.Execute(ctx, h.plan, env, o.report(progress))
	if res == nil {
		return Result{}, err
	}
	return result(res), err
}

func result(r *actions.Result) Result {
	out := Result{Counts: r.Counts, AuditHead: r.Head}
	if r.AckFailed > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d confirmed copies could not be removed from the DLQ and exist twice", r.AckFailed))
	}
	if r.UserIDDropped > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("user_id dropped from %d messages (not the connection's user)", r.UserIDDropped))
	}
	if r.PossibleDuplicates > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d published again after an earlier publish that has no recorded confirm: they may exist twice, and the inbox decides", r.PossibleDuplicates))
	}
	if r.SweepNote != "" {
		out.Notes = append(out.Notes, r.SweepNote)
	}
	if r.ExpirationDropped > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("expiration dropped from %d messages", r.ExpirationDropped))
	}
	return out
}

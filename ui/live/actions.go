package live

import (
	"context"
	"errors"
	"fmt"

	"github.com/warrenops/warren/actions"
	uidlq "github.com/warrenops/warren/ui/dlq"
)

// planHandle is what Execute needs back from Plan.
type planHandle struct {
	plan *actions.Plan
	sess *session
}

// Plan computes the operation on the selected letters, touching nothing.
func (l *Live) Plan(ctx context.Context, req uidlq.PlanRequest) (uidlq.Plan, error) {
	sess, ok := req.Session.(*session)
	if !ok || sess == nil {
		return uidlq.Plan{}, errors.New("no browse session holds these messages")
	}
	k := l.knowledgeOf(req.Queue)
	if req.Action == uidlq.Quarantine && k.Release {
		return uidlq.Plan{}, fmt.Errorf("%s is a parking queue already; replay from it to release its messages", req.Queue.Name)
	}
	applied, known := l.applied(ctx, req.Queue, req.Letters)
	p, err := actions.NewPlan(actions.Request{
		Action: string(req.Action), Vhost: req.Queue.Vhost, Queue: req.Queue.Name, Letters: req.Letters,
		Applied: applied, InboxKnown: known, Release: k.Release, Parking: k.Parking,
		Reason: req.Reason, Now: l.s.Now(),
	})
	if err != nil {
		return uidlq.Plan{}, err
	}
	out := uidlq.Plan{
		Action: req.Action, Summary: p.Summary(), Selected: len(req.Letters), Publish: p.Selected(),
		SkippedApplied: len(p.SkippedApplied), Bytes: p.Bytes, Rate: p.Rate,
		Handle: planHandle{plan: p, sess: sess},
	}
	for _, g := range p.Groups {
		out.Destinations = append(out.Destinations, uidlq.Destination{Name: g.Dest.String(), Count: g.Count})
	}
	return out, nil
}

// Execute runs a confirmed plan on the session that holds its messages.
func (l *Live) Execute(ctx context.Context, plan uidlq.Plan, progress func(uidlq.Progress)) (uidlq.Result, error) {
	h, ok := plan.Handle.(planHandle)
	if !ok {
		return uidlq.Result{}, errors.New("the plan was not made by this session")
	}
	st, err := l.auditStore()
	if err != nil {
		return uidlq.Result{}, fmt.Errorf("%w: %v; nothing was changed", actions.ErrAuditUnavailable, err)
	}
	c := l.s.Context
	env := actions.Env{
		Conn: h.sess.conn, Session: h.sess, Stream: h.sess.s.ReadOnly(), Audit: st,
		Operator: l.s.Operator, Host: l.host, Context: c.Name, ConnUser: c.Username, Now: l.s.Now,
	}
	res, err := actions.Execute(ctx, h.plan, env, func(p actions.Progress) {
		progress(uidlq.Progress{
			Total: p.Total, Done: p.Confirmed + p.Returned + p.Nacked + p.Unknown,
			Confirmed: p.Confirmed, Returned: p.Returned, Nacked: p.Nacked, Unknown: p.Unknown,
			At: l.s.Now(),
		})
	})
	if res == nil {
		return uidlq.Result{}, err
	}
	return result(res), err
}

func result(r *actions.Result) uidlq.Result {
	out := uidlq.Result{
		Operation: r.Operation, Selected: r.Selected, SkippedApplied: r.SkippedApplied,
		Confirmed: r.Confirmed, Returned: r.Returned, Nacked: r.Nacked, Unknown: r.Unknown, NotSent: r.NotSent,
		Cancelled: r.Cancelled,
	}
	if r.AckFailed > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d confirmed copies could not be removed from the DLQ and exist twice", r.AckFailed))
	}
	if r.UserIDDropped > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("user_id dropped from %d messages (not the connection's user)", r.UserIDDropped))
	}
	if r.ExpirationDropped > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("expiration dropped from %d messages", r.ExpirationDropped))
	}
	return out
}

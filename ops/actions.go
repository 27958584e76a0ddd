package ops

import (
	"context"
	"fmt"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/text/format"
)

// execute runs a confirmed plan on the session that holds its messages.
// The copies are published on a connection of their own, so flow control
// on them never holds up the acks of the browse channel. progress is
// called from execute's goroutine.
func (o *Ops) execute(ctx context.Context, p *actions.Plan, h *Browse, progress func(Progress)) (Result, error) {
	// A round trip proves the session's channel alive before anything is
	// published: had it died while the prompt was open (a lost network,
	// the broker's consumer timeout), the broker has the messages back,
	// and every copy would exist beside its source.
	if err := h.Sync(); err != nil {
		return Result{}, fmt.Errorf("the messages are no longer held in %s (its browse session ended: %v): nothing was published; reopen the DLQ and try again", p.Queue, err)
	}
	env, err := o.env()
	if err != nil {
		return Result{}, err
	}
	conn, err := o.c.Dial(p.Vhost)
	if err != nil {
		return Result{}, fmt.Errorf("connecting the publisher: %w; nothing was changed", err)
	}
	blocks := watchBlocked(conn, o.c.Now)
	defer blocks.close()
	env.Conn, env.Session, env.Stream = conn, h, h.ReadOnly()
	report, stop := o.report(progress, nil, blocks)
	unguard := blocks.guard(ctx)
	res, err := actions.Execute(ctx, p, env, report)
	unguard()
	stop()
	if res == nil {
		return Result{}, err
	}
	return result(res), err
}

// env is what every operation records with: the audit store, the
// signing key, who runs it where; an operation that cannot be audited
// does not start.
func (o *Ops) env() (actions.Env, error) {
	st, err := o.AuditStore()
	if err != nil {
		return actions.Env{}, fmt.Errorf("%w: %v; nothing was changed", actions.ErrAuditUnavailable, err)
	}
	key, err := o.signingKey()
	if err != nil {
		return actions.Env{}, err
	}
	c := o.c.Context
	return actions.Env{Audit: st, Checkpoint: key, Operator: o.c.Operator, Host: o.host, Context: c.Name, ConnUser: c.Username, Now: o.c.Now}, nil
}

func result(r *actions.Result) Result {
	out := Result{Counts: r.Counts, AuditHead: r.Head}
	if r.AckFailed > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d confirmed copies could not be removed from the DLQ and exist twice", r.AckFailed))
	}
	if r.UserIDDropped > 0 {
		out.Notes = append(out.Notes, "user_id dropped from "+format.Messages(r.UserIDDropped)+" (not the connection's user)")
	}
	if r.PossibleDuplicates > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d published again after an earlier publish that has no recorded confirm: they may exist twice, and the inbox decides", r.PossibleDuplicates))
	}
	if r.SweepNote != "" {
		out.Notes = append(out.Notes, r.SweepNote)
	}
	if r.ExpirationDropped > 0 {
		out.Notes = append(out.Notes, "expiration dropped from "+format.Messages(r.ExpirationDropped))
	}
	return out
}

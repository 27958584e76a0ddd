package ops

import (
	"context"
	"errors"

	"github.com/warrenops/warren/sources/dlq"
	"github.com/warrenops/warren/sources/mgmt"
)

// Scan reads the whole DLQ for statistics on a connection of its own,
// with what browsing knows (logical IDs, attempts, origin limits). The
// delivery-limit guard is never overridden here: a scan returns every
// message of the queue, not one page.
func (o *Ops) Scan(ctx context.Context, ref mgmt.QueueRef, progress func(read int)) (*dlq.Stats, error) {
	t, err := o.Resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	st, err := o.ScanTarget(ctx, t, progress)
	var refused *dlq.RefusedError
	if errors.As(err, &refused) {
		return nil, &RefusedError{Reason: refused.Reason}
	}
	return st, err
}

// ScanTarget scans a resolved DLQ; a guard refusal is the guard's own
// *dlq.RefusedError.
func (o *Ops) ScanTarget(ctx context.Context, t *Target, progress func(read int)) (*dlq.Stats, error) {
	conn, err := o.c.Dial(t.Ref.Vhost)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	st, err := dlq.Scan(ctx, conn, t.Info, t.Opts, progress)
	if err == nil {
		for _, g := range st.Groups.List() {
			if g.Convention != dlq.ConventionBroker {
				o.learn(t.Ref, g.OriginQueue)
			}
		}
	}
	return st, err
}

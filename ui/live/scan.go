package live

import (
	"context"
	"errors"

	"github.com/warrenops/warren/sources/dlq"
	"github.com/warrenops/warren/sources/mgmt"
	uidlq "github.com/warrenops/warren/ui/dlq"
)

// Scan reads the whole DLQ for statistics on a connection of its own,
// with what browsing knows (logical IDs, attempts, origin limits). The
// delivery-limit guard is never overridden here: a scan returns every
// message of the queue, not one page.
func (l *Live) Scan(ctx context.Context, ref mgmt.QueueRef, progress func(read int)) (*dlq.Stats, error) {
	t, err := l.resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	conn, err := l.s.Dial(ref.Vhost)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	st, err := dlq.Scan(ctx, conn, t.info, t.opts, progress)
	var refused *dlq.RefusedError
	if errors.As(err, &refused) {
		return nil, &uidlq.RefusedError{Reason: refused.Reason}
	}
	return st, err
}

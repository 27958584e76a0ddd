package ops

import (
	"context"
	"fmt"
	"time"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/sources/inbox"
)

// InboxClient is one consumer's inbox table; *inbox.Client, with a Close
// that returns an error, implements it.
type InboxClient interface {
	Lookup(ctx context.Context, ids []string) (map[string]time.Time, error)
	Effect(ctx context.Context, window time.Duration) (domain.Effect, error)
	Close() error
}

// InboxOpener opens the inbox of the queue that vhost/queue belongs to;
// it returns nil, nil when none is configured.
type InboxOpener func(ctx context.Context, vhost, queue string) (InboxClient, error)

// Lookup asks the queue's inbox which logical IDs were applied. The
// client is opened once per queue and kept; a failure to open is not
// kept, so the next page tries again.
func (o *Ops) Lookup(ctx context.Context, ref domain.QueueRef, ids []string) (map[string]time.Time, error) {
	c, err := o.inbox(ctx, ref)
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, ErrNoInbox
	}
	return c.Lookup(ctx, ids)
}

// HasInbox reports, from the config alone, whether the queue names an
// inbox of its own.
func (o *Ops) HasInbox(ref domain.QueueRef) bool {
	if o.c.OpenInbox == nil {
		return false
	}
	q := o.c.Context.QueueConfig(ref.Vhost, ref.Name)
	return q != nil && q.Inbox != nil
}

// Effect reads the pace of the queue's inbox over window (docs/ARCHITECTURE.md
// §4.1): effects per second and when the last one was committed.
func (o *Ops) Effect(ctx context.Context, ref domain.QueueRef, window time.Duration) (domain.Effect, error) {
	c, err := o.inbox(ctx, ref)
	if err != nil {
		return domain.Effect{}, err
	}
	if c == nil {
		return domain.Effect{}, ErrNoInbox
	}
	return c.Effect(ctx, window)
}

// inbox returns the client of the inbox ref's messages land in. Clients
// are kept per consumer queue, so a DLQ and the queue it belongs to
// share one pool.
func (o *Ops) inbox(ctx context.Context, ref domain.QueueRef) (InboxClient, error) {
	if o.c.OpenInbox == nil {
		return nil, nil
	}
	// The inbox belongs to the consumer queue; naming it finds the inbox
	// even when only the broker knows the pairing.
	owner := ref
	if k := o.knowledgeOf(ref); k.Queue != nil {
		owner.Name = k.Queue.Name
	}
	o.mu.Lock()
	c, ok := o.inboxes[owner]
	o.mu.Unlock()
	if ok {
		return c, nil
	}
	c, err := o.c.OpenInbox(ctx, owner.Vhost, owner.Name)
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if have, ok := o.inboxes[owner]; ok {
		// Another caller opened it meanwhile; keep one client.
		if c != nil {
			_ = c.Close()
		}
		return have, nil
	}
	o.inboxes[owner] = c
	return c, nil
}

// Applied asks the inbox of ref's messages which of the letters were
// applied, afresh, so a message applied since its page was read is still
// skipped. Without an inbox, or when it fails, known is false and nothing
// is skipped; note then says why, for the operator (empty when the queue
// simply has no inbox).
func (o *Ops) Applied(ctx context.Context, ref domain.QueueRef, letters []domain.DeadLetter) (applied map[string]bool, known bool, note string) {
	c, err := o.inbox(ctx, ref)
	if err != nil {
		return nil, false, fmt.Sprintf("inbox unavailable (%v): applied messages cannot be skipped", err)
	}
	if c == nil {
		return nil, false, ""
	}
	ids := make([]string, 0, len(letters))
	for _, id := range domain.BusinessIDs(letters) {
		if id != "" {
			ids = append(ids, id)
		}
	}
	found, err := c.Lookup(ctx, ids)
	if err != nil {
		return nil, false, fmt.Sprintf("inbox lookup failed (%v): applied messages cannot be skipped", err)
	}
	applied = make(map[string]bool, len(found))
	for id := range found {
		applied[id] = true
	}
	return applied, true, ""
}

// Pager looks up the inbox statuses of a listing page by page; without
// an inbox every status is unknown, with the reason.
func (o *Ops) Pager(ctx context.Context, ref domain.QueueRef) *inbox.Pager {
	c, err := o.inbox(ctx, ref)
	switch {
	case err != nil:
		return inbox.NewPager(nil, err.Error())
	case c == nil:
		return inbox.NewPager(nil, "no inbox configured for "+ref.Name)
	}
	return inbox.NewPager(c, "")
}

// CompileFilter compiles a filter expression (docs/ARCHITECTURE.md,
// "Filters") for the dashboard.
func CompileFilter(src string) (Filter, error) {
	f, err := domain.CompileFilter(src)
	if err != nil {
		return nil, err
	}
	return f, nil
}

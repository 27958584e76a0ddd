package live

import (
	"context"
	"time"

	"github.com/warrenops/warren/sources/dlq"
	"github.com/warrenops/warren/sources/inbox"
	"github.com/warrenops/warren/sources/mgmt"
	uidlq "github.com/warrenops/warren/ui/dlq"
)

// InboxClient is one consumer's inbox table; *inbox.Client, with a Close
// that returns an error, implements it.
type InboxClient interface {
	Lookup(ctx context.Context, ids []string) (map[string]time.Time, error)
	Effect(ctx context.Context, window time.Duration) (inbox.Effect, error)
	Close() error
}

// InboxOpener opens the inbox of the queue that vhost/queue belongs to;
// it returns nil, nil when none is configured.
type InboxOpener func(ctx context.Context, vhost, queue string) (InboxClient, error)

// Lookup asks the queue's inbox which logical IDs were applied. The
// client is opened once per queue and kept; a failure to open is not
// kept, so the next page tries again.
func (l *Live) Lookup(ctx context.Context, ref mgmt.QueueRef, ids []string) (map[string]time.Time, error) {
	c, err := l.inbox(ctx, ref)
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, uidlq.ErrNoInbox
	}
	return c.Lookup(ctx, ids)
}

// HasInbox reports, from the config alone, whether the queue names an
// inbox of its own.
func (l *Live) HasInbox(ref mgmt.QueueRef) bool {
	if l.s.OpenInbox == nil {
		return false
	}
	q := l.s.Context.QueueConfig(ref.Vhost, ref.Name)
	return q != nil && q.Inbox != nil
}

// Effect reads the pace of the queue's inbox over window (DESIGN.md
// §4.1): effects per second and when the last one was committed.
func (l *Live) Effect(ctx context.Context, ref mgmt.QueueRef, window time.Duration) (inbox.Effect, error) {
	c, err := l.inbox(ctx, ref)
	if err != nil {
		return inbox.Effect{}, err
	}
	if c == nil {
		return inbox.Effect{}, uidlq.ErrNoInbox
	}
	return c.Effect(ctx, window)
}

// inbox returns the client of the inbox ref's messages land in. Clients
// are kept per consumer queue, so a DLQ and the queue it belongs to
// share one pool.
func (l *Live) inbox(ctx context.Context, ref mgmt.QueueRef) (InboxClient, error) {
	if l.s.OpenInbox == nil {
		return nil, nil
	}
	// The inbox belongs to the consumer queue; naming it finds the inbox
	// even when only the broker knows the pairing.
	owner := ref
	if k := l.knowledgeOf(ref); k.Queue != nil {
		owner.Name = k.Queue.Name
	}
	l.mu.Lock()
	c, ok := l.inboxes[owner]
	l.mu.Unlock()
	if ok {
		return c, nil
	}
	c, err := l.s.OpenInbox(ctx, owner.Vhost, owner.Name)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if have, ok := l.inboxes[owner]; ok {
		// Another caller opened it meanwhile; keep one client.
		if c != nil {
			_ = c.Close()
		}
		return have, nil
	}
	l.inboxes[owner] = c
	return c, nil
}

// applied is the plan's view of the inbox, looked up afresh so a message
// applied since the page was read is still skipped.
func (l *Live) applied(ctx context.Context, ref mgmt.QueueRef, letters []dlq.DeadLetter) (map[string]bool, bool) {
	c, err := l.inbox(ctx, ref)
	if err != nil || c == nil {
		return nil, false
	}
	ids := make([]string, 0, len(letters))
	for _, d := range letters {
		if d.LogicalIDFrom != dlq.IDHash && d.LogicalID != "" {
			ids = append(ids, d.LogicalID)
		}
	}
	found, err := c.Lookup(ctx, ids)
	if err != nil {
		return nil, false
	}
	out := make(map[string]bool, len(found))
	for id := range found {
		out[id] = true
	}
	return out, true
}

func compileFilter(src string) (uidlq.Filter, error) {
	f, err := dlq.CompileFilter(src)
	if err != nil {
		return nil, err
	}
	return f, nil
}

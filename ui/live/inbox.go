package live

import (
	"context"
	"time"

	"github.com/warrenops/warren/sources/dlq"
	"github.com/warrenops/warren/sources/mgmt"
	uidlq "github.com/warrenops/warren/ui/dlq"
)

// InboxClient is one consumer's inbox table.
type InboxClient interface {
	Lookup(ctx context.Context, ids []string) (map[string]time.Time, error)
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

func (l *Live) inbox(ctx context.Context, ref mgmt.QueueRef) (InboxClient, error) {
	if l.s.OpenInbox == nil {
		return nil, nil
	}
	l.mu.Lock()
	c, ok := l.inboxes[ref]
	l.mu.Unlock()
	if ok {
		return c, nil
	}
	// The inbox belongs to the consumer queue; naming it finds the inbox
	// even when only the broker knows the pairing.
	name := ref.Name
	if k := l.knowledgeOf(ref); k.queue != nil {
		name = k.queue.Name
	}
	c, err := l.s.OpenInbox(ctx, ref.Vhost, name)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if have, ok := l.inboxes[ref]; ok {
		// Another page opened it meanwhile; keep one client.
		if c != nil {
			_ = c.Close()
		}
		return have, nil
	}
	l.inboxes[ref] = c
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

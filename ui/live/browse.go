package live

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/sources/dlq"
	"github.com/warrenops/warren/sources/mgmt"
	uidlq "github.com/warrenops/warren/ui/dlq"
)

// Open starts a browse session on a DLQ over a connection of its own.
func (l *Live) Open(ctx context.Context, ref mgmt.QueueRef, allowRisk bool) (uidlq.Session, error) {
	t, err := l.resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	t.opts.AllowLimitRisk = allowRisk
	conn, err := l.s.Dial(ref.Vhost)
	if err != nil {
		return nil, err
	}
	s, err := dlq.Open(ctx, conn, t.info, t.opts)
	if err != nil {
		_ = conn.Close()
		return nil, refusal(err)
	}
	return newSession(s, conn), nil
}

// target is a DLQ with what reading it needs.
type target struct {
	info dlq.QueueInfo
	opts dlq.Options
}

// resolve reads the DLQ and the queues around it from one snapshot of
// its vhost: its type, delivery limit and consumers, the broker's
// version, the config's knowledge of it, and the delivery limits of its
// quorum origins.
func (l *Live) resolve(ctx context.Context, ref mgmt.QueueRef) (target, error) {
	snap, err := l.s.Mgmt.Snapshot(ctx, mgmt.SnapshotOptions{Vhost: ref.Vhost, RatesFor: []mgmt.QueueRef{ref}})
	if err != nil {
		return target{}, err
	}
	q := snap.Queue(ref)
	if q == nil {
		return target{}, fmt.Errorf("queue %s does not exist in vhost %s", ref.Name, ref.Vhost)
	}
	version := snap.Overview.RabbitMQVersion
	t := target{info: dlq.QueueInfo{
		Vhost: ref.Vhost, Name: ref.Name, Type: q.Type, DeliveryLimit: q.DeliveryLimit(version),
		BrokerVersion: version, Consumers: q.Consumers, Messages: q.Messages,
	}}
	k := knowledge(l.s.Context, ref, snap.Sources(ref))
	l.mu.Lock()
	l.known[ref] = k
	l.mu.Unlock()
	t.opts = dlq.Options{Window: l.s.Window, QuarantineQueue: k.Parking, OriginDeliveryLimits: snap.OriginDeliveryLimits(ref)}
	if k.Queue != nil {
		t.opts.LogicalID, t.opts.AttemptsHeader = k.Queue.LogicalID, k.Queue.AttemptsHeader
	}
	return t, nil
}

// refusal turns the delivery-limit guard's refusal into the screen's,
// with what browsing anyway would do.
func refusal(err error) error {
	var refused *dlq.RefusedError
	if !errors.As(err, &refused) {
		return err
	}
	return &uidlq.RefusedError{
		Reason: err.Error(),
		Risk: fmt.Sprintf("every message shown gets one more delivery counted against the limit of %d, and one already at its limit is dropped or dead-lettered again when it is returned",
			refused.Queue.DeliveryLimit),
	}
}

// knowledge is what the config says about ref, helped by the broker's
// pairing (the queues that dead-letter into it).
func knowledge(c *config.Context, ref mgmt.QueueRef, dlqOf []mgmt.QueueRef) config.Knowledge {
	sources := make([]string, 0, len(dlqOf))
	for _, o := range dlqOf {
		sources = append(sources, o.Name)
	}
	return c.Knowledge(ref.Vhost, ref.Name, sources)
}

// knowledgeOf is what Open learned about ref; before any Open, only the
// config speaks.
func (l *Live) knowledgeOf(ref mgmt.QueueRef) config.Knowledge {
	l.mu.Lock()
	k, ok := l.known[ref]
	l.mu.Unlock()
	if ok {
		return k
	}
	return knowledge(l.s.Context, ref, nil)
}

// session adapts a dlq.Session to the screen. It is the only reader of
// the underlying Done channel and repeats its end to every caller of
// Done, so the screen and a running action both learn why it ended.
type session struct {
	s    *dlq.Session
	conn *amqp.Connection

	ended chan struct{}
	err   error // set before ended is closed

	closeOnce sync.Once
	closeErr  error
}

func newSession(s *dlq.Session, conn *amqp.Connection) *session {
	w := &session{s: s, conn: conn, ended: make(chan struct{})}
	go func() {
		for err := range s.Done() {
			if err != nil && w.err == nil {
				w.err = err
			}
		}
		close(w.ended)
	}()
	return w
}

// Next holds one more page. Messages the delivery-limit guard refuses are
// shown too, with their headroom of 0, so the operator can quarantine
// them; a note says what returning them would do.
func (w *session) Next(ctx context.Context) (uidlq.Page, error) {
	p, err := w.s.Next(ctx)
	if err != nil {
		return uidlq.Page{}, err
	}
	page := uidlq.Page{Letters: p.Letters, End: p.End, Notes: p.Notes, Depth: max(p.Expected, 0)}
	if n := len(p.Refused); n > 0 {
		for _, r := range p.Refused {
			page.Letters = append(page.Letters, r.Letter)
		}
		slices.SortFunc(page.Letters, byPosition)
		page.Notes = append(page.Notes, fmt.Sprintf("%d messages have no headroom left (%s)", n, p.Refused[0].Reason))
	}
	return page, nil
}

// Letters are the held messages, refused ones included, in browse order.
func (w *session) Letters() []dlq.DeadLetter {
	out := w.s.Letters()
	for _, r := range w.s.Refused() {
		out = append(out, r.Letter)
	}
	slices.SortFunc(out, byPosition)
	return out
}

func byPosition(a, b dlq.DeadLetter) int { return a.Position - b.Position }

// Done yields the cause when the session died under the screen, nil after
// Close, and is closed after that.
func (w *session) Done() <-chan error {
	c := make(chan error, 1)
	go func() {
		<-w.ended
		c <- w.err
		close(c)
	}()
	return c
}

// Ack and Return make the session the actions' Holder.
func (w *session) Ack(tag uint64) error    { return w.s.Ack(tag) }
func (w *session) Return(tag uint64) error { return w.s.Return(tag) }
func (w *session) Sync() error             { return w.s.Sync() }

// Close returns the held messages and closes the session's connection.
func (w *session) Close() error {
	w.closeOnce.Do(func() {
		err := w.s.Close()
		if cerr := w.conn.Close(); cerr != nil && !errors.Is(cerr, amqp.ErrClosed) {
			err = errors.Join(err, cerr)
		}
		w.closeErr = err
	})
	return w.closeErr
}

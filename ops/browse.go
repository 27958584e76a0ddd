package ops

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/sources/dlq"
	"github.com/warrenops/warren/text/format"
)

// Browse is a browse session on a connection of its own: the deliveries
// it holds go back to the DLQ when it closes.
type Browse struct {
	*dlq.Session
	conn *amqp.Connection
	// learn pairs the DLQ with the origins a page's framework letters
	// name (docs/ARCHITECTURE.md §4.12).
	learn func([]domain.DeadLetter)

	closeOnce sync.Once
	closeErr  error
}

// Browse opens a session on t. Where browsing could cost messages (a
// quorum DLQ whose delivery limit counts returns) it fails with the
// guard's *domain.RefusedError unless t.Opts.AllowLimitRisk is set.
func (o *Ops) Browse(ctx context.Context, t *Target) (*Browse, error) {
	if t.Opts.AllowLimitRisk {
		// Browsing past the delivery-limit guard may drop messages.
		if err := o.writable("a browse that may cost deliveries (--allow-limit-risk)"); err != nil {
			return nil, err
		}
	}
	conn, err := o.c.Dial(t.Ref.Vhost)
	if err != nil {
		return nil, err
	}
	s, err := dlq.Open(ctx, conn, t.Info, t.Opts)
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	return &Browse{Session: s, conn: conn, learn: func(letters []domain.DeadLetter) {
		o.learn(t.Ref, frameworkOrigins(letters)...)
	}}, nil
}

func (b *Browse) holder() *Browse { return b }

// Next holds one more page, and learns the pairings its letters name.
func (b *Browse) Next(ctx context.Context) (*dlq.Page, error) {
	p, err := b.Session.Next(ctx)
	if err == nil && b.learn != nil {
		b.learn(p.Letters)
	}
	return p, err
}

// Close returns the held messages and closes the session's connection.
func (b *Browse) Close() error {
	b.closeOnce.Do(func() {
		err := b.Session.Close()
		if cerr := b.conn.Close(); cerr != nil && !errors.Is(cerr, amqp.ErrClosed) {
			err = errors.Join(err, cerr)
		}
		b.closeErr = err
	})
	return b.closeErr
}

// Open starts a browse session for the dashboard. Where browsing could
// cost messages it fails with a *domain.RefusedError, which says what
// browsing anyway would risk, unless allowRisk is true.
func (o *Ops) Open(ctx context.Context, ref domain.QueueRef, allowRisk bool) (Session, error) {
	t, err := o.Resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	t.Opts.AllowLimitRisk = allowRisk
	b, err := o.Browse(ctx, t)
	if err != nil {
		return nil, err
	}
	return newSession(b), nil
}

// session adapts a Browse to the dashboard. It is the only reader of the
// underlying Done channel and repeats its end to every caller of Done, so
// the screen and a running action both learn why it ended.
type session struct {
	*Browse

	ended chan struct{}
	err   error // set before ended is closed
}

func newSession(b *Browse) *session {
	w := &session{Browse: b, ended: make(chan struct{})}
	go func() {
		for err := range b.Session.Done() {
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
func (w *session) Next(ctx context.Context) (Page, error) {
	p, err := w.Browse.Next(ctx)
	if err != nil {
		return Page{}, err
	}
	page := Page{Letters: p.Letters, End: p.End, Notes: p.Notes, Depth: max(p.Expected, 0)}
	if n := len(p.Refused); n > 0 {
		for _, r := range p.Refused {
			page.Letters = append(page.Letters, r.Letter)
		}
		slices.SortFunc(page.Letters, byPosition)
		have := " have"
		if n == 1 {
			have = " has"
		}
		page.Notes = append(page.Notes, fmt.Sprintf("%s%s no headroom left (%s)", format.Messages(n), have, p.Refused[0].Reason))
	}
	return page, nil
}

// Letters are the held messages, refused ones included, in browse order.
func (w *session) Letters() []domain.DeadLetter {
	out := w.Session.Letters()
	for _, r := range w.Session.Refused() {
		out = append(out, r.Letter)
	}
	slices.SortFunc(out, byPosition)
	return out
}

func byPosition(a, b domain.DeadLetter) int { return a.Position - b.Position }

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

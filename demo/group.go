package demo

import (
	"context"
	"fmt"
	"sync"

	amqp "github.com/rabbitmq/amqp091-go"
)

// group runs goroutines that stop together: the first failure cancels the
// others, and stop returns only when all have returned. Errors that follow
// the cancellation are consequences of stopping and are not reported.
type group struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	err    error
}

func newGroup(ctx context.Context) *group {
	ctx, cancel := context.WithCancel(ctx)
	return &group{ctx: ctx, cancel: cancel}
}

func (g *group) goFn(f func(context.Context) error) {
	g.wg.Go(func() {
		if err := f(g.ctx); err != nil && g.ctx.Err() == nil {
			g.mu.Lock()
			if g.err == nil {
				g.err = err
			}
			g.mu.Unlock()
			g.cancel()
		}
	})
}

// stop cancels every goroutine and returns the first failure, if any.
func (g *group) stop() error {
	g.cancel()
	g.wg.Wait()
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// onChannel runs f on a fresh channel of conn and closes the channel after,
// which hands any delivery f still holds back to its queue.
func onChannel(conn *amqp.Connection, f func(context.Context, *amqp.Channel) error) func(context.Context) error {
	return func(ctx context.Context) error {
		ch, err := conn.Channel()
		if err != nil {
			return fmt.Errorf("demo: open channel: %w", err)
		}
		defer ch.Close()
		return f(ctx, ch)
	}
}

// onConfirmChannel is onChannel with the channel in confirm mode, for
// publishers that wait for the broker's confirms.
func onConfirmChannel(conn *amqp.Connection, f func(context.Context, *amqp.Channel) error) func(context.Context) error {
	return onChannel(conn, func(ctx context.Context, ch *amqp.Channel) error {
		if err := ch.Confirm(false); err != nil {
			return fmt.Errorf("demo: confirm mode: %w", err)
		}
		return f(ctx, ch)
	})
}

// publishAll publishes msgs on a confirm-mode channel and waits for every
// confirm, so nothing is left in flight when it returns.
func publishAll(ctx context.Context, ch *amqp.Channel, msgs []outgoing) error {
	pending := make([]*amqp.DeferredConfirmation, 0, len(msgs))
	for _, m := range msgs {
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, m.exchange, m.key, false, false, m.pub)
		if err != nil {
			return fmt.Errorf("demo: publish to %q (%s): %w", m.exchange, m.key, err)
		}
		pending = append(pending, dc)
	}
	for i, dc := range pending {
		ok, err := dc.WaitContext(ctx)
		if err != nil {
			return fmt.Errorf("demo: waiting for confirms: %w", err)
		}
		if !ok {
			return fmt.Errorf("demo: broker refused message to %q (%s)", msgs[i].exchange, msgs[i].key)
		}
	}
	return nil
}

package demo

import (
	"context"
	"errors"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Run keeps the scene moving until ctx is cancelled: the order gateway
// publishes in confirm mode to the orders service (whose poison orders
// still reach orders.dlq, and whose effects go to the inbox when the scene
// has one), slow consumers hold shipping's deliveries under their prefetch,
// the email queue grows and the reindex queue drains. Every service has its
// own named connection. Run returns nil after a cancellation, once every
// goroutine and connection it started is gone, or the first failure.
func Run(ctx context.Context, o Options, s *Scene) error {
	if s == nil {
		return errors.New("demo: Run needs the scene Seed returned")
	}
	o, err := o.withDefaults()
	if err != nil {
		return err
	}
	o.Vhost = s.Vhost
	g := newGroup(ctx)
	service := func(name string, f func(context.Context, *amqp.Connection) error) {
		g.goFn(func(ctx context.Context) error {
			conn, err := o.dial(ctx, name)
			if err != nil {
				return err
			}
			defer conn.Close()
			return f(ctx, conn)
		})
	}
	service("order-gateway", orderGateway)
	service("orders-service", func(ctx context.Context, conn *amqp.Connection) error {
		applied := func(context.Context, string) {}
		if s.Inbox != nil && o.InboxDSN != "" {
			w := openInbox(ctx, o.InboxDSN, o.Log)
			defer w.close()
			applied = w.applied
		}
		return onChannel(conn, func(ctx context.Context, ch *amqp.Channel) error {
			return consume(ctx, ch, qOrders, "orders-service", 10, ordersService(applied))
		})(ctx)
	})
	service("fulfilment", shippingFeeder)
	service("shipping-worker", func(ctx context.Context, conn *amqp.Connection) error {
		peers := newGroup(ctx)
		for i := range shippingPeers {
			// A slow peer holds a full prefetch window unacknowledged
			// while shipping has messages.
			peers.goFn(onChannel(conn, func(ctx context.Context, ch *amqp.Channel) error {
				return consumePaced(ctx, ch, qShipping, fmt.Sprintf("shipping-worker-%d", i+1), shippingPrefch, shippingAckGap)
			}))
		}
		<-peers.ctx.Done()
		return peers.stop()
	})
	service("notifications-api", ticking(emailPublish, func(ch *amqp.Channel) error { return publish(ch, email(time.Now())) }))
	service("email-sender", paced(qEmail, "email-sender", emailAck))
	service("catalog", reindexFeeder)
	service("search-indexer", paced(qReindex, "search-indexer", reindexAck))
	o.logf("scene running in vhost %q", o.Vhost)
	<-g.ctx.Done()
	err = g.stop()
	o.logf("scene stopped")
	return err
}

func publish(ch *amqp.Channel, m outgoing) error {
	return ch.Publish(m.exchange, m.key, false, false, m.pub)
}

// ticking calls f on one channel at every tick.
func ticking(every time.Duration, f func(*amqp.Channel) error) func(context.Context, *amqp.Connection) error {
	return func(ctx context.Context, conn *amqp.Connection) error {
		return onChannel(conn, func(ctx context.Context, ch *amqp.Channel) error {
			return onTicks(ctx, every, func() error { return f(ch) })
		})(ctx)
	}
}

// onTicks calls f at every tick until ctx ends (nil) or f fails.
func onTicks(ctx context.Context, every time.Duration, f func() error) error {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			if err := f(); err != nil {
				return err
			}
		}
	}
}

// paced runs consumePaced on a channel of its own.
func paced(queue, tag string, every time.Duration) func(context.Context, *amqp.Connection) error {
	return func(ctx context.Context, conn *amqp.Connection) error {
		return onChannel(conn, func(ctx context.Context, ch *amqp.Channel) error {
			return consumePaced(ctx, ch, queue, tag, 5, every)
		})(ctx)
	}
}

// orderGateway publishes orders in confirm mode, letting up to
// gatewayWindow confirms run ahead instead of waiting for each one.
func orderGateway(ctx context.Context, conn *amqp.Connection) error {
	return onConfirmChannel(conn, func(ctx context.Context, ch *amqp.Channel) error {
		var inFlight []*amqp.DeferredConfirmation
		return onTicks(ctx, gatewayEvery, func() error {
			for len(inFlight) > 0 && confirmed(inFlight[0]) {
				inFlight = inFlight[1:]
			}
			if len(inFlight) >= gatewayWindow {
				if _, err := inFlight[0].WaitContext(ctx); err != nil {
					return err
				}
				inFlight = inFlight[1:]
			}
			m := liveOrder(time.Now())
			dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, m.exchange, m.key, false, false, m.pub)
			if err != nil {
				return fmt.Errorf("demo: publish order: %w", err)
			}
			inFlight = append(inFlight, dc)
			return nil
		})
	})(ctx)
}

func confirmed(dc *amqp.DeferredConfirmation) bool {
	select {
	case <-dc.Done():
		return true
	default:
		return false
	}
}

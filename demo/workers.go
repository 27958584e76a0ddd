package demo

import (
	"context"
	"fmt"
	mrand "math/rand/v2"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// slowConsumer takes up to its prefetch of shipping's deliveries and acks
// the oldest one per shippingAckGap, so it always holds a full window of
// unacknowledged deliveries while the queue has messages.
func slowConsumer(ctx context.Context, ch *amqp.Channel, tag string) error {
	if err := ch.Qos(shippingPrefch, 0, false); err != nil {
		return fmt.Errorf("demo: prefetch on %s: %w", qShipping, err)
	}
	deliveries, err := ch.Consume(qShipping, tag, false, false, false, false, nil)
	if err != nil {
		return fmt.Errorf("demo: consume %s: %w", qShipping, err)
	}
	tick := time.NewTicker(shippingAckGap)
	defer tick.Stop()
	var held []amqp.Delivery
	for {
		select {
		case <-ctx.Done():
			return nil
		case d, ok := <-deliveries:
			if !ok {
				return fmt.Errorf("demo: consumer %s on %s: channel closed", tag, qShipping)
			}
			held = append(held, d)
		case <-tick.C:
			if len(held) == 0 {
				continue
			}
			if err := held[0].Ack(false); err != nil {
				return fmt.Errorf("demo: consumer %s on %s: %w", tag, qShipping, err)
			}
			held = held[1:]
		}
	}
}

// shippingFeeder tops shipping up to shippingReady ready messages every
// second, so the slow consumers never run dry and the queue neither grows
// nor drains.
func shippingFeeder(ctx context.Context, conn *amqp.Connection) error {
	return ticking(time.Second, func(ch *amqp.Channel) error {
		ready, err := depth(ch, qShipping)
		if err != nil {
			return err
		}
		for range min(shippingReady-ready, 20) {
			if err := publish(ch, shipment(time.Now())); err != nil {
				return err
			}
		}
		return nil
	})(ctx, conn)
}

// reindexFeeder trickles product updates into the reindex queue and, once
// the indexer has nearly caught up, drops in the next batch, so the queue
// is draining most of the time.
func reindexFeeder(ctx context.Context, conn *amqp.Connection) error {
	ticks := 0
	return ticking(reindexPublish, func(ch *amqp.Channel) error {
		ticks++
		if ticks%15 == 0 {
			ready, err := depth(ch, qReindex)
			if err != nil {
				return err
			}
			if ready < reindexRefill {
				for _, m := range reindexBatch(time.Now()) {
					if err := publish(ch, m); err != nil {
						return err
					}
				}
			}
		}
		return publish(ch, liveMessage(qReindex, "catalog", "product.reindex", fmt.Sprintf("SKU-%05d", mrand.IntN(reindexBatchN)), time.Now()))
	})(ctx, conn)
}

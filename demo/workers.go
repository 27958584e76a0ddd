package demo

import (
	"context"
	"fmt"
	mrand "math/rand/v2"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

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

package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/warrenops/warren/domain"
)

// consume feeds each delivery of queue to handle until ctx ends (nil) or
// something fails. Deliveries are acknowledged manually by handle.
func consume(ctx context.Context, ch *amqp.Channel, queue, tag string, prefetch int, handle func(context.Context, amqp.Delivery) error) error {
	if err := ch.Qos(prefetch, 0, false); err != nil {
		return fmt.Errorf("demo: prefetch on %s: %w", queue, err)
	}
	deliveries, err := ch.Consume(queue, tag, false, false, false, false, nil)
	if err != nil {
		return fmt.Errorf("demo: consume %s: %w", queue, err)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case d, ok := <-deliveries:
			if !ok {
				return fmt.Errorf("demo: consumer %s on %s: channel closed", tag, queue)
			}
			if err := handle(ctx, d); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("demo: consumer %s on %s: %w", tag, queue, err)
			}
		}
	}
}

// consumePaced acks one delivery of queue per tick, holding up to prefetch
// unacknowledged: a consumer with a fixed throughput.
func consumePaced(ctx context.Context, ch *amqp.Channel, queue, tag string, prefetch int, every time.Duration) error {
	tick := time.NewTicker(every)
	defer tick.Stop()
	return consume(ctx, ch, queue, tag, prefetch, func(ctx context.Context, d amqp.Delivery) error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			return d.Ack(false)
		}
	})
}

// ordersService is the orders consumer: it validates each order, records
// the effect through applied (may be nil) and acks; a failure is rejected
// without requeue so the broker takes it down the retry path.
func ordersService(applied func(ctx context.Context, eventID string)) func(context.Context, amqp.Delivery) error {
	return func(ctx context.Context, d amqp.Delivery) error {
		if processOrder(d.Body, 1+deathCount(d.Headers, qOrders, domain.ReasonRejected)) != nil {
			return d.Reject(false)
		}
		if id, ok := d.Headers["event_id"].(string); ok && applied != nil {
			applied(ctx, id)
		}
		return d.Ack(false)
	}
}

var supportedCurrencies = map[string]bool{"EUR": true, "USD": true, "GBP": true}

// processOrder stands for the business logic: poison orders fail every
// time, and orders from eu-west-2 fail their first attempt because that
// warehouse's inventory service times out.
func processOrder(body []byte, attempt int) error {
	var o order
	if err := json.Unmarshal(body, &o); err != nil {
		return fmt.Errorf("malformed order: %w", err)
	}
	switch {
	case !supportedCurrencies[o.Currency]:
		return fmt.Errorf("unsupported currency %q", o.Currency)
	case len(o.Items) == 0:
		return errors.New("order has no items")
	case o.AmountCents <= 0:
		return errors.New("non-positive amount")
	case o.Warehouse == "eu-west-2" && attempt < 2:
		return errors.New("inventory service timeout")
	}
	return nil
}

// crashingRenderer returns every delivery, as a consumer that crashes
// mid-message would, so the quorum queue's delivery limit dead-letters it.
// basic.reject counts toward the limit on every version; from 4.3
// basic.nack would not.
func crashingRenderer(_ context.Context, d amqp.Delivery) error {
	return d.Reject(true)
}

// deathCount sums x-death counts for one queue and reason.
func deathCount(h amqp.Table, queue, reason string) int {
	deaths, _ := h["x-death"].([]any)
	n := 0
	for _, d := range deaths {
		t, ok := d.(amqp.Table)
		if !ok || t["queue"] != queue || t["reason"] != reason {
			continue
		}
		switch c := t["count"].(type) {
		case int64:
			n += int(c)
		case int32:
			n += int(c)
		}
	}
	return n
}

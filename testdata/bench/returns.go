package main

import (
	"context"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// returns measures giving n held deliveries back to a classic queue as
// warren does — one basic.nack(multiple, requeue) of every outstanding
// delivery — beside closing the channel that holds them, the anchor the
// broker settles at once. Each is timed from the return until the queue
// holds all n ready again. (One nack per delivery, which warren no longer
// sends, took 5.8 s for 5 000 and 65 s for 15 000 on this broker.)
func (b *bench) returns(n int) ([]row, error) {
	_, conn, release, err := b.openVhost(fmt.Sprintf("returns-%d", n))
	if err != nil {
		return nil, err
	}
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	const queue = "held"
	if err := declareAll(conn, "", []declaration{{name: queue}}); err != nil {
		return nil, err
	}
	body := make([]byte, 512)
	if _, err := publishConfirmed(ctx, conn, "", queue, n, confirmWindow, false, func(int) amqp.Publishing {
		return amqp.Publishing{DeliveryMode: amqp.Persistent, Body: body}
	}); err != nil {
		return nil, err
	}
	if err := waitDepth(conn, queue, n, time.Minute); err != nil {
		return nil, err
	}
	timeReturn := func(give func(*amqp.Channel) error) (time.Duration, error) {
		ch, err := hold(conn, queue, n)
		if err != nil {
			return 0, err
		}
		defer ch.Close()
		start := time.Now()
		if err := give(ch); err != nil {
			return 0, err
		}
		if err := pollQueue(conn, queue, 5*time.Minute, func(q amqp.Queue) error {
			if q.Messages == n {
				return nil
			}
			return fmt.Errorf("%d of %d back", q.Messages, n)
		}); err != nil {
			return 0, err
		}
		return time.Since(start), nil
	}
	nack, closing := time.Duration(1<<63-1), time.Duration(1<<63-1)
	for range replayRounds {
		took, err := timeReturn(func(ch *amqp.Channel) error { return ch.Nack(0, true, true) })
		if err != nil {
			return nil, fmt.Errorf("multiple nack: %w", err)
		}
		nack = min(nack, took)
		if took, err = timeReturn(func(ch *amqp.Channel) error { return ch.Close() }); err != nil {
			return nil, fmt.Errorf("channel close: %w", err)
		}
		closing = min(closing, took)
	}
	return []row{
		versus("return "+thousands(n)+" held deliveries: one multiple nack vs closing the channel", rate(n, nack), rate(n, closing), fmtRate, &cmp{">=", 0.5}),
	}, nil
}

// hold takes every message of queue unacknowledged on a channel of its
// own, stops consuming, and returns the channel holding them.
func hold(conn *amqp.Connection, queue string, n int) (*amqp.Channel, error) {
	ch, err := conn.Channel()
	if err != nil {
		return nil, err
	}
	const tag = "holder"
	deliveries, err := ch.Consume(queue, tag, false, false, false, false, nil)
	if err != nil {
		ch.Close()
		return nil, err
	}
	timeout := time.After(5 * time.Minute)
	for got := 0; got < n; got++ {
		select {
		case <-deliveries:
		case <-timeout:
			ch.Close()
			return nil, fmt.Errorf("held %d of %d", got, n)
		}
	}
	// Returned messages would go straight back to a live consumer.
	if err := ch.Cancel(tag, false); err != nil {
		ch.Close()
		return nil, err
	}
	return ch, nil
}

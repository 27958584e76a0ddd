package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// bodySize is the dead letters' body size the issue names.
const bodySize = 512

func (b *bench) dial(vhost string) (*amqp.Connection, error) {
	u := fmt.Sprintf("amqp://%s:%s@%s/%s", url.PathEscape(b.cfg.user), url.PathEscape(b.cfg.password), b.cfg.amqpAddr, url.PathEscape(vhost))
	conn, err := amqp.DialConfig(u, amqp.Config{Heartbeat: 10 * time.Second, Properties: amqp.Table{"connection_name": "warren-bench"}})
	if err != nil {
		return nil, fmt.Errorf("RabbitMQ at %s: %w", b.cfg.amqpAddr, err)
	}
	return conn, nil
}

// declaration is one queue to declare, with the binding that makes it a
// dead-letter target when bindKey is set.
type declaration struct {
	name    string
	args    amqp.Table
	bindKey string
}

// declareAll declares the queues over several channels at once: a
// declare is a round trip, and 10 000 of them one after the other take
// minutes.
func declareAll(conn *amqp.Connection, exchange string, qs []declaration) error {
	const workers = 6
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	next := make(chan declaration)
	for range workers {
		ch, err := conn.Channel()
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer ch.Close()
			for d := range next {
				_, err := ch.QueueDeclare(d.name, true, false, false, false, d.args)
				if err == nil && d.bindKey != "" {
					err = ch.QueueBind(d.name, d.bindKey, exchange, false, nil)
				}
				if err != nil {
					mu.Lock()
					first = errors.Join(first, fmt.Errorf("declare %s: %w", d.name, err))
					mu.Unlock()
					return
				}
			}
		}()
	}
	for _, d := range qs {
		next <- d
	}
	close(next)
	wg.Wait()
	return first
}

// waitDepth waits until queue holds want messages.
func waitDepth(conn *amqp.Connection, queue string, want int, timeout time.Duration) error {
	return pollQueue(conn, queue, timeout, func(q amqp.Queue) error {
		if q.Messages == want {
			return nil
		}
		return fmt.Errorf("queue %s holds %d messages after %s, want %d", queue, q.Messages, timeout, want)
	})
}

// pollQueue reads queue's counts every 5 ms (so a timed wait overshoots
// by at most that) until unmet returns nil; once timeout has passed it
// returns unmet's last error.
func pollQueue(conn *amqp.Connection, queue string, timeout time.Duration, unmet func(amqp.Queue) error) error {
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	deadline := time.Now().Add(timeout)
	for {
		q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
		if err != nil {
			return err
		}
		err = unmet(q)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// publishConfirmed publishes n messages made by msg on a confirm channel
// with at most window awaiting a confirm, and returns when all are
// confirmed: the plain confirm pipeline.
func publishConfirmed(ctx context.Context, conn *amqp.Connection, exchange, key string, n, window int, mandatory bool, msg func(i int) amqp.Publishing) (time.Duration, error) {
	ch, err := conn.Channel()
	if err != nil {
		return 0, err
	}
	defer ch.Close()
	if err := ch.Confirm(false); err != nil {
		return 0, err
	}
	confirms := ch.NotifyPublish(make(chan amqp.Confirmation, window))
	slots := make(chan struct{}, window)
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		for i := 0; i < n; i++ {
			select {
			case c, ok := <-confirms:
				if !ok {
					done <- errors.New("channel closed before every confirm")
					return
				}
				if !c.Ack {
					done <- fmt.Errorf("publish %d nacked", c.DeliveryTag)
					return
				}
				<-slots
			case <-ctx.Done():
				done <- ctx.Err()
				return
			}
		}
		done <- nil
	}()
	for i := 0; i < n; i++ {
		select {
		case slots <- struct{}{}:
		case err := <-done:
			return 0, fmt.Errorf("publishing stopped at %d of %d: %w", i, n, err)
		}
		if err := ch.PublishWithContext(ctx, exchange, key, mandatory, false, msg(i)); err != nil {
			return 0, err
		}
	}
	if err := <-done; err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

func deadLetterBody(i int) []byte {
	body := make([]byte, bodySize)
	copy(body, fmt.Sprintf(`{"event_id":"evt-%07d","pad":"`, i))
	for j := 40; j < bodySize-2; j++ {
		body[j] = 'x'
	}
	copy(body[bodySize-2:], `"}`)
	return body
}

func deadLetterMsg(i int) amqp.Publishing {
	return amqp.Publishing{
		MessageId: fmt.Sprintf("evt-%07d", i), DeliveryMode: amqp.Persistent,
		ContentType: "application/json", Timestamp: time.Now(), Body: deadLetterBody(i),
	}
}

// fillByMaxLength has the broker dead-letter n messages into dlq: the
// source queue holds none (x-max-length 0), so every publish overflows
// and is dead-lettered with reason maxlen.
func fillByMaxLength(ctx context.Context, conn *amqp.Connection, source, dlq string, n int) error {
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	if _, err := ch.QueueDeclare(dlq, true, false, false, false, nil); err != nil {
		return err
	}
	args := amqp.Table{"x-max-length": int32(0), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq}
	if _, err := ch.QueueDeclare(source, true, false, false, false, args); err != nil {
		return err
	}
	if _, err := publishConfirmed(ctx, conn, "", source, n, 2048, false, deadLetterMsg); err != nil {
		return err
	}
	return waitDepth(conn, dlq, n, 2*time.Minute)
}

// fillByReject has a consumer of origin reject n fresh messages without
// requeue, so the broker dead-letters them into its DLQ with reason
// rejected: what a failing consumer leaves behind. origin must exist with
// its dead-letter arguments and be empty.
func fillByReject(ctx context.Context, conn *amqp.Connection, origin, dlq string, n, from int) error {
	if _, err := publishConfirmed(ctx, conn, "", origin, n, 2048, false, func(i int) amqp.Publishing { return deadLetterMsg(from + i) }); err != nil {
		return err
	}
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	if err := ch.Qos(2000, 0, false); err != nil {
		return err
	}
	deliveries, err := ch.Consume(origin, "bench-rejecter", false, false, false, false, nil)
	if err != nil {
		return err
	}
	// A multiple nack every 500 deliveries keeps the rejecting quick; the
	// broker dead-letters each message all the same.
	for got := 0; got < n; {
		select {
		case d, ok := <-deliveries:
			if !ok {
				return errors.New("rejecting consumer lost its channel")
			}
			got++
			if got%500 == 0 || got == n {
				if err := d.Nack(true, false); err != nil {
					return err
				}
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := ch.Cancel("bench-rejecter", false); err != nil {
		return err
	}
	return waitDepth(conn, dlq, n, 2*time.Minute)
}

// plainMove moves n messages from src to dest the simplest way a client
// can without risking one, the minimal loop: consume with manual ack
// (prefetch 8192, as warren's feed), republish each delivery through the
// default exchange on a confirm channel of its own connection (window
// 2048, mandatory), and ack the contiguous confirmed boundary (one
// multiple ack for the confirms that have come in). It reads and publishes at once, as the shovel does, and does
// nothing else: no plan, no audit, no decoding. It returns when every
// source ack has been proven by a round trip on the consuming channel.
func plainMove(ctx context.Context, conn, pubConn *amqp.Connection, src, dest string, n, window int) (time.Duration, error) {
	cons, err := conn.Channel()
	if err != nil {
		return 0, err
	}
	defer cons.Close()
	pub, err := pubConn.Channel()
	if err != nil {
		return 0, err
	}
	defer pub.Close()
	if err := pub.Confirm(false); err != nil {
		return 0, err
	}
	confirms := pub.NotifyPublish(make(chan amqp.Confirmation, window))
	returns := pub.NotifyReturn(make(chan amqp.Return, 1))
	if err := cons.Qos(8192, 0, false); err != nil {
		return 0, err
	}
	start := time.Now()
	deliveries, err := cons.Consume(src, "bench-plain-move", false, false, false, false, nil)
	if err != nil {
		return 0, err
	}
	// Confirms arrive in publishing order, one per publish (the client
	// splits a multiple confirm), so a FIFO of source tags pairs them.
	tags := make(chan uint64, window)
	done := make(chan error, 1)
	go func() {
		for i := 0; i < n; {
			select {
			case c, ok := <-confirms:
				// Take every confirm already in, then ack the boundary
				// below which all are confirmed with one multiple ack:
				// confirms come in publishing order, so it is the last
				// one's source tag.
				var tag uint64
				for more := true; more; {
					if !ok {
						done <- errors.New("publishing channel closed before every confirm")
						return
					}
					if !c.Ack {
						done <- fmt.Errorf("publish %d nacked", c.DeliveryTag)
						return
					}
					tag = <-tags
					i++
					select {
					case c, ok = <-confirms:
					default:
						more = false
					}
				}
				if err := cons.Ack(tag, true); err != nil {
					done <- err
					return
				}
			case r := <-returns:
				done <- fmt.Errorf("copy returned: %d %s", r.ReplyCode, r.ReplyText)
				return
			case <-ctx.Done():
				done <- ctx.Err()
				return
			}
		}
		// A round trip after the last ack proves every ack took effect.
		done <- cons.Qos(8192, 0, false)
	}()
	for i := 0; i < n; i++ {
		var d amqp.Delivery
		select {
		case d = <-deliveries:
		case err := <-done:
			return 0, fmt.Errorf("moving stopped at %d of %d: %w", i, n, err)
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		select {
		case tags <- d.DeliveryTag:
		case err := <-done:
			return 0, fmt.Errorf("moving stopped at %d of %d: %w", i, n, err)
		}
		msg := amqp.Publishing{
			Headers: d.Headers, ContentType: d.ContentType, ContentEncoding: d.ContentEncoding,
			DeliveryMode: d.DeliveryMode, Priority: d.Priority, CorrelationId: d.CorrelationId,
			MessageId: d.MessageId, Timestamp: d.Timestamp, Type: d.Type, AppId: d.AppId, Body: d.Body,
		}
		if err := pub.PublishWithContext(ctx, "", dest, true, false, msg); err != nil {
			return 0, err
		}
	}
	if err := <-done; err != nil {
		return 0, err
	}
	took := time.Since(start)
	return took, cons.Cancel("bench-plain-move", false)
}

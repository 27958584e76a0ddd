package demo

import (
	"context"
	"fmt"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// seedTimeout bounds the wait for the broker to finish dead-lettering; the
// longest path (three attempts, two TTL tiers) takes about a second.
const seedTimeout = 20 * time.Second

// Seed builds the scene: vhost, permissions, policy and topology, then
// known content driven through the broker so that every dead letter is the
// broker's own (rejected, expired, maxlen, delivery_limit), then the
// backlogs of the live queues and, with InboxDSN, the inbox table. It
// purges the scene's queues first, so running it again yields the same
// content (see the package comment).
func Seed(ctx context.Context, o Options) (*Scene, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	m := newMgmt(o)
	defer m.close()
	if err := m.prepareVhost(ctx, o.Vhost); err != nil {
		return nil, err
	}
	conn, err := o.dial(ctx, "warren-demo seed")
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if err := declare(conn); err != nil {
		return nil, err
	}
	if err := purge(conn); err != nil {
		return nil, err
	}
	now := time.Now()
	dead := deadLetters(now)
	s := newScene(o, dead)
	if err := driveDeadLetters(ctx, conn, dead, s.DLQs); err != nil {
		return nil, err
	}
	if err := seedBacklogs(ctx, conn, now); err != nil {
		return nil, err
	}
	if o.InboxDSN != "" {
		inbox, err := seedInbox(ctx, o.InboxDSN, dead, now)
		if err != nil {
			o.logf("inbox skipped, PostgreSQL not usable: %s", oneLine(err))
		} else {
			s.Inbox = inbox
		}
	}
	for _, d := range s.DLQs {
		o.logf("%s holds %d dead letters %v", d.Name, d.Total(), d.Reasons)
	}
	return s, nil
}

// driveDeadLetters publishes the fixed content with the consumers that make
// it fail running, and waits until each DLQ holds exactly what it should.
func driveDeadLetters(ctx context.Context, conn *amqp.Connection, dead []outgoing, dlqs []DLQ) error {
	ctx, cancel := context.WithTimeout(ctx, seedTimeout)
	defer cancel()
	g := newGroup(ctx)
	g.goFn(onChannel(conn, func(ctx context.Context, ch *amqp.Channel) error {
		return consume(ctx, ch, qOrders, "orders-service", 10, ordersService(nil))
	}))
	g.goFn(onChannel(conn, func(ctx context.Context, ch *amqp.Channel) error {
		return consume(ctx, ch, qInvoicing, "invoice-renderer", 10, crashingRenderer)
	}))
	frameworkConsumers(g, conn)
	err := publishAndWait(g.ctx, conn, dead, dlqs)
	if stopErr := g.stop(); stopErr != nil {
		return stopErr // a consumer failing explains a wait that failed
	}
	return err
}

func publishAndWait(ctx context.Context, conn *amqp.Connection, dead []outgoing, dlqs []DLQ) error {
	return onConfirmChannel(conn, func(ctx context.Context, ch *amqp.Channel) error {
		if err := publishAll(ctx, ch, dead); err != nil {
			return err
		}
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			done, report, err := dlqsFilled(ch, dlqs)
			if err != nil || done {
				return err
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("demo: dead letters did not arrive in time (%s): %w", report, context.Cause(ctx))
			case <-tick.C:
			}
		}
	})(ctx)
}

// dlqsFilled says whether every DLQ holds exactly its expected count, and
// reports the counts for an error message. More than expected means another
// client is feeding the scene, which waiting cannot fix.
func dlqsFilled(ch *amqp.Channel, dlqs []DLQ) (bool, string, error) {
	done := true
	var report []string
	for _, d := range dlqs {
		n, err := depth(ch, d.Name)
		if err != nil {
			return false, "", err
		}
		report = append(report, fmt.Sprintf("%s %d/%d", d.Name, n, d.Total()))
		if n > d.Total() {
			return false, "", fmt.Errorf("demo: %s holds %d messages, expected %d: is another client feeding the scene's queues?", d.Name, n, d.Total())
		}
		done = done && n == d.Total()
	}
	return done, strings.Join(report, ", "), nil
}

// seedBacklogs gives the live queues something to work on from the start:
// shipping a queue for its slow consumers, email a head start on growing,
// and the reindex queue a batch to drain.
func seedBacklogs(ctx context.Context, conn *amqp.Connection, now time.Time) error {
	var msgs []outgoing
	for i := range 150 {
		msgs = append(msgs, shipment(now.Add(-time.Duration(150-i)*2*time.Second)))
	}
	for i := range 120 {
		msgs = append(msgs, email(now.Add(-time.Duration(120-i)*3*time.Second)))
	}
	msgs = append(msgs, reindexBatch(now.Add(-10*time.Minute))...)
	return onConfirmChannel(conn, func(ctx context.Context, ch *amqp.Channel) error {
		return publishAll(ctx, ch, msgs)
	})(ctx)
}

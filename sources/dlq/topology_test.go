//go:build integration

package dlq

import (
	"context"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/testkit"
)

// The scene the integration tests browse: one classic DLQ, orders.dlq,
// fed by the broker through four paths, each producing one kind of dead
// letter (docs/ARCHITECTURE.md §8).
const (
	sceneDLQ     = "orders.dlq"
	sceneOrders  = "orders"
	sceneTTL     = "payments.wait"
	sceneCapped  = "audit.capped"
	sceneBilling = "billing"
)

func declareExchange(t testing.TB, ch *amqp.Channel, name string) {
	t.Helper()
	if err := ch.ExchangeDeclare(name, "direct", true, false, false, false, nil); err != nil {
		t.Fatalf("declare exchange %s: %v", name, err)
	}
}

func bind(t testing.TB, ch *amqp.Channel, queue, key, exchange string) {
	t.Helper()
	if err := ch.QueueBind(queue, key, exchange, false, nil); err != nil {
		t.Fatalf("bind %s to %s/%s: %v", queue, exchange, key, err)
	}
}

// consumeWith runs settle on every delivery of queue until stop is closed.
func consumeWith(t testing.TB, conn *amqp.Connection, queue string, settle func(amqp.Delivery)) (stop func()) {
	t.Helper()
	ch := testkit.Channel(t, conn)
	if err := ch.Qos(10, 0, false); err != nil {
		t.Fatal(err)
	}
	ds, err := ch.Consume(queue, "", false, false, false, false, nil)
	if err != nil {
		t.Fatalf("consume %s: %v", queue, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for d := range ds {
			settle(d)
		}
	}()
	return func() { ch.Close(); <-done }
}

func event(id string) amqp.Publishing {
	return amqp.Publishing{Headers: amqp.Table{"event_id": id}, Body: []byte(`{"id":"` + id + `"}`), DeliveryMode: amqp.Persistent}
}

// buildScene fills orders.dlq with dead letters made by the broker:
// rejected three times through a retry path, expired, dropped by
// max-length (twice) and pushed out by a quorum delivery limit.
func buildScene(t testing.TB, conn *amqp.Connection) {
	t.Helper()
	ch := testkit.Channel(t, conn)
	toDLQ := func(args amqp.Table) amqp.Table {
		args["x-dead-letter-exchange"] = ""
		args["x-dead-letter-routing-key"] = sceneDLQ
		return args
	}
	testkit.Declare(t, ch, sceneDLQ, nil)

	// Retry path: every rejection from orders goes through orders.dlx by
	// the message's current routing key; each retry queue expires it
	// back with the next key, and the third rejection lands in the DLQ.
	declareExchange(t, ch, "work")
	declareExchange(t, ch, "orders.dlx")
	testkit.Declare(t, ch, sceneOrders, amqp.Table{"x-dead-letter-exchange": "orders.dlx"})
	testkit.Declare(t, ch, "orders.retry1", amqp.Table{"x-message-ttl": int32(10), "x-dead-letter-exchange": "work", "x-dead-letter-routing-key": "a2"})
	testkit.Declare(t, ch, "orders.retry2", amqp.Table{"x-message-ttl": int32(10), "x-dead-letter-exchange": "work", "x-dead-letter-routing-key": "a3"})
	for _, k := range []string{"a1", "a2", "a3"} {
		bind(t, ch, sceneOrders, k, "work")
	}
	bind(t, ch, "orders.retry1", "a1", "orders.dlx")
	bind(t, ch, "orders.retry2", "a2", "orders.dlx")
	bind(t, ch, sceneDLQ, "a3", "orders.dlx")
	stop := consumeWith(t, conn, sceneOrders, func(d amqp.Delivery) { _ = d.Reject(false) })
	publish(t, ch, "work", "a1", event("E-retry"))
	waitReady(t, conn, sceneDLQ, 1)
	stop()

	testkit.Declare(t, ch, sceneTTL, toDLQ(amqp.Table{"x-message-ttl": int32(1)}))
	publish(t, ch, "", sceneTTL, event("E-ttl"))
	waitReady(t, conn, sceneDLQ, 2)

	testkit.Declare(t, ch, sceneCapped, toDLQ(amqp.Table{"x-max-length": int32(1)}))
	publish(t, ch, "", sceneCapped, amqp.Publishing{MessageId: "mid-max1", Body: []byte("one")})
	waitReady(t, conn, sceneCapped, 1)
	publish(t, ch, "", sceneCapped, amqp.Publishing{Body: []byte("two")})
	waitReady(t, conn, sceneCapped, 1)
	publish(t, ch, "", sceneCapped, amqp.Publishing{Body: []byte("three")})
	waitReady(t, conn, sceneDLQ, 4)

	testkit.Declare(t, ch, sceneBilling, toDLQ(amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(2)}))
	// basic.reject: from 4.3 a nack with requeue no longer counts toward
	// the limit, a reject does on every version.
	stop = consumeWith(t, conn, sceneBilling, func(d amqp.Delivery) { _ = d.Reject(true) })
	publish(t, ch, "", sceneBilling, event("E-limit"))
	waitReady(t, conn, sceneDLQ, 5)
	stop()
}

// browseAll reads a whole queue through a session and closes it.
func browseAll(t testing.TB, conn *amqp.Connection, q domain.QueueInfo, o Options) []domain.DeadLetter {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Open(ctx, conn, q, o)
	if err != nil {
		t.Fatalf("open %s: %v", q.Name, err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	var out []domain.DeadLetter
	for {
		p, err := s.Next(ctx)
		if err != nil {
			t.Fatalf("next page of %s: %v", q.Name, err)
		}
		out = append(out, p.Letters...)
		for _, r := range p.Refused {
			out = append(out, r.Letter)
		}
		if p.End {
			return out
		}
	}
}

func logicalIDs(ls []domain.DeadLetter) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.LogicalID
	}
	return out
}

package live

import (
	"context"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/sources/mgmt"
)

// deliveryLimitScene has the broker dead-letter one message from the
// quorum queue work, whose delivery limit is 2, into work.dlq: a
// consumer returns every delivery until the limit drops it.
func deliveryLimitScene(t *testing.T, vhost string) {
	t.Helper()
	conn := testConn(t, vhost)
	ch := testChannel(t, conn)
	declare(t, ch, "work.dlq", nil)
	declare(t, ch, "work", amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(2),
		"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "work.dlq"})
	cons := testChannel(t, conn)
	deliveries, err := cons.Consume("work", "returner", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for d := range deliveries {
			_ = d.Nack(false, true)
		}
	}()
	err = ch.PublishWithContext(context.Background(), "", "work", false, false, amqp.Publishing{
		MessageId: "m-1", Headers: amqp.Table{"event_id": "ev-limit"}, Body: []byte(`{}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	waitDepth(t, ch, "work.dlq", 1)
	if err := cons.Cancel("returner", false); err != nil {
		t.Fatal(err)
	}
}

func TestADeliveryLimitLetterCountsEveryDelivery(t *testing.T) {
	vhost := testVhost(t)
	deliveryLimitScene(t, vhost)
	l := newLive(t, &config.Context{Name: "test", Username: "guest"})
	ctx := testCtx(t)
	s, err := l.Open(ctx, mgmt.QueueRef{Vhost: vhost, Name: "work.dlq"}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	page, err := s.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Letters) != 1 {
		t.Fatalf("page holds %d letters, want 1", len(page.Letters))
	}
	if d := page.Letters[0]; d.Reason != "delivery_limit" || d.OriginQueue != "work" || d.Attempts != 3 {
		t.Fatalf("letter: reason %s from %s with %d attempts, want delivery_limit from work with 3 (limit 2 + 1)", d.Reason, d.OriginQueue, d.Attempts)
	}
}

func TestOriginDeliveryLimits(t *testing.T) {
	dlq := mgmt.QueueRef{Vhost: "/", Name: "orders.dlq"}
	origins := []mgmt.QueueRef{{Vhost: "/", Name: "limited"}, {Vhost: "/", Name: "classic"}, {Vhost: "/", Name: "unlimited"}}
	snap := &mgmt.Snapshot{Overview: mgmt.Overview{RabbitMQVersion: "3.13.7"}, Queues: []mgmt.Queue{
		{Vhost: "/", Name: "orders.dlq", DLQOf: origins},
		{Vhost: "/", Name: "limited", Type: "quorum", Arguments: map[string]any{"x-delivery-limit": float64(5)}},
		{Vhost: "/", Name: "classic", Type: "classic", Arguments: map[string]any{"x-delivery-limit": float64(5)}},
		{Vhost: "/", Name: "unlimited", Type: "quorum"},
	}}
	got := OriginDeliveryLimits(snap, dlq)
	if len(got) != 1 || got["limited"] != 5 {
		t.Fatalf("limits = %v, want only limited: 5", got)
	}
	snap.Overview.RabbitMQVersion = "4.1.0"
	if got := OriginDeliveryLimits(snap, dlq); got["unlimited"] != 20 {
		t.Fatalf("limits on 4.1 = %v, want the default of 20 for unlimited", got)
	}
}

//go:build integration

package ops

import (
	"context"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/testkit"
)

// deliveryLimitScene has the broker dead-letter one message from the
// quorum queue work, whose delivery limit is 2, into work.dlq: a
// consumer rejects every delivery with requeue until the limit drops it
// (basic.reject counts toward the limit on every version; basic.nack no
// longer does on 4.3).
func deliveryLimitScene(t *testing.T, vhost string) {
	t.Helper()
	conn := testConn(t, vhost)
	ch := testkit.Channel(t, conn)
	testkit.Declare(t, ch, "work.dlq", nil)
	testkit.Declare(t, ch, "work", amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(2),
		"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "work.dlq"})
	cons := testkit.Channel(t, conn)
	deliveries, err := cons.Consume("work", "returner", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for d := range deliveries {
			_ = d.Reject(true)
		}
	}()
	err = ch.PublishWithContext(context.Background(), "", "work", false, false, amqp.Publishing{
		MessageId: "m-1", Headers: amqp.Table{"event_id": "ev-limit"}, Body: []byte(`{}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitDepth(t, ch, "work.dlq", 1)
	if err := cons.Cancel("returner", false); err != nil {
		t.Fatal(err)
	}
}

func TestADeliveryLimitLetterCountsEveryDelivery(t *testing.T) {
	vhost := testkit.Vhost(t, "warren-ops")
	deliveryLimitScene(t, vhost)
	l := newOps(t, &config.Context{Name: "test", Username: "guest"})
	ctx := testCtx(t)
	s, err := l.Open(ctx, domain.QueueRef{Vhost: vhost, Name: "work.dlq"}, false)
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

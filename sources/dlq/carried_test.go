//go:build integration

package dlq

import (
	"context"
	"errors"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/testkit"
)

// A quorum origin's dead letters keep the delivery count they reached
// there. Returned to a quorum DLQ whose own limit that count reaches,
// they are dropped — on 4.3 too, where a return costs nothing — so a
// browse of such a DLQ is refused before anything is delivered, unless
// the risk is allowed.
func TestAQuorumDLQFedByAQuorumOriginPastItsLimitIsRefused(t *testing.T) {
	vhost, conn := testVhost(t)
	ch := testkit.Channel(t, conn)
	testkit.Declare(t, ch, "orders.dlq", amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(2)})
	testkit.Declare(t, ch, "orders", amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(3),
		"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq"})
	publish(t, ch, "", "orders", amqp.Publishing{MessageId: "m-1", Body: []byte("b")})
	// A delivery its connection leaves unacknowledged counts, on every
	// version: the fourth dead-letters the message by its limit.
	for range 10 {
		c, err := amqp.DialConfig(testkit.AMQPURL, amqp.Config{Vhost: vhost})
		if err != nil {
			t.Fatal(err)
		}
		cch, err := c.Channel()
		if err != nil {
			t.Fatal(err)
		}
		_, ok, err := cch.Get("orders", false)
		_ = c.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
	}
	waitReady(t, conn, "orders.dlq", 1)

	q := domain.QueueInfo{Vhost: vhost, Name: "orders.dlq", Type: domain.TypeQuorum, DeliveryLimit: 2, BrokerVersion: testkit.Version(t)}
	o := Options{OriginDeliveryLimits: map[string]int64{"orders": 3}}
	_, err := Open(context.Background(), conn, q, o)
	var refused *domain.RefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("open: %v, want the browse refused", err)
	}
	if testkit.AtLeast(t, 4, 3) && !strings.Contains(refused.Reason, "origin orders dead-letters messages delivered up to 4 times") {
		t.Errorf("on 4.3 the refusal does not name the carried count: %q", refused.Reason)
	}
	waitReady(t, conn, "orders.dlq", 1)

	// What the guard keeps from happening: a plain return drops it.
	c := testkit.Channel(t, conn)
	d, ok, err := c.Get("orders.dlq", false)
	if err != nil || !ok {
		t.Fatalf("get: %v %v", ok, err)
	}
	if err := d.Nack(false, true); err != nil {
		t.Fatal(err)
	}
	waitReady(t, conn, "orders.dlq", 0)
}

//go:build integration

package dlq

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

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
	// version: the fourth dead-letters the message by its limit. A get
	// that finds nothing came while a return was still on its way back:
	// try again until the DLQ holds the message.
	for deadline := time.Now().Add(30 * time.Second); readyIn(t, conn, "orders.dlq") == 0 && time.Now().Before(deadline); {
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
			time.Sleep(50 * time.Millisecond)
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
	if !testkit.AtLeast(t, 4, 3) {
		return // before 4.3 the guard refuses because a return costs a count (guard_test.go)
	}

	// What the guard keeps from happening on 4.3, where a return costs
	// nothing: a plain return drops it, by the count it carried.
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

// readyIn is how many messages queue holds, as a passive declare says.
func readyIn(t *testing.T, conn *amqp.Connection, queue string) int {
	t.Helper()
	ch := testkit.Channel(t, conn)
	defer ch.Close()
	q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
	if err != nil {
		t.Fatalf("inspect %s: %v", queue, err)
	}
	return q.Messages
}

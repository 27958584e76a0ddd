package demo

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// outgoing is one message to publish. reason and dlq say where the broker
// is expected to dead-letter it, if anywhere.
type outgoing struct {
	exchange, key string
	pub           amqp.Publishing
	eventID       string
	dlq, reason   string
}

// stableID is a UUID-shaped ID derived from its parts, so that every seed
// produces the same IDs and re-running converges on the same content.
func stableID(parts ...any) string {
	h := sha256.Sum256([]byte(fmt.Sprint(parts...)))
	h[6] = h[6]&0x0f | 0x80 // version 8: application-defined
	h[8] = h[8]&0x3f | 0x80
	return uuidString(h[:16])
}

func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return uuidString(b[:])
}

func uuidString(b []byte) string {
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

type item struct {
	SKU      string `json:"sku"`
	Quantity int    `json:"quantity"`
}

// order is the body of an order.placed event.
type order struct {
	EventID     string    `json:"event_id"`
	EventType   string    `json:"event_type"`
	OrderID     string    `json:"order_id"`
	CustomerID  string    `json:"customer_id"`
	AmountCents int       `json:"amount_cents"`
	Currency    string    `json:"currency"`
	Warehouse   string    `json:"warehouse"`
	Items       []item    `json:"items"`
	PlacedAt    time.Time `json:"placed_at"`
}

var (
	skus       = []string{"BOOK-0451", "MUG-CLASSIC", "TEE-M-NAVY", "LAMP-ARC", "KBD-TKL-BR", "SOCKS-3PK"}
	warehouses = []string{"eu-central-1", "eu-west-2", "us-east-1"}
)

// newOrder draws a plausible order. Poison kinds make the orders consumer
// fail every attempt: "currency" (unsupported), "items" (empty order),
// "amount" (non-positive total).
func newOrder(r *mrand.Rand, eventID string, n int, at time.Time, poison string) order {
	o := order{
		EventID:    eventID,
		EventType:  rkPlaced,
		OrderID:    fmt.Sprintf("ORD-%06d", 400000+n),
		CustomerID: fmt.Sprintf("CUS-%05d", 10000+r.IntN(90000)),
		Currency:   []string{"EUR", "EUR", "USD", "GBP"}[r.IntN(4)],
		Warehouse:  warehouses[r.IntN(len(warehouses))],
		PlacedAt:   at.UTC().Truncate(time.Second),
	}
	for range 1 + r.IntN(3) {
		o.Items = append(o.Items, item{SKU: skus[r.IntN(len(skus))], Quantity: 1 + r.IntN(3)})
	}
	o.AmountCents = 990 + r.IntN(25000)
	switch poison {
	case "currency":
		o.Currency = "XXX"
	case "items":
		o.Items = []item{}
	case "amount":
		o.AmountCents = -o.AmountCents
	}
	return o
}

// jsonMessage wraps a body the way the scene's publishers do: persistent,
// JSON, with message_id, correlation_id, timestamp and an event_id header.
func jsonMessage(body any, eventID, messageID, correlationID, app, kind string, at time.Time) amqp.Publishing {
	b, err := json.Marshal(body)
	if err != nil {
		panic(fmt.Sprintf("demo: marshal %T: %v", body, err)) // only fixed struct types reach here
	}
	h := amqp.Table{}
	if eventID != "" {
		h["event_id"] = eventID
	}
	return amqp.Publishing{
		ContentType:   "application/json",
		DeliveryMode:  amqp.Persistent,
		MessageId:     messageID,
		CorrelationId: correlationID,
		Timestamp:     at.UTC().Truncate(time.Second),
		AppId:         app,
		Type:          kind,
		Headers:       h,
		Body:          b,
	}
}

func orderMessage(o order, messageID string, at time.Time) amqp.Publishing {
	return jsonMessage(o, o.EventID, messageID, "checkout-"+o.OrderID, "order-gateway", rkPlaced, at)
}

// simpleEvent is the body of the live queues' messages.
type simpleEvent struct {
	EventID   string    `json:"event_id"`
	EventType string    `json:"event_type"`
	Ref       string    `json:"ref"`
	At        time.Time `json:"at"`
}

func liveMessage(queue, app, kind, ref string, at time.Time) outgoing {
	id := randomID()
	return outgoing{
		key:     queue,
		eventID: id,
		pub:     jsonMessage(simpleEvent{id, kind, ref, at.UTC()}, id, randomID(), ref, app, kind, at),
	}
}

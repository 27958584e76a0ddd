package demo

import (
	"fmt"
	mrand "math/rand/v2"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/warrenops/warren/domain"
)

// deadLetters is the fixed content the seed drives through the broker: the
// same messages, with the same IDs, on every run. Only timestamps move with
// now.
func deadLetters(now time.Time) []outgoing {
	r := mrand.New(mrand.NewPCG(2024, 7))
	var out []outgoing
	out = append(out, poisonOrders(r, now)...)
	out = append(out, pendingPayments(now)...)
	out = append(out, statusUpdates(now)...)
	out = append(out, invoices(now)...)
	out = append(out, payments(now)...)
	return append(out, frameworkLetters(now)...)
}

// poisonOrders fail on every attempt and reach orders.dlq after three. One
// order was published twice (the gateway retried after a lost confirm), so
// two dead letters share a logical ID under different message IDs; a few
// carry the upstream x-retry-count.
func poisonOrders(r *mrand.Rand, now time.Time) []outgoing {
	kinds := []string{"currency", "items", "amount"}
	var out []outgoing
	for n := range 11 {
		at := now.Add(-time.Duration(90-7*n) * time.Minute)
		o := newOrder(r, stableID("order", n), n, at, kinds[n%len(kinds)])
		pub := orderMessage(o, stableID("order-msg", n), at)
		switch n {
		case 4:
			pub.Headers["x-retry-count"] = int32(2)
		case 8:
			pub.Headers["x-retry-count"] = int32(5)
		}
		out = append(out, outgoing{xOrders, rkPlaced, pub, o.EventID, qOrdersDLQ, domain.ReasonRejected})
		if n == 3 {
			dup := orderMessage(o, stableID("order-msg-retry", n), at.Add(2*time.Second))
			dup.Headers["x-retry-count"] = int32(1)
			out = append(out, outgoing{xOrders, rkPlaced, dup, o.EventID, qOrdersDLQ, domain.ReasonRejected})
		}
	}
	return out
}

type paymentWait struct {
	EventID     string    `json:"event_id"`
	EventType   string    `json:"event_type"`
	OrderID     string    `json:"order_id"`
	AmountCents int       `json:"amount_cents"`
	Currency    string    `json:"currency"`
	DeadlineAt  time.Time `json:"deadline_at"`
}

// pendingPayments expire through orders.pending-payment's queue TTL.
func pendingPayments(now time.Time) []outgoing {
	var out []outgoing
	for n := range 4 {
		id := stableID("pending", n)
		at := now.Add(-time.Duration(40-5*n) * time.Minute)
		body := paymentWait{id, rkAwaitingPayment, fmt.Sprintf("ORD-%06d", 401200+n), 4590 + 1000*n, "EUR", at.Add(15 * time.Minute).UTC()}
		pub := jsonMessage(body, id, stableID("pending-msg", n), "checkout-"+body.OrderID, "checkout", rkAwaitingPayment, at)
		out = append(out, outgoing{xOrders, rkAwaitingPayment, pub, id, qOrdersDLQ, domain.ReasonExpired})
	}
	return out
}

type statusUpdate struct {
	EventID   string    `json:"event_id"`
	EventType string    `json:"event_type"`
	OrderID   string    `json:"order_id"`
	Status    string    `json:"status"`
	At        time.Time `json:"at"`
}

// statusUpdates overflow orders.status (max length 5, drop-head): the
// oldest are dead-lettered with reason maxlen, the newest five stay.
func statusUpdates(now time.Time) []outgoing {
	statuses := []string{"paid", "picked", "packed", "shipped", "delivered"}
	const total = 11
	var out []outgoing
	for n := range total {
		id := stableID("status", n)
		at := now.Add(-time.Duration(30-2*n) * time.Minute)
		body := statusUpdate{id, rkStatus, fmt.Sprintf("ORD-%06d", 401300+n/2), statuses[n%len(statuses)], at.UTC()}
		pub := jsonMessage(body, id, stableID("status-msg", n), "fulfilment-"+body.OrderID, "fulfilment", rkStatus, at)
		o := outgoing{exchange: xOrders, key: rkStatus, pub: pub, eventID: id}
		if n < total-statusMaxLength {
			o.dlq, o.reason = qOrdersDLQ, domain.ReasonMaxLen
		}
		out = append(out, o)
	}
	return out
}

// invoices are nacked with requeue by a crashing renderer until the quorum
// queue's delivery limit dead-letters them.
func invoices(now time.Time) []outgoing {
	var out []outgoing
	for n := range 4 {
		id := stableID("invoice", n)
		at := now.Add(-time.Duration(20-3*n) * time.Minute)
		body := simpleEvent{id, rkInvoice, fmt.Sprintf("ORD-%06d", 401400+n), at.UTC()}
		pub := jsonMessage(body, id, stableID("invoice-msg", n), "billing-"+body.Ref, "billing", rkInvoice, at)
		out = append(out, outgoing{xOrders, rkInvoice, pub, id, qOrdersDLQ, domain.ReasonDeliveryLimit})
	}
	return out
}

type authorization struct {
	EventID     string `json:"event_id,omitempty"`
	PaymentID   string `json:"payment_id"`
	OrderID     string `json:"order_id"`
	AmountCents int    `json:"amount_cents"`
	Currency    string `json:"currency"`
	Provider    string `json:"provider"`
}

// payments expire by per-message expiration into payments.dlq (paired by
// policy). They exercise the logical-ID fallbacks: two legacy messages lack
// message_id, one lacks event_id, and one is a binary body with neither.
func payments(now time.Time) []outgoing {
	var out []outgoing
	add := func(pub amqp.Publishing, eventID string) {
		pub.Expiration = "1000"
		out = append(out, outgoing{xPayments, rkAuthorize, pub, eventID, qPaymentsDLQ, domain.ReasonExpired})
	}
	for n := range 5 {
		id := stableID("payment", n)
		at := now.Add(-time.Duration(25-4*n) * time.Minute)
		body := authorization{id, fmt.Sprintf("PAY-%07d", 7700100+n), fmt.Sprintf("ORD-%06d", 401500+n), 1250 + 730*n, "EUR", "acquirer-b"}
		msgID, app := stableID("payment-msg", n), "payments-api"
		if n >= 3 {
			msgID, app = "", "legacy-billing"
		}
		pub := jsonMessage(body, id, msgID, "pay-"+body.PaymentID, app, rkAuthorize, at)
		pub.Headers["x-retry-count"] = int32(n % 3)
		add(pub, id)
	}
	noEvent := authorization{PaymentID: "PAY-7700190", OrderID: "ORD-401590", AmountCents: 3300, Currency: "GBP", Provider: "acquirer-a"}
	add(jsonMessage(noEvent, "", stableID("payment-msg", "no-event"), "pay-PAY-7700190", "payments-api", rkAuthorize, now.Add(-3*time.Minute)), "")
	add(amqp.Publishing{
		ContentType:  "application/x-protobuf",
		DeliveryMode: amqp.Persistent,
		Timestamp:    now.Add(-2 * time.Minute).UTC().Truncate(time.Second),
		AppId:        "legacy-billing",
		Type:         "payments.v1.Authorize",
		Body:         []byte{0x0a, 0x0b, 'P', 'A', 'Y', '-', '7', '7', '0', '0', '1', '9', '9', 0x10, 0xe8, 0x07, 0x1b, '[', '3', '1', 'm', 0x00, 0xff, 0xfe},
	}, "")
	return out
}

// expected counts the dead letters per DLQ and reason.
func expected(msgs []outgoing) map[string]map[string]int {
	m := map[string]map[string]int{}
	for _, o := range msgs {
		if o.dlq == "" {
			continue
		}
		if m[o.dlq] == nil {
			m[o.dlq] = map[string]int{}
		}
		m[o.dlq][o.reason]++
	}
	return m
}

package demo

import (
	"errors"
	"fmt"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Exchanges, queues and routing keys of the scene.
const (
	xOrders      = "orders"       // topic: the business exchange
	xOrdersRetry = "orders.retry" // topic: orders' DLX, one hop per attempt
	xOrdersDLX   = "orders.dlx"   // fanout: the final DLX of the orders family
	xPayments    = "payments"
	xPaymentsDLX = "payments.dlx" // reached through a policy, not arguments

	qOrders         = "orders"
	qOrdersRetry    = "orders.retry"
	qOrdersRetry2   = "orders.retry.2"
	qPendingPayment = "orders.pending-payment"
	qStatus         = "orders.status"
	qInvoicing      = "orders.invoicing"
	qOrdersDLQ      = "orders.dlq"
	qPayments       = "payments"
	qPaymentsDLQ    = "payments.dlq"
	qShipping       = "shipping"
	qEmail          = "notifications.email"
	qReindex        = "search.reindex"

	rkPlaced          = "order.placed"
	rkAttempt2        = "orders.attempt.2"
	rkAttempt3        = "orders.attempt.3"
	rkAwaitingPayment = "order.awaiting_payment"
	rkStatus          = "order.status.updated"
	rkInvoice         = "order.invoice"
	rkAuthorize       = "payment.authorize"

	paymentsPolicy = "warren-demo.payments-dlx"

	statusMaxLength = 5
	invoicingLimit  = 2
)

// A reject cannot choose its DLX, so the attempt count lives in the routing
// key instead: each retry queue dead-letters back to orders under a new key,
// and orders.retry routes the key of the third failure on to orders.dlx.
// Every hop is a broker dead-letter, so orders.dlq receives reason
// "rejected" with x-death entries for orders, orders.retry and
// orders.retry.2. A replay through the default exchange (key "orders")
// enters the same path at the first tier.
var exchanges = []struct{ name, kind string }{
	{xOrders, amqp.ExchangeTopic},
	{xOrdersRetry, amqp.ExchangeTopic},
	{xOrdersDLX, amqp.ExchangeFanout},
	{xPayments, amqp.ExchangeDirect},
	{xPaymentsDLX, amqp.ExchangeFanout},
	{xShipments, amqp.ExchangeFanout},
	{xShipmentsErr, amqp.ExchangeFanout},
	{xBillingEvents, amqp.ExchangeDirect},
}

type binding struct{ exchange, key string }

type queueDecl struct {
	name  string
	args  amqp.Table
	binds []binding
}

func dlx(exchange string) amqp.Table { return amqp.Table{"x-dead-letter-exchange": exchange} }

// queues is ordered sources first, so a purge in this order cannot leave a
// message dead-lettered out of a source into an already purged DLQ.
var queues = []queueDecl{
	{qOrdersRetry, amqp.Table{"x-message-ttl": int32(250), "x-dead-letter-exchange": xOrders, "x-dead-letter-routing-key": rkAttempt2},
		[]binding{{xOrdersRetry, rkPlaced}, {xOrdersRetry, qOrders}}},
	{qOrdersRetry2, amqp.Table{"x-message-ttl": int32(500), "x-dead-letter-exchange": xOrders, "x-dead-letter-routing-key": rkAttempt3},
		[]binding{{xOrdersRetry, rkAttempt2}}},
	{qOrders, dlx(xOrdersRetry), []binding{{xOrders, rkPlaced}, {xOrders, "orders.attempt.*"}}},
	{qPendingPayment, amqp.Table{"x-message-ttl": int32(1000), "x-dead-letter-exchange": xOrdersDLX},
		[]binding{{xOrders, rkAwaitingPayment}}},
	{qStatus, amqp.Table{"x-max-length": int32(statusMaxLength), "x-dead-letter-exchange": xOrdersDLX},
		[]binding{{xOrders, "order.status.*"}}},
	{qInvoicing, amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(invoicingLimit), "x-dead-letter-exchange": xOrdersDLX},
		[]binding{{xOrders, rkInvoice}}},
	{qOrdersDLQ, nil, []binding{{xOrdersDLX, ""}}},
	{qPayments, nil, []binding{{xPayments, rkAuthorize}}},
	{qPaymentsDLQ, nil, []binding{{xPaymentsDLX, ""}}},
	{qShipping, nil, nil},
	{qEmail, nil, nil},
	{qReindex, nil, nil},
	{qShipments, nil, []binding{{xShipments, ""}}},
	{qBilling, nil, []binding{{xBillingEvents, rkBilling}}},
	{qShipmentsErr, nil, []binding{{xShipmentsErr, ""}}},
	{qBillingDLQ, nil, nil},
}

// declare creates (or confirms) the whole topology. Declarations are
// idempotent as long as the arguments match; a queue left with other
// arguments is reported rather than deleted, since the vhost might not be
// the demo's own.
func declare(conn *amqp.Connection) error {
	ch, err := conn.Channel()
	if err != nil {
		return fmt.Errorf("demo: open channel: %w", err)
	}
	defer ch.Close()
	for _, x := range exchanges {
		if err := ch.ExchangeDeclare(x.name, x.kind, true, false, false, false, nil); err != nil {
			return declareErr("exchange", x.name, err)
		}
	}
	if err := ch.ExchangeBind(xOrdersDLX, rkAttempt3, xOrdersRetry, false, nil); err != nil {
		return fmt.Errorf("demo: bind exchange %s to %s: %w", xOrdersDLX, xOrdersRetry, err)
	}
	for _, q := range queues {
		if _, err := ch.QueueDeclare(q.name, true, false, false, false, q.args); err != nil {
			return declareErr("queue", q.name, err)
		}
		for _, b := range q.binds {
			if err := ch.QueueBind(q.name, b.key, b.exchange, false, nil); err != nil {
				return fmt.Errorf("demo: bind queue %s to %s (%q): %w", q.name, b.exchange, b.key, err)
			}
		}
	}
	return nil
}

func declareErr(kind, name string, err error) error {
	var amqpErr *amqp.Error
	if errors.As(err, &amqpErr) && amqpErr.Code == amqp.PreconditionFailed {
		return fmt.Errorf("demo: %s %s already exists with other settings (%s); delete it or seed another vhost", kind, name, amqpErr.Reason)
	}
	return fmt.Errorf("demo: declare %s %s: %w", kind, name, err)
}

// purge empties every scene queue, sources first.
func purge(conn *amqp.Connection) error {
	ch, err := conn.Channel()
	if err != nil {
		return fmt.Errorf("demo: open channel: %w", err)
	}
	defer ch.Close()
	for _, q := range queues {
		if _, err := ch.QueuePurge(q.name, false); err != nil {
			return fmt.Errorf("demo: purge %s: %w", q.name, err)
		}
	}
	return nil
}

// depth is the number of ready messages in a queue, straight from the
// broker (queue.declare-ok), without the management API's stats lag.
func depth(ch *amqp.Channel, queue string) (int, error) {
	q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
	if err != nil {
		return 0, fmt.Errorf("demo: inspect %s: %w", queue, err)
	}
	return q.Messages, nil
}

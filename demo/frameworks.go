package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Two error queues written by frameworks instead of the broker
// (docs/ARCHITECTURE.md §4.12), each with a few failure groups:
//
//   - shipments is a MassTransit receive endpoint: its consumer catches the
//     exception and moves the message to shipments_error with MT-Fault-*
//     headers, as MassTransit's RabbitMqErrorTransport does;
//   - billing is a Spring listener with RepublishMessageRecoverer: a failed
//     message goes to billing.dlq with x-exception-* and x-original-*
//     headers.
//
// Neither error queue is any queue's dead-letter target: warren pairs them
// by the frameworks' naming (shipments_error, billing.dlq).
const (
	xShipments     = "shipments" // MassTransit's endpoint exchange, fanout
	xShipmentsErr  = "shipments_error"
	xBillingEvents = "billing-events"
	qShipments     = "shipments"
	qShipmentsErr  = "shipments_error"
	qBilling       = "billing"
	qBillingDLQ    = "billing.dlq"
	rkBilling      = "billing"

	reasonException = "exception"
)

// failure is what a demo consumer throws for one message: its body says
// which, so the same content fails the same way on every seed.
type failure struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// frameworkEvent is the body of a shipment or billing event.
type frameworkEvent struct {
	EventID string  `json:"event_id"`
	Subject string  `json:"subject"`
	Fail    failure `json:"fail"`
}

func frameworkLetters(now time.Time) []outgoing {
	shipments := []failure{
		{"Shipping.ShipmentNotFoundException", "Shipment 4001 not found"},
		{"Shipping.ShipmentNotFoundException", "Shipment 4002 not found"},
		{"Shipping.ShipmentNotFoundException", "Shipment 4007 not found"},
		{"System.TimeoutException", "Carrier API timed out after 30000 ms"},
		{"System.TimeoutException", "Carrier API timed out after 30000 ms"},
		{"FluentValidation.ValidationException", "Address of customer 'c-17' failed validation"},
	}
	billing := []failure{
		{"com.acme.billing.PaymentDeclinedException", "Card ending 4242 declined for invoice 9001"},
		{"com.acme.billing.PaymentDeclinedException", "Card ending 1881 declined for invoice 9002"},
		{"com.acme.billing.PaymentDeclinedException", "Card ending 4242 declined for invoice 9005"},
		{"java.lang.IllegalStateException", "Invoice 9004 has no customer"},
		{"java.lang.IllegalStateException", "Invoice 9006 has no customer"},
	}
	var out []outgoing
	add := func(exchange, key, dlq string, n int, f failure) {
		e := frameworkEvent{EventID: stableID(dlq, n), Subject: fmt.Sprintf("%s-%d", key, n), Fail: f}
		body, _ := json.Marshal(e) // a struct of strings always marshals
		out = append(out, outgoing{exchange: exchange, key: key, eventID: e.EventID, dlq: dlq, reason: reasonException,
			pub: amqp.Publishing{ContentType: "application/json", DeliveryMode: amqp.Persistent, MessageId: e.EventID,
				Timestamp: now.Add(-time.Duration(40-n) * time.Minute), Body: body}})
	}
	for n, f := range shipments {
		add(xShipments, "", qShipmentsErr, n, f)
	}
	for n, f := range billing {
		add(xBillingEvents, rkBilling, qBillingDLQ, n, f)
	}
	return out
}

// massTransitConsumer fails every shipment and moves it to
// shipments_error as MassTransit does: the message's own properties and
// headers kept, the MT-Fault-* headers of SetExceptionHeaders added.
func massTransitConsumer(ch *amqp.Channel) func(context.Context, amqp.Delivery) error {
	return func(ctx context.Context, d amqp.Delivery) error {
		var e frameworkEvent
		_ = json.Unmarshal(d.Body, &e) // the demo's own content
		h := copyTable(d.Headers)
		h["MT-Reason"] = "fault"
		h["MT-Fault-ExceptionType"] = e.Fail.Type
		h["MT-Fault-Message"] = e.Fail.Message
		h["MT-Fault-StackTrace"] = "   at Shipping.ShipmentConsumer.Consume(ConsumeContext`1 context) in /src/Shipping/ShipmentConsumer.cs:line 37\n" +
			"   at MassTransit.DependencyInjection.ScopeConsumerFactory`1.Send[TMessage](ConsumeContext`1 context, IPipe`1 next)"
		h["MT-Fault-InputAddress"] = "rabbitmq://localhost/warren-demo/" + qShipments
		h["MT-Fault-Timestamp"] = time.Now().UTC().Format("2006-01-02T15:04:05.0000000Z")
		h["MT-Fault-ConsumerType"] = "Shipping.ShipmentConsumer"
		h["MT-Fault-RetryCount"] = int32(2)
		h["MT-Host-MachineName"] = "shipping-7f9c"
		return republish(ctx, ch, d, xShipmentsErr, d.RoutingKey, h)
	}
}

// springListener fails every billing event and republishes it to
// billing.dlq as RepublishMessageRecoverer does.
func springListener(ch *amqp.Channel) func(context.Context, amqp.Delivery) error {
	return func(ctx context.Context, d amqp.Delivery) error {
		var e frameworkEvent
		_ = json.Unmarshal(d.Body, &e)
		h := copyTable(d.Headers)
		h["x-exception-message"] = e.Fail.Message
		h["x-exception-stacktrace"] = "org.springframework.amqp.rabbit.support.ListenerExecutionFailedException: Listener method 'public void com.acme.billing.InvoiceListener.on(com.acme.billing.Invoice)' threw exception\n" +
			"\tat org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer.wrapToListenerExecutionFailedExceptionIfNeeded(AbstractMessageListenerContainer.java:1775)\n" +
			"Caused by: " + e.Fail.Type + ": " + e.Fail.Message + "\n\tat com.acme.billing.InvoiceListener.on(InvoiceListener.java:42)\n"
		h["x-original-exchange"] = d.Exchange
		h["x-original-routingKey"] = d.RoutingKey
		return republish(ctx, ch, d, "", qBillingDLQ, h)
	}
}

// republish publishes d's copy with headers h and acknowledges d once the
// broker confirmed the copy, as the frameworks do.
func republish(ctx context.Context, ch *amqp.Channel, d amqp.Delivery, exchange, key string, h amqp.Table) error {
	conf, err := ch.PublishWithDeferredConfirmWithContext(ctx, exchange, key, true, false, amqp.Publishing{
		Headers: h, ContentType: d.ContentType, DeliveryMode: d.DeliveryMode, MessageId: d.MessageId,
		CorrelationId: d.CorrelationId, Timestamp: d.Timestamp, Type: d.Type, Body: d.Body,
	})
	if err != nil {
		return err
	}
	if ok, err := conf.WaitContext(ctx); err != nil || !ok {
		return fmt.Errorf("the broker did not confirm the error copy of %s (%v)", d.MessageId, err)
	}
	return d.Ack(false)
}

func copyTable(t amqp.Table) amqp.Table {
	out := make(amqp.Table, len(t)+10)
	for k, v := range t {
		out[k] = v
	}
	return out
}

// frameworkConsumers runs the MassTransit and Spring stand-ins on g.
func frameworkConsumers(g *group, conn *amqp.Connection) {
	for _, c := range []struct {
		queue, tag string
		handle     func(*amqp.Channel) func(context.Context, amqp.Delivery) error
	}{
		{qShipments, "masstransit-shipments", massTransitConsumer},
		{qBilling, "spring-billing", springListener},
	} {
		g.goFn(onChannel(conn, func(ctx context.Context, ch *amqp.Channel) error {
			if err := ch.Confirm(false); err != nil {
				return fmt.Errorf("demo: confirm mode for %s: %w", c.tag, err)
			}
			return consume(ctx, ch, c.queue, c.tag, 10, c.handle(ch))
		}))
	}
}

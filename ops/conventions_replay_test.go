//go:build integration

package ops

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/sources/dlq"
	"github.com/warrenops/warren/testkit"
)

// Replays of the error queues frameworks write (docs/ARCHITECTURE.md §4.4,
// §4.12), each on a vhost of its own: the letters go back to where their
// framework says they came from, only where the error queue's pairing
// confirms it, and arrive there once each, counted by logical ID. The
// .NET and Java frameworks cannot run here, so their letters are built
// with the header names and value types of the frameworks' own source, as
// sources/dlq/frameworks.go cites them; rascal and Watermill run for real.

// conventionScene is one case's vhost, a channel on it, and one Ops that
// lives through the case as the dashboard's does (what a scan learns
// stays learned).
type conventionScene struct {
	t     *testing.T
	vhost string
	ch    *amqp.Channel
	ops   *Ops
	ctx   context.Context
}

func newConventionScene(t *testing.T) *conventionScene {
	t.Helper()
	vhost := testkit.Vhost(t, "warren-conv")
	return &conventionScene{
		t: t, vhost: vhost, ch: testkit.Channel(t, testConn(t, vhost)),
		// No queue in the config: the pairing is the broker's and the
		// frameworks' naming, and the logical ID the message ID.
		ops: newOps(t, &config.Context{Name: "test", Username: "guest"}),
		ctx: testCtx(t),
	}
}

func (s *conventionScene) declare(name string, args amqp.Table) {
	testkit.Declare(s.t, s.ch, name, args)
}

// deadLettersInto are the arguments of a queue that dead-letters into dlq.
func deadLettersInto(dlq string) amqp.Table {
	return amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq}
}

// put publishes msgs into queue through the default exchange, as the
// framework that wrote them would, and waits for them.
func (s *conventionScene) put(queue string, msgs ...amqp.Publishing) {
	s.t.Helper()
	before := testkit.Depth(s.t, s.ch, queue)
	for _, m := range msgs {
		if err := s.ch.Publish("", queue, true, false, m); err != nil {
			s.t.Fatalf("publish to %s: %v", queue, err)
		}
	}
	testkit.WaitDepth(s.t, s.ch, queue, before+len(msgs))
}

func (s *conventionScene) ref(queue string) domain.QueueRef {
	return domain.QueueRef{Vhost: s.vhost, Name: queue}
}

// replay runs what `warren dlq replay QUEUE --yes` runs: every message
// the queue holds streamed without a preview (a Scope no one is asked
// about, planned then run). sc's filter and --to are the operator's.
func (s *conventionScene) replay(queue string, sc Scope) Result {
	s.t.Helper()
	sc.Action, sc.Queue, sc.Unasked = Replay, s.ref(queue), true
	p, err := s.ops.Plan(s.ctx, sc)
	if err != nil {
		s.t.Fatalf("plan a replay of %s: %v", queue, err)
	}
	res, err := s.ops.Run(s.ctx, p, nil)
	if err != nil {
		s.t.Fatalf("replay %s: %v (result %+v)", queue, err, res.Counts)
	}
	s.t.Logf("replay %s: %d read, %d moved, %d kept; confirmed %d, returned %d, nacked %d, unknown %d",
		queue, res.Taken, res.Moved, res.Kept, res.Confirmed, res.Returned, res.Nacked, res.Unknown)
	return res
}

// plan is the prompt's question for a whole-queue replay of queue.
func (s *conventionScene) plan(queue string) *Plan {
	s.t.Helper()
	p, err := s.ops.Plan(s.ctx, Scope{Action: Replay, Queue: s.ref(queue)})
	if err != nil {
		s.t.Fatalf("plan a replay of %s: %v", queue, err)
	}
	s.t.Cleanup(func() { p.Close() })
	s.t.Logf("plan: %s", p.Summary)
	return p
}

// take removes every message queue holds now. The copies of a replay
// are in their queues once it returns (each was confirmed), so what is
// not there was not delivered, and what is there twice was.
func (s *conventionScene) take(queue string) []amqp.Delivery {
	s.t.Helper()
	var out []amqp.Delivery
	for {
		d, ok, err := s.ch.Get(queue, true)
		if err != nil {
			s.t.Fatalf("get from %s: %v", queue, err)
		}
		if !ok {
			return out
		}
		out = append(out, d)
	}
}

// peek reads the n messages queue holds and gives them back, in order.
func (s *conventionScene) peek(queue string, n int) []amqp.Delivery {
	s.t.Helper()
	ch := testkit.Channel(s.t, testConn(s.t, s.vhost))
	var out []amqp.Delivery
	for range n {
		d, ok, err := ch.Get(queue, false)
		if err != nil || !ok {
			s.t.Fatalf("get from %s: %v, %v (%d of %d read)", queue, ok, err, len(out), n)
		}
		out = append(out, d)
	}
	if n > 0 {
		if err := out[n-1].Nack(true, true); err != nil {
			s.t.Fatal(err)
		}
	}
	testkit.WaitDepth(s.t, ch, queue, n)
	return out
}

// empty checks that queue holds nothing, naming what it holds.
func (s *conventionScene) empty(queue, why string) {
	s.t.Helper()
	if n := testkit.Depth(s.t, s.ch, queue); n != 0 {
		var ids []string
		for _, d := range s.take(queue) {
			ids = append(ids, d.MessageId)
		}
		s.t.Errorf("%s holds %d messages %v, want none: %s", queue, n, ids, why)
	}
}

// arrivals counts the deliveries by key.
func arrivals(ds []amqp.Delivery, key func(amqp.Delivery) string) map[string]int {
	out := map[string]int{}
	for _, d := range ds {
		out[key(d)]++
	}
	return out
}

func byMessageID(d amqp.Delivery) string { return d.MessageId }

// onceEach checks that every id arrived exactly once and nothing else did.
func onceEach(t *testing.T, where string, got map[string]int, ids []string) {
	t.Helper()
	want := map[string]int{}
	for _, id := range ids {
		want[id] = 1
	}
	if !maps.Equal(got, want) {
		var lost, twice, foreign []string
		for _, id := range ids {
			switch n := got[id]; {
			case n == 0:
				lost = append(lost, id)
			case n > 1:
				twice = append(twice, fmt.Sprintf("%s ×%d", id, n))
			}
		}
		for id := range got {
			if want[id] == 0 {
				foreign = append(foreign, id)
			}
		}
		slices.Sort(foreign)
		t.Errorf("%s received %v; want each of %v once: lost %v, more than once %v, not expected %v", where, got, ids, lost, twice, foreign)
	}
}

// checkStamped checks that a copy carries the operation's ID and a
// replay count of one.
func checkStamped(t *testing.T, d amqp.Delivery, res Result) {
	t.Helper()
	if op := d.Headers[actions.HeaderOperation]; op != res.Operation {
		t.Errorf("%s: %s = %v, want the operation %s", d.MessageId, actions.HeaderOperation, op, res.Operation)
	}
	if n := d.Headers[actions.HeaderReplayCount]; n != int64(1) {
		t.Errorf("%s: %s = %#v, want 1", d.MessageId, actions.HeaderReplayCount, n)
	}
}

func ids(prefix string, from, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, from+i)
	}
	return out
}

// massTransitFault is a message MassTransit's error transport moved to
// <queue>_error. Header names: MassTransit,
// src/MassTransit.Abstractions/MessageHeaders.cs (Reason,
// FaultExceptionType, FaultMessage, FaultStackTrace, FaultInputAddress,
// FaultTimestamp, FaultRetryCount), written by SetExceptionHeaders in
// src/MassTransit.Abstractions/Contexts/SendContextExtensions.cs: strings,
// the timestamp in .NET's "O" format, the retry count an int32. input is
// the queue the endpoint's input address names.
func massTransitFault(id, input, excType, msg string) amqp.Publishing {
	return amqp.Publishing{
		MessageId: id, ContentType: "application/vnd.masstransit+json", DeliveryMode: amqp.Persistent,
		Body: []byte(`{"messageId":"` + id + `","message":{"orderId":"` + id + `"}}`),
		Headers: amqp.Table{
			"MT-Reason":                  "fault",
			"MT-Fault-ExceptionType":     excType,
			"MT-Fault-Message":           msg,
			"MT-Fault-StackTrace":        "   at Orders.SubmitOrderConsumer.Consume(ConsumeContext`1 context) in /src/SubmitOrderConsumer.cs:line 42",
			"MT-Fault-InputAddress":      "rabbitmq://rabbit.internal/shop/" + input + "?bind=true",
			"MT-Fault-Timestamp":         "2026-12-04T03:15:02.1234567Z",
			"MT-Fault-ConsumerType":      "Orders.SubmitOrderConsumer",
			"MT-Fault-MessageType":       "Orders.SubmitOrder",
			"MT-Fault-RetryCount":        int32(4),
			"MT-Host-MachineName":        "orders-7f9c",
			"MT-Host-MassTransitVersion": "8.3.0.0",
		},
	}
}

func orderNotFound(id string) amqp.Publishing {
	return massTransitFault(id, "orders", "Orders.OrderNotFoundException", "Order "+strings.TrimPrefix(id, "mt-")+" not found")
}

// checkKept checks that a copy kept its source's body and every header
// of its source, byte for byte and type for type.
func checkKept(t *testing.T, d amqp.Delivery, src amqp.Publishing, prefix string) {
	t.Helper()
	if !bytes.Equal(d.Body, src.Body) || d.ContentType != src.ContentType {
		t.Errorf("%s: body %s (%s), want %s (%s)", d.MessageId, d.Body, d.ContentType, src.Body, src.ContentType)
	}
	for k, v := range src.Headers {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		if got, ok := d.Headers[k]; !ok || fmt.Sprintf("%T %v", got, got) != fmt.Sprintf("%T %v", v, v) {
			t.Errorf("%s: header %s = %T %v, want %T %v", d.MessageId, k, got, got, v, v)
		}
	}
}

// 1. MassTransit: orders_error pairs with orders by MassTransit's naming,
// so the input address the letters name is confirmed.
func TestConventionReplayMassTransitBackToItsInputQueue(t *testing.T) {
	s := newConventionScene(t)
	s.declare("orders", nil)
	s.declare("orders_error", nil)
	want := ids("mt-", 1001, 5)
	sent := map[string]amqp.Publishing{}
	for _, id := range want {
		sent[id] = orderNotFound(id)
		s.put("orders_error", sent[id])
	}

	res := s.replay("orders_error", Scope{})
	if res.Moved != 5 || res.Confirmed != 5 {
		t.Errorf("moved %d, confirmed %d, want 5 and 5", res.Moved, res.Confirmed)
	}
	got := s.take("orders")
	onceEach(t, "orders", arrivals(got, byMessageID), want)
	for _, d := range got {
		checkKept(t, d, sent[d.MessageId], "MT-")
		checkStamped(t, d, res)
	}
	s.empty("orders_error", "every letter was confirmed in orders")
}

// springRepublished is a message Spring AMQP's RepublishMessageRecoverer
// (or Spring Cloud Stream's binder) put in <queue>.dlq. Header names:
// spring-amqp, spring-rabbit/src/main/java/org/springframework/amqp/
// rabbit/retry/RepublishMessageRecoverer.java (X_EXCEPTION_STACKTRACE,
// X_EXCEPTION_MESSAGE, X_ORIGINAL_EXCHANGE, X_ORIGINAL_ROUTING_KEY), and
// MessageProperties.RETRY_COUNT.
func springRepublished(id, exchange, key, msg string) amqp.Publishing {
	return amqp.Publishing{
		MessageId: id, ContentType: "application/json", DeliveryMode: amqp.Persistent,
		Body: []byte(`{"invoice":"` + id + `"}`),
		Headers: amqp.Table{
			"x-exception-message": msg,
			"x-exception-stacktrace": "org.springframework.amqp.rabbit.support.ListenerExecutionFailedException: Listener threw exception\n" +
				"Caused by: com.acme.billing.PaymentDeclinedException: " + msg + "\n\tat com.acme.billing.Listener.on(Listener.java:31)\n",
			"x-original-exchange":   exchange,
			"x-original-routingKey": key,
			"retry-count":           int64(3),
		},
	}
}

// 2. Spring: billing.dlq pairs with billing by the binder's naming; the
// letters name an exchange and routing key, which reach billing, so they
// go back through that exchange.
func TestConventionReplaySpringThroughItsOriginalExchange(t *testing.T) {
	s := newConventionScene(t)
	if err := s.ch.ExchangeDeclare("billing-events", amqp.ExchangeDirect, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	s.declare("billing", nil)
	if err := s.ch.QueueBind("billing", "billing", "billing-events", false, nil); err != nil {
		t.Fatal(err)
	}
	s.declare("billing.dlq", nil)
	want := ids("inv-", 7001, 5)
	sent := map[string]amqp.Publishing{}
	for _, id := range want {
		sent[id] = springRepublished(id, "billing-events", "billing", "Card 4242 declined")
		s.put("billing.dlq", sent[id])
	}

	res := s.replay("billing.dlq", Scope{})
	if res.Moved != 5 || res.Confirmed != 5 {
		t.Errorf("moved %d, confirmed %d, want 5 and 5", res.Moved, res.Confirmed)
	}
	got := s.take("billing")
	onceEach(t, "billing", arrivals(got, byMessageID), want)
	for _, d := range got {
		checkKept(t, d, sent[d.MessageId], "x-")
		checkStamped(t, d, res)
		if d.Exchange != "billing-events" || d.RoutingKey != "billing" {
			t.Errorf("%s came through exchange %q with key %q, want billing-events and billing", d.MessageId, d.Exchange, d.RoutingKey)
		}
	}
	s.empty("billing.dlq", "every letter was confirmed in billing")
}

// 3. A letter whose headers name a queue that does not pair with the
// error queue stays, however its headers read: a publisher wrote them.
// Only the operator's --to moves it.
func TestConventionReplayAForgedOriginStaysUnlessTo(t *testing.T) {
	s := newConventionScene(t)
	s.declare("orders", nil)
	s.declare("orders_error", nil)
	s.declare("victim", nil)
	legit, forged := ids("mt-", 1001, 3), ids("forged-", 1, 2)
	for _, id := range legit {
		s.put("orders_error", orderNotFound(id))
	}
	for _, id := range forged {
		s.put("orders_error", massTransitFault(id, "victim", "Orders.OrderNotFoundException", "Order 1 not found"))
	}
	// A scan reads the letters and learns that orders_error's messages
	// name victim: a pairing by messages, which confirms nothing.
	if _, err := s.ops.Scan(s.ctx, s.ref("orders_error"), false, nil); err != nil {
		t.Fatal(err)
	}

	p := s.plan("orders_error")
	if p.Publish != 3 || !strings.Contains(p.Summary, "2 stay: destination not confirmed") {
		t.Errorf("plan moves %d (want the 3 from orders) and says %q, want the 2 forged ones said to stay unconfirmed", p.Publish, p.Summary)
	}
	for _, d := range p.Destinations {
		if strings.Contains(d.Name, "victim") {
			t.Errorf("the plan sends %d messages to %s", d.Count, d.Name)
		}
	}

	res := s.replay("orders_error", Scope{})
	if res.Moved != 3 || res.Kept != 2 {
		t.Errorf("moved %d, kept %d, want 3 and 2", res.Moved, res.Kept)
	}
	onceEach(t, "orders", arrivals(s.take("orders"), byMessageID), legit)
	s.empty("victim", "no pairing confirms it as an origin of orders_error")
	left := s.peek("orders_error", 2)
	onceEach(t, "orders_error after the replay", arrivals(left, byMessageID), forged)

	// --to /victim: the operator names the destination.
	res = s.replay("orders_error", Scope{To: &actions.Override{RoutingKey: "victim"}})
	if res.Moved != 2 {
		t.Errorf("with --to /victim moved %d, want 2", res.Moved)
	}
	onceEach(t, "victim with --to /victim", arrivals(s.take("victim"), byMessageID), forged)
	s.empty("orders", "the --to replay went to victim only")
	s.empty("orders_error", "--to moved what was left")
}

// nServiceBusFailed is a message NServiceBus's MoveToError put in the
// shared error queue. Header names: NServiceBus,
// src/NServiceBus.Core/Recoverability/Faults/FaultsHeaderKeys.cs (FailedQ,
// ExceptionType, Message, StackTrace, TimeOfFailure): every header a
// string, FailedQ the endpoint's input queue.
func nServiceBusFailed(id, failedQ, msg string) amqp.Publishing {
	return amqp.Publishing{
		MessageId: id, DeliveryMode: amqp.Persistent, Body: []byte(`<PlaceOrder><Id>` + id + `</Id></PlaceOrder>`),
		Headers: amqp.Table{
			"NServiceBus.MessageId":                   id,
			"NServiceBus.FailedQ":                     failedQ,
			"NServiceBus.ExceptionInfo.ExceptionType": "System.InvalidOperationException",
			"NServiceBus.ExceptionInfo.Message":       msg,
			"NServiceBus.ExceptionInfo.StackTrace":    "System.InvalidOperationException: " + msg + "\r\n   at Sales.PlaceOrderHandler.Handle(PlaceOrder message, IMessageHandlerContext context)",
			"NServiceBus.TimeOfFailure":               "2026-12-04 03:15:02:123456 Z",
			"NServiceBus.ProcessingEndpoint":          failedQ,
			"NServiceBus.EnclosedMessageTypes":        "Messages.PlaceOrder, Messages",
		},
	}
}

// 4. NServiceBus's error queue is shared by every endpoint, so its name
// pairs it with none: FailedQ is confirmed only when the broker's
// dead-lettering pairs the queue with it.
func TestConventionReplayNServiceBusToASharedErrorQueuesOrigin(t *testing.T) {
	want := ids("nsb-", 1, 5)
	t.Run("Sales does not pair with error: the letters stay", func(t *testing.T) {
		s := newConventionScene(t)
		s.declare("Sales", nil)
		s.declare("error", nil)
		for _, id := range want {
			s.put("error", nServiceBusFailed(id, "Sales", "Customer 7 is on hold"))
		}
		if p := s.plan("error"); p.Publish != 0 || !strings.Contains(p.Summary, "5 stay: destination not confirmed") {
			t.Errorf("plan moves %d and says %q, want none moved and the 5 said to stay unconfirmed", p.Publish, p.Summary)
		}
		res := s.replay("error", Scope{})
		if res.Moved != 0 || res.Kept != 5 {
			t.Errorf("moved %d, kept %d, want 0 and 5", res.Moved, res.Kept)
		}
		s.empty("Sales", "a shared error queue's letters do not confirm their own origin")
		onceEach(t, "error after the replay", arrivals(s.peek("error", 5), byMessageID), want)
	})
	t.Run("Sales dead-letters into error: the letters go back", func(t *testing.T) {
		s := newConventionScene(t)
		s.declare("error", nil)
		s.declare("Sales", deadLettersInto("error"))
		sent := map[string]amqp.Publishing{}
		for _, id := range want {
			sent[id] = nServiceBusFailed(id, "Sales", "Customer 7 is on hold")
			s.put("error", sent[id])
		}
		res := s.replay("error", Scope{})
		if res.Moved != 5 || res.Confirmed != 5 {
			t.Errorf("moved %d, confirmed %d, want 5 and 5", res.Moved, res.Confirmed)
		}
		got := s.take("Sales")
		onceEach(t, "Sales", arrivals(got, byMessageID), want)
		for _, d := range got {
			checkKept(t, d, sent[d.MessageId], "NServiceBus.")
			checkStamped(t, d, res)
		}
		s.empty("error", "every letter was confirmed in Sales")
	})
}

// easyNetQEnvelope is what EasyNetQ v8's DefaultConsumeErrorStrategy
// publishes to EasyNetQ_Default_Error_Queue
// (Source/EasyNetQ/Consumer/DefaultConsumeErrorStrategy.cs): no headers,
// the type property naming SystemMessages.Error, and a JSON body of
// Source/EasyNetQ/SystemMessages/Error.cs's fields, the original body as
// text in Message, its properties in BasicProperties with each header
// {"Type": code, "Value": …} (Serialization/JsonHeaderExtensions.cs: 14 is
// bytes in base64, 6 an int32).
func easyNetQEnvelope(t *testing.T, n int, queue string) amqp.Publishing {
	t.Helper()
	return easyNetQWrap(t, n, queue, map[string]any{
		"tenant":  map[string]any{"Type": 14, "Value": base64.StdEncoding.EncodeToString([]byte("acme"))},
		"attempt": map[string]any{"Type": 6, "Value": 2},
	})
}

// easyNetQWrap is the envelope of message n with its headers as
// EasyNetQ's JSON writes them.
func easyNetQWrap(t *testing.T, n int, queue string, headers map[string]any) amqp.Publishing {
	t.Helper()
	env := map[string]any{
		"RoutingKey": "", "Exchange": "Shop.Messages.OrderPlaced, Shop.Messages", "Queue": queue,
		"Exception": fmt.Sprintf("System.InvalidOperationException: Order %d not found\n   at Shop.Billing.Handle(OrderPlaced m)", n),
		"Message":   fmt.Sprintf(`{"OrderId":%d}`, n),
		"DateTime":  "2026-12-04T03:15:02.1234567Z",
		"BasicProperties": map[string]any{
			"ContentType": "application/json", "DeliveryMode": 2, "CorrelationId": fmt.Sprintf("c-%d", n),
			"MessageId": fmt.Sprintf("evt-%d", n), "Type": "Shop.Messages.OrderPlaced, Shop.Messages",
			"Headers": headers,
		},
	}
	body, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	return amqp.Publishing{Type: "EasyNetQ.SystemMessages.Error, EasyNetQ", DeliveryMode: amqp.Persistent, Body: body}
}

// 5. EasyNetQ: the envelope names its queue, billing_sub, which
// dead-letters into the error queue; the queue receives the original
// message inside the envelope, as EasyNetQ's own Hosepipe would send it.
func TestConventionReplayEasyNetQSendsTheOriginalMessage(t *testing.T) {
	s := newConventionScene(t)
	const errorQueue = "EasyNetQ_Default_Error_Queue"
	s.declare(errorQueue, nil)
	s.declare("billing_sub", deadLettersInto(errorQueue))
	for n := 1001; n <= 1005; n++ {
		s.put(errorQueue, easyNetQEnvelope(t, n, "billing_sub"))
	}

	res := s.replay(errorQueue, Scope{})
	if res.Moved != 5 || res.Confirmed != 5 {
		t.Errorf("moved %d, confirmed %d, want 5 and 5", res.Moved, res.Confirmed)
	}
	got := s.take("billing_sub")
	onceEach(t, "billing_sub", arrivals(got, byMessageID), ids("evt-", 1001, 5))
	for _, d := range got {
		n := strings.TrimPrefix(d.MessageId, "evt-")
		if bytes.Contains(d.Body, []byte("BasicProperties")) || strings.HasPrefix(d.Type, "EasyNetQ.") {
			t.Errorf("%s: billing_sub received the envelope (type %q, body %s), want the message inside it", d.MessageId, d.Type, d.Body)
			continue
		}
		if string(d.Body) != `{"OrderId":`+n+`}` || d.ContentType != "application/json" || d.CorrelationId != "c-"+n ||
			d.Type != "Shop.Messages.OrderPlaced, Shop.Messages" || d.DeliveryMode != amqp.Persistent {
			t.Errorf("%s: body %s, content type %q, correlation ID %q, type %q, delivery mode %d; want the envelope's original",
				d.MessageId, d.Body, d.ContentType, d.CorrelationId, d.Type, d.DeliveryMode)
		}
		if d.Headers["tenant"] != "acme" || d.Headers["attempt"] != int32(2) {
			t.Errorf("%s: headers tenant %#v, attempt %#v; want the string acme and the int32 2 the envelope carried", d.MessageId, d.Headers["tenant"], d.Headers["attempt"])
		}
		checkStamped(t, d, res)
	}
	s.empty(errorQueue, "every envelope's message was confirmed in billing_sub")
}

// easyNetQHeader is an AMQP header value as EasyNetQ v8's JSON writes it
// in an envelope (Serialization/SystemTextJson/JsonHeaderType.cs): the
// .NET client reads a string as bytes, written as base64 (14); a table is
// a Dictionary (16) and an array a List (15) of such values.
func easyNetQHeader(t *testing.T, v any) map[string]any {
	t.Helper()
	typed := func(code int, v any) map[string]any { return map[string]any{"Type": code, "Value": v} }
	switch x := v.(type) {
	case nil:
		return typed(1, nil)
	case bool:
		return typed(2, x)
	case int32:
		return typed(6, x)
	case int64:
		return typed(8, x)
	case float64:
		return typed(10, x)
	case time.Time:
		return typed(12, x.Unix())
	case string:
		return typed(14, base64.StdEncoding.EncodeToString([]byte(x)))
	case []byte:
		return typed(14, base64.StdEncoding.EncodeToString(x))
	case amqp.Table:
		m := map[string]any{}
		for k, e := range x {
			m[k] = easyNetQHeader(t, e)
		}
		return typed(16, m)
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = easyNetQHeader(t, e)
		}
		return typed(15, l)
	}
	t.Fatalf("no EasyNetQ header type for %T", v)
	return nil
}

// 5b. The message warren replayed fails again: EasyNetQ wraps it, warren's
// marks among its headers, in a new envelope. The letter counts the
// replay and its attempts, a scan counts it as a replay loop, and the
// next replay counts on.
func TestConventionReplayEasyNetQFailedAgainCountsItsReplay(t *testing.T) {
	s := newConventionScene(t)
	const errorQueue = "EasyNetQ_Default_Error_Queue"
	s.declare(errorQueue, nil)
	s.declare("billing_sub", deadLettersInto(errorQueue))
	s.put(errorQueue, easyNetQEnvelope(t, 1001, "billing_sub"))
	first := s.replay(errorQueue, Scope{})
	got := s.take("billing_sub")
	if len(got) != 1 || first.Confirmed != 1 {
		t.Fatalf("billing_sub holds %d copies, %d confirmed, want 1", len(got), first.Confirmed)
	}
	headers := map[string]any{}
	for k, v := range got[0].Headers {
		headers[k] = easyNetQHeader(t, v)
	}
	s.put(errorQueue, easyNetQWrap(t, 1001, "billing_sub", headers))

	target, err := s.ops.Resolve(s.ctx, s.ref(errorQueue))
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.ops.Browse(s.ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	page, err := b.Next(s.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Letters) != 1 {
		t.Fatalf("%d letters, want 1", len(page.Letters))
	}
	if d := page.Letters[0]; d.ReplayCount != 1 || d.Attempts != 2 || d.MarksClaimed || d.Headers[actions.HeaderOperation] != first.Operation {
		t.Errorf("the letter failed again: %d replays, %d attempts, claimed %v, operation %v; want 1, 2, its own replay's %s",
			d.ReplayCount, d.Attempts, d.MarksClaimed, d.Headers[actions.HeaderOperation], first.Operation)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := s.ops.Scan(s.ctx, s.ref(errorQueue), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.ReplayLoops != 1 || st.Attempts[2] != 1 {
		t.Errorf("scan: %d replay loops, attempts %v; want 1 loop, one letter at 2 attempts", st.ReplayLoops, st.Attempts)
	}

	second := s.replay(errorQueue, Scope{})
	again := s.take("billing_sub")
	if len(again) != 1 || second.Confirmed != 1 {
		t.Fatalf("billing_sub holds %d copies, %d confirmed, want 1", len(again), second.Confirmed)
	}
	if h := again[0].Headers; h[actions.HeaderReplayCount] != int64(2) || h[domain.HeaderReplayAttempts] != int64(2) {
		t.Errorf("the second copy carries replay count %#v and attempts %#v, want 2 and 2", h[actions.HeaderReplayCount], h[domain.HeaderReplayAttempts])
	}
	s.empty(errorQueue, "the envelope's message was confirmed in billing_sub")
}

// rascalReceived is what fail.js's receive mode printed of one delivery.
type rascalReceived struct {
	ID          string         `json:"id"`
	ContentType string         `json:"contentType"`
	Body        string         `json:"body"`
	Headers     map[string]any `json:"headers"`
}

// 6. rascal, for real: its forward strategy fills orders_error, warren
// replays it, and rascal itself receives each order once with the body
// its handler first got. rascal's forward adds a CC header naming
// <queue>.<routing key>; a copy that kept it would also reach that
// queue, which exists here so that a leak shows.
func TestConventionReplayRascalForwardedBackToRascal(t *testing.T) {
	const n = 5
	testkit.RascalDir(t) // fails here, before any vhost, when Node.js is missing
	s := newConventionScene(t)
	s.declare("orders", nil)
	s.declare("orders_error", nil)
	testkit.RunRascal(t, s.vhost, "forward", n)
	want := ids("ord-", 1001, n)

	body := map[string]string{}
	cc := map[string]int{}
	for _, d := range s.peek("orders_error", n) {
		body[d.MessageId] = string(d.Body)
		cc[fmt.Sprint(d.Headers["CC"])]++
	}
	t.Logf("rascal's CC headers in orders_error, by value: %v", cc)
	for _, id := range want {
		if b := body[id]; b != `{"orderId":`+strings.TrimPrefix(id, "ord-")+`}` {
			t.Fatalf("orders_error holds %s with body %q: not the order rascal's handler got", id, b)
		}
	}
	// Declared after rascal forwarded, so that only a replay could fill it.
	s.declare("orders.orders", nil)

	res := s.replay("orders_error", Scope{})
	if res.Moved != n || res.Confirmed != n {
		t.Errorf("moved %d, confirmed %d, want %d and %d", res.Moved, res.Confirmed, n, n)
	}
	s.empty("orders.orders", "a copy that kept rascal's CC header is routed to the CC key too, a queue that never failed the message")
	s.empty("orders_error", "every letter was confirmed in orders")

	r := testkit.RunRascal(t, s.vhost, "receive", n)
	onceEach(t, "rascal's subscriber on orders", r.Runs, want)
	for _, line := range r.Lines {
		var got struct {
			Received rascalReceived `json:"received"`
		}
		decodeJSON(t, []byte(line), &got)
		d := got.Received
		if d.Body != body[d.ID] {
			t.Errorf("%s: rascal received %q, want %q, the body its handler got first", d.ID, d.Body, body[d.ID])
		}
		if d.Headers[actions.HeaderOperation] != res.Operation {
			t.Errorf("%s: %s = %v, want %s", d.ID, actions.HeaderOperation, d.Headers[actions.HeaderOperation], res.Operation)
		}
		if _, ok := d.Headers["CC"]; ok {
			t.Errorf("%s: the copy still carries CC %v", d.ID, d.Headers["CC"])
		}
	}
	s.empty("orders", "rascal took every copy")
	s.empty("orders.orders", "nothing reached the CC key")
}

// 7. Watermill, for real: its poison queue payments_error pairs with
// payments by naming, and the poisoned messages go back there. Watermill
// sets no message_id, so the logical ID is a content hash; the copies are
// counted by Watermill's own UUID header.
func TestConventionReplayWatermillPoisonedBackToItsTopic(t *testing.T) {
	const n = 5
	testkit.WatermillBin(t) // fails here, before any vhost, when go is missing
	s := newConventionScene(t)
	s.declare("payments", nil)
	s.declare("payments_error", nil)
	r := testkit.RunWatermill(t, s.vhost, n)
	want := slices.Sorted(maps.Keys(r.Runs))
	uuid := func(d amqp.Delivery) string { u, _ := d.Headers["_watermill_message_uuid"].(string); return u }

	poisoned := s.peek("payments_error", n)
	onceEach(t, "payments_error", arrivals(poisoned, uuid), want)
	body := map[string]string{}
	for _, d := range poisoned {
		body[uuid(d)] = string(d.Body)
	}

	res := s.replay("payments_error", Scope{})
	if res.Moved != n || res.Confirmed != n {
		t.Errorf("moved %d, confirmed %d, want %d and %d", res.Moved, res.Confirmed, n, n)
	}
	got := s.take("payments")
	onceEach(t, "payments", arrivals(got, uuid), want)
	for _, d := range got {
		if string(d.Body) != body[uuid(d)] {
			t.Errorf("%s: body %s, want %s", uuid(d), d.Body, body[uuid(d)])
		}
		if d.Headers["topic_poisoned"] != "payments" {
			t.Errorf("%s: Watermill's poison headers lost: %v", uuid(d), d.Headers)
		}
		checkStamped(t, d, res)
	}
	s.empty("payments_error", "every letter was confirmed in payments")
}

// 8. A replay narrowed to one failure group moves that group's letters
// and leaves the others.
func TestConventionReplayOneFailureGroup(t *testing.T) {
	s := newConventionScene(t)
	s.declare("orders", nil)
	s.declare("orders_error", nil)
	notFound, timedOut := ids("mt-", 1001, 3), ids("mt-", 2001, 2)
	for _, id := range notFound {
		s.put("orders_error", orderNotFound(id))
	}
	var timeout amqp.Publishing
	for _, id := range timedOut {
		timeout = massTransitFault(id, "orders", "Shipping.CarrierTimeoutException", "Carrier timed out after 30000 ms")
		s.put("orders_error", timeout)
	}

	st, err := s.ops.Scan(s.ctx, s.ref("orders_error"), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	groups := st.Groups.List()
	if len(groups) != 2 || groups[0].Count != 3 || groups[1].Count != 2 {
		t.Fatalf("scan found groups %+v, want one of 3 (not found) and one of 2 (carrier timeout)", groups)
	}
	group := groups[0].ID
	// The same ID from the letter's failure, as the dashboard computes it.
	nf := orderNotFound("mt-9999")
	if id := domain.GroupOf(dlq.Recognize(amqp.Delivery{MessageId: nf.MessageId, Headers: nf.Headers, Body: nf.Body}, nil, dlq.Builtin())); id != group {
		t.Errorf("GroupOf the not-found failure is %s, the scan's group %s", id, group)
	}
	other := domain.GroupOf(dlq.Recognize(amqp.Delivery{Headers: timeout.Headers, Body: timeout.Body}, nil, dlq.Builtin()))
	if other != groups[1].ID || other == group {
		t.Errorf("the carrier timeout's group is %s, the scan's %s", other, groups[1].ID)
	}

	src, err := domain.GroupFilter("", group)
	if err != nil {
		t.Fatal(err)
	}
	f, err := CompileFilter(src)
	if err != nil {
		t.Fatal(err)
	}
	res := s.replay("orders_error", Scope{Filter: f, FilterText: src})
	if res.Moved != 3 || res.Kept != 2 {
		t.Errorf("moved %d, kept %d, want 3 and 2", res.Moved, res.Kept)
	}
	onceEach(t, "orders", arrivals(s.take("orders"), byMessageID), notFound)
	onceEach(t, "orders_error after the group's replay", arrivals(s.peek("orders_error", 2), byMessageID), timedOut)
}

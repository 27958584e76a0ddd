package dlq

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/warrenops/warren/domain"
)

// Messages as each framework writes them to its error queue, built from
// the header names and value types in the framework's own source (cited
// beside each convention in frameworks.go). rascal and Watermill also run
// for real in the integration tests (frameworks_broker_test.go); the .NET
// and Java frameworks cannot run here, so these are their fixtures.

// massTransitFault is a message MassTransit's RabbitMqErrorTransport moved
// to orders_error: SetExceptionHeaders' strings, the retry count an int32.
func massTransitFault(id, msg string) amqp.Delivery {
	return amqp.Delivery{MessageId: id, ContentType: "application/vnd.masstransit+json", Body: []byte(`{"message":{"orderId":1}}`),
		Headers: amqp.Table{
			"MT-Reason":                  "fault",
			"MT-Fault-ExceptionType":     "Orders.OrderNotFoundException",
			"MT-Fault-Message":           msg,
			"MT-Fault-StackTrace":        "   at Orders.SubmitOrderConsumer.Consume(ConsumeContext`1 context) in /src/SubmitOrderConsumer.cs:line 42\n   at MassTransit.DependencyInjection.ScopeConsumerFactory`1.Send[T](ConsumeContext`1 context, IPipe`1 next)",
			"MT-Fault-InputAddress":      "rabbitmq://rabbit.internal/shop/orders?bind=true",
			"MT-Fault-Timestamp":         "2026-12-04T03:15:02.1234567Z",
			"MT-Fault-ConsumerType":      "Orders.SubmitOrderConsumer",
			"MT-Fault-MessageType":       "Orders.SubmitOrder",
			"MT-Fault-RetryCount":        int32(4),
			"MT-Host-MachineName":        "orders-7f9c",
			"MT-Host-MassTransitVersion": "8.3.0.0",
		}}
}

// springRepublished is a message RepublishMessageRecoverer (or Spring
// Cloud Stream's binder) put in billing.dlq: the listener's exception
// message, its stack trace with the wrapper first, the original exchange
// and routing key, and the binder's retry-count as a long.
func springRepublished(id, msg string) amqp.Delivery {
	return amqp.Delivery{MessageId: id, ContentType: "application/json", Body: []byte(`{"invoice":7}`),
		Headers: amqp.Table{
			"x-exception-message": msg,
			"x-exception-stacktrace": "org.springframework.amqp.rabbit.support.ListenerExecutionFailedException: Listener method 'public void com.acme.billing.Listener.on(Invoice)' threw exception\n" +
				"\tat org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer.wrapToListenerExecutionFailedExceptionIfNeeded(AbstractMessageListenerContainer.java:1775)\n" +
				"Caused by: com.acme.billing.PaymentDeclinedException: " + msg + "\n\tat com.acme.billing.Listener.on(Listener.java:31)\n",
			"x-original-exchange":   "billing-events",
			"x-original-routingKey": "billing",
			"retry-count":           int64(3),
		}}
}

// nServiceBusFailed is a message NServiceBus's MoveToError put in error:
// every header a string, FailedQ the queue's name, the time in
// DateTimeOffsetHelper's format, the retry counters removed.
func nServiceBusFailed(id, msg string) amqp.Delivery {
	return amqp.Delivery{MessageId: id, Body: []byte(`<SubmitOrder/>`),
		Headers: amqp.Table{
			"NServiceBus.MessageId":                   id,
			"NServiceBus.FailedQ":                     "Sales",
			"NServiceBus.ExceptionInfo.ExceptionType": "System.InvalidOperationException",
			"NServiceBus.ExceptionInfo.Message":       msg,
			"NServiceBus.ExceptionInfo.Source":        "Sales",
			"NServiceBus.ExceptionInfo.StackTrace":    "System.InvalidOperationException: " + msg + "\r\n   at Sales.PlaceOrderHandler.Handle(PlaceOrder message, IMessageHandlerContext context)",
			"NServiceBus.TimeOfFailure":               "2026-12-04 03:15:02:123456 Z",
			"NServiceBus.ProcessingEndpoint":          "Sales",
			"NServiceBus.EnclosedMessageTypes":        "Messages.PlaceOrder, Messages",
		}}
}

// easyNetQEnvelope is what EasyNetQ v8's DefaultConsumeErrorStrategy
// publishes to EasyNetQ_Default_Error_Queue: no headers, the type
// property naming SystemMessages.Error, and the JSON envelope.
func easyNetQEnvelope(body string) amqp.Delivery {
	return amqp.Delivery{Type: "EasyNetQ.SystemMessages.Error, EasyNetQ", DeliveryMode: 2, Body: []byte(body)}
}

const easyNetQV8 = `{"RoutingKey":"","Exchange":"Shop.Messages.OrderPlaced, Shop.Messages","Queue":"Shop.Messages.OrderPlaced, Shop.Messages_billing",` +
	`"Exception":"System.InvalidOperationException: Order 1001 not found\n   at Shop.Billing.Handle(OrderPlaced m)",` +
	`"Message":"{\"OrderId\":1001}","DateTime":"2026-12-04T03:15:02.1234567Z",` +
	`"BasicProperties":{"ContentType":"application/json","DeliveryMode":2,"CorrelationId":"c-1","MessageId":"evt-1001","Timestamp":1764817502,` +
	`"Expiration":"00:00:30","Type":"Shop.Messages.OrderPlaced, Shop.Messages",` +
	`"Headers":{"tenant":{"Type":14,"Value":"YWNtZQ=="},"attempt":{"Type":6,"Value":2},"sent":{"Type":12,"Value":1764817500}}}}`

// rascalForwarded is what rascal's forward strategy publishes: one
// "rascal" table, nested as lodash's _.set paths write it, numbers in
// the smallest integer type amqplib fits them in.
func rascalForwarded(msg string, code any) amqp.Delivery {
	rascal := amqp.Table{
		"originalQueue": "orders", "originalVhost": "/", "redeliveries": int8(0),
		"originalExchange": "shop", "originalRoutingKey": "order.created", "restoreRoutingHeaders": true,
		"error":    amqp.Table{"message": msg},
		"recovery": amqp.Table{"orders": amqp.Table{"forwarded": int8(2)}},
	}
	if code != nil {
		rascal["error"].(amqp.Table)["code"] = code
	}
	return amqp.Delivery{MessageId: "r-1", Body: []byte(`{}`), Headers: amqp.Table{"rascal": rascal}}
}

// watermillPoisoned is what watermill's PoisonQueue middleware publishes
// through watermill-amqp's DefaultMarshaler: metadata as string headers.
func watermillPoisoned(msg string) amqp.Delivery {
	return amqp.Delivery{Body: []byte(`{"id":5}`), Headers: amqp.Table{
		"_watermill_message_uuid": "5b8e6f3c-1d0b-4a35-a5e6-7e7b0c2c9a10",
		"reason_poisoned":         msg,
		"topic_poisoned":          "payments",
		"handler_poisoned":        "charge",
		"subscriber_poisoned":     "amqp.Subscriber",
	}}
}

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestEachConventionReadsWhatItsFrameworkWrites(t *testing.T) {
	cases := []struct {
		name string
		d    amqp.Delivery
		want domain.Failure
	}{
		{"masstransit", massTransitFault("m-1", "Order 1001 not found"), domain.Failure{
			Convention: domain.ConventionMassTransit, Kind: domain.KindException, OriginQueue: "orders",
			ErrorType: "Orders.OrderNotFoundException", ErrorMessage: "Order 1001 not found",
			Attempts: 5, FailedAt: at("2026-12-04T03:15:02.1234567Z")}},
		{"spring", springRepublished("s-1", "Card 4242 declined"), domain.Failure{
			Convention: domain.ConventionSpring, Kind: domain.KindException, OriginExchange: "billing-events", OriginRoutingKey: "billing",
			ErrorType: "com.acme.billing.PaymentDeclinedException", ErrorMessage: "Card 4242 declined", Attempts: 3}},
		{"nservicebus", nServiceBusFailed("n-1", "Customer 7 is on hold"), domain.Failure{
			Convention: domain.ConventionNServiceBus, Kind: domain.KindException, OriginQueue: "Sales",
			ErrorType: "System.InvalidOperationException", ErrorMessage: "Customer 7 is on hold",
			FailedAt: at("2026-12-04T03:15:02.123456Z")}},
		{"easynetq", easyNetQEnvelope(easyNetQV8), domain.Failure{
			Convention: domain.ConventionEasyNetQ, Kind: domain.KindException, OriginQueue: "Shop.Messages.OrderPlaced, Shop.Messages_billing",
			OriginExchange: "Shop.Messages.OrderPlaced, Shop.Messages",
			ErrorType:      "System.InvalidOperationException", ErrorMessage: "Order 1001 not found", Attempts: 1,
			FailedAt: at("2026-12-04T03:15:02.1234567Z")}},
		{"rascal", rascalForwarded("stock service said 503", "ESERVICE"), domain.Failure{
			Convention: domain.ConventionRascal, Kind: domain.KindException, OriginQueue: "orders", OriginExchange: "shop", OriginRoutingKey: "order.created",
			ErrorType: "ESERVICE", ErrorMessage: "stock service said 503", Attempts: 2}},
		{"watermill", watermillPoisoned("charge 5: insufficient funds"), domain.Failure{
			Convention: domain.ConventionWatermill, Kind: domain.KindException, OriginQueue: "payments",
			ErrorMessage: "charge 5: insufficient funds"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Recognize(c.d, ParseDeaths(c.d.Headers), Builtin())
			stack := got.StackTrace
			got.StackTrace, got.Envelope = "", nil
			if got.Missing != nil || got.Also != nil {
				t.Errorf("missing %v, also %v on a whole message", got.Missing, got.Also)
			}
			got.Missing, got.Also = nil, nil
			if !got.FailedAt.Equal(c.want.FailedAt) {
				t.Errorf("failed at %v, want %v", got.FailedAt, c.want.FailedAt)
			}
			got.FailedAt, c.want.FailedAt = time.Time{}, time.Time{}
			if !equalFailure(got, c.want) {
				t.Errorf("read\n %+v\nwant\n %+v", got, c.want)
			}
			if c.name != "rascal" && c.name != "watermill" && stack == "" {
				t.Error("the stack trace was not kept for the inspector")
			}
		})
	}
}

func equalFailure(a, b domain.Failure) bool {
	return a.Convention == b.Convention && a.Kind == b.Kind && a.ErrorType == b.ErrorType && a.ErrorMessage == b.ErrorMessage &&
		a.Attempts == b.Attempts && a.OriginQueue == b.OriginQueue && a.OriginExchange == b.OriginExchange &&
		a.OriginRoutingKey == b.OriginRoutingKey
}

func TestAnEasyNetQEnvelopeIsShownAsTheMessageInside(t *testing.T) {
	d := Decode(easyNetQEnvelope(easyNetQV8), Options{}, true)
	if string(d.Body) != `{"OrderId":1001}` || d.MessageID != "evt-1001" || d.LogicalID != "evt-1001" {
		t.Errorf("body %q, message ID %q, logical ID %q: not the original message's", d.Body, d.MessageID, d.LogicalID)
	}
	p := d.Properties
	if p.ContentType != "application/json" || p.CorrelationID != "c-1" || p.Expiration != "30000" || p.DeliveryMode != 2 ||
		!p.Timestamp.Equal(time.Unix(1764817502, 0)) || p.Type != "Shop.Messages.OrderPlaced, Shop.Messages" {
		t.Errorf("original properties %+v", p)
	}
	if d.Headers["tenant"] != "acme" || d.Headers["attempt"] != int32(2) || !d.Headers["sent"].(time.Time).Equal(time.Unix(1764817500, 0)) {
		t.Errorf("original headers %#v: a string, an int32 and a timestamp as they were on the wire", d.Headers)
	}
	if d.Raw == nil || !strings.Contains(string(d.Raw.Body), `"BasicProperties"`) || d.Raw.Properties.Type == "" {
		t.Error("the envelope as it arrived is not kept")
	}
	if d.Reason != domain.KindException || d.Origin() != "Shop.Messages.OrderPlaced, Shop.Messages_billing" || d.Group == "" {
		t.Errorf("reason %q, origin %q, group %q", d.Reason, d.Origin(), d.Group)
	}
}

// warren replays an EasyNetQ letter as the original message, with its
// marks; when that fails again EasyNetQ wraps it, marks and all, in a new
// envelope whose own headers carry none. The marks inside are read: the
// letter counts its replays and attempts, and is a replay loop.
func TestAnEasyNetQLetterReplayedAndFailedAgainCountsItsReplays(t *testing.T) {
	marked := func(ops string) string {
		return strings.Replace(easyNetQV8, `"Headers":{`, `"Headers":{"x-warren-replay-count":{"Type":8,"Value":2},"x-warren-attempts":{"Type":8,"Value":2},`+
			`"x-warren-operation":{"Type":14,"Value":"`+base64.StdEncoding.EncodeToString([]byte(ops))+`"},`, 1)
	}
	known := Options{KnownOperation: func(op string) bool { return op == "op-7" }}
	tests := []struct {
		name                          string
		body                          string
		o                             Options
		attempts, replays             int
		claimed, loop, parked, forged bool
	}{
		{name: "never replayed", body: easyNetQV8, attempts: 1},
		{name: "replayed twice, failed again", body: marked("op-7"), o: known, attempts: 3, replays: 2, loop: true},
		{name: "marks naming no known operation are a claim", body: marked("op-forged"), o: known, attempts: 1, claimed: true},
		{name: "replayed twice, failed again, then quarantined", body: marked("op-7"), o: known, attempts: 3, replays: 2, loop: true, parked: true},
		{name: "a quarantine mark naming no known operation is a claim", body: easyNetQV8, o: known, attempts: 1, claimed: true, forged: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := easyNetQEnvelope(tt.body)
			if tt.parked {
				// A quarantine parks the envelope, its own headers marked.
				env.Headers = amqp.Table{domain.HeaderQuarantineReason: "poison", domain.HeaderOperation: "op-7"}
			}
			if tt.forged {
				env.Headers = amqp.Table{domain.HeaderQuarantineReason: "keep me out of replays", domain.HeaderOperation: "op-forged"}
			}
			d := Decode(env, tt.o, true)
			if d.Quarantined != tt.parked {
				t.Errorf("quarantined %v, want %v", d.Quarantined, tt.parked)
			}
			if d.Attempts != tt.attempts || d.ReplayCount != tt.replays || d.MarksClaimed != tt.claimed {
				t.Errorf("attempts %d, replays %d, claimed %v; want %d, %d, %v", d.Attempts, d.ReplayCount, d.MarksClaimed, tt.attempts, tt.replays, tt.claimed)
			}
			st := &domain.Stats{Attempts: map[int]int{}, Reasons: map[string]int{}, Origins: map[string]int{},
				Groups: domain.NewGroups(false), Conventions: map[string]int{}}
			sc := scanner{st: st, o: tt.o.withDefaults()}
			if err := sc.add(nil, env, false); err != nil {
				t.Fatal(err)
			}
			if (st.ReplayLoops == 1) != tt.loop || st.Attempts[tt.attempts] != 1 {
				t.Errorf("a scan counts %d replay loops and attempts %v; want loop %v, one at %d", st.ReplayLoops, st.Attempts, tt.loop, tt.attempts)
			}
		})
	}
}

func TestBrokerDeadLetteringWinsAndTheFrameworkSaysWhatBroke(t *testing.T) {
	// rascal's republish with immediateNack: the broker dead-letters the
	// republished message, so x-death and the rascal table are both there.
	d := rascalForwarded("stock service said 503", nil)
	d.Headers["x-death"] = []any{amqp.Table{"queue": "orders", "reason": "rejected", "count": int64(1), "exchange": "",
		"routing-keys": []any{"orders"}, "time": time.Date(2026, 12, 4, 3, 0, 0, 0, time.UTC)}}
	f := Recognize(d, ParseDeaths(d.Headers), Builtin())
	if f.Convention != domain.ConventionBroker || f.Kind != domain.ReasonRejected || f.OriginQueue != "orders" {
		t.Errorf("the broker's own dead-lettering did not win: %+v", f)
	}
	if f.ErrorMessage != "stock service said 503" || len(f.Also) != 1 || f.Also[0] != domain.ConventionRascal {
		t.Errorf("the framework's word is lost: message %q, also %v", f.ErrorMessage, f.Also)
	}
}

func TestBadInputIsReadHonestly(t *testing.T) {
	huge := strings.Repeat("Order 1001 not found ", 50_000) // about 1 MiB
	wrongType := massTransitFault("m-2", "x")
	wrongType.Headers["MT-Fault-Message"] = int64(42)
	wrongType.Headers["MT-Fault-Timestamp"] = amqp.Table{"x": 1}
	escapes := springRepublished("s-2", "boom\x1b]52;c;aGVsbG8=\x07 \x1b[2J")
	escapes.Headers["x-exception-stacktrace"] = "com.acme.Boom: boom\x1b[31m\n\tat evil\x1b[2J"
	notAName := massTransitFault("m-3", "x")
	notAName.Headers["MT-Fault-InputAddress"] = "rabbitmq://h/" + strings.Repeat("q", 300)
	two := massTransitFault("m-4", "two conventions")
	two.Headers["x-exception-message"] = "spring too"

	t.Run("a message of 1 MiB is cut to its first line's bound", func(t *testing.T) {
		f := Recognize(massTransitFault("m-1", huge), nil, Builtin())
		if len(f.ErrorMessage) > maxErrorMessage+len("…") || !strings.HasSuffix(f.ErrorMessage, "…") {
			t.Errorf("error message of %d bytes kept", len(f.ErrorMessage))
		}
	})
	t.Run("a header of the wrong AMQP type is named as such", func(t *testing.T) {
		f := Recognize(wrongType, nil, Builtin())
		want := []string{"error_message", "error_message (MT-Fault-Message is not text)", "failed_at (MT-Fault-Timestamp is not a time)"}
		if strings.Join(f.Missing, "|") != strings.Join(want, "|") {
			t.Errorf("missing %q, want %q", f.Missing, want)
		}
	})
	t.Run("escapes stay in the data, first line only, for the screen to sanitise", func(t *testing.T) {
		f := Recognize(escapes, nil, Builtin())
		if strings.Contains(f.ErrorMessage, "\n") || f.ErrorType != "com.acme.Boom" {
			t.Errorf("message %q, type %q", f.ErrorMessage, f.ErrorType)
		}
	})
	t.Run("a name no queue can have is no origin", func(t *testing.T) {
		f := Recognize(notAName, nil, Builtin())
		if f.OriginQueue != "" || !strings.Contains(strings.Join(f.Missing, "|"), "origin") {
			t.Errorf("origin %q, missing %v", f.OriginQueue, f.Missing)
		}
	})
	t.Run("two conventions: the first is read, the other named", func(t *testing.T) {
		f := Recognize(two, nil, Builtin())
		if f.Convention != domain.ConventionMassTransit || len(f.Also) != 1 || f.Also[0] != domain.ConventionSpring {
			t.Errorf("convention %q, also %v", f.Convention, f.Also)
		}
	})
	t.Run("a truncated EasyNetQ envelope gives no origin", func(t *testing.T) {
		d := Decode(easyNetQEnvelope(easyNetQV8[:120]), Options{}, true)
		if d.Failure.Convention != domain.ConventionEasyNetQ || d.Origin() != "" || d.Failure.Envelope != nil || d.Raw != nil ||
			!strings.Contains(strings.Join(d.Failure.Missing, "|"), "envelope") {
			t.Errorf("failure %+v, origin %q", d.Failure, d.Origin())
		}
		if len(d.Body) != 120 {
			t.Error("the body of a broken envelope is not kept as it is")
		}
	})
	t.Run("a MassTransit skipped message is no exception", func(t *testing.T) {
		d := massTransitFault("m-5", "")
		for k := range d.Headers {
			if strings.HasPrefix(k, "MT-Fault-") && k != "MT-Fault-InputAddress" {
				delete(d.Headers, k)
			}
		}
		d.Headers["MT-Reason"] = "dead-letter"
		f := Recognize(d, nil, Builtin())
		if f.Kind != domain.KindSkipped || f.OriginQueue != "orders" || f.Missing != nil {
			t.Errorf("skipped read as %+v", f)
		}
	})
}

func TestAMessageOfNoConventionSaysSo(t *testing.T) {
	d := Decode(amqp.Delivery{MessageId: "plain", Body: []byte("x")}, Options{}, true)
	if d.Failure.Convention != "" || d.Reason != "" || d.Origin() != "" {
		t.Errorf("a plain message read as %+v", d.Failure)
	}
}

func TestACustomConventionWalksNestedTables(t *testing.T) {
	c, err := NewConvention("acme", map[string]string{
		"origin_queue": "acme.source.queue", "error_message": "acme.error", "error_type": "acme-error-class", "attempts": "acme.tries",
	})
	if err != nil {
		t.Fatal(err)
	}
	d := amqp.Delivery{Headers: amqp.Table{"acme": amqp.Table{"source": amqp.Table{"queue": "orders"}, "error": "Order 9 gone", "tries": int16(4)},
		"acme-error-class": "NotFound"}}
	f := Recognize(d, nil, append([]Convention{c}, Builtin()...))
	if f.Convention != "acme" || f.OriginQueue != "orders" || f.ErrorMessage != "Order 9 gone" || f.ErrorType != "NotFound" || f.Attempts != 4 {
		t.Errorf("custom convention read %+v", f)
	}
}

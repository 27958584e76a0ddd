package ops

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/testkit"
)

// A destination that turns out to be missing on a later page stops the
// run before that page, and every page before it is published: no
// message is left recorded as being published without its copy having
// gone out.
func TestAMissingDestinationOnALaterPageLeavesEveryRecordTrue(t *testing.T) {
	const orders, billing = 700, 10
	vhost := testkit.Vhost(t, "warren-ops-stream")
	ch := testkit.Channel(t, testConn(t, vhost))
	testkit.Declare(t, ch, "orders.dlq", nil)
	dlx := amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq"}
	testkit.Declare(t, ch, "orders", dlx)
	testkit.Declare(t, ch, "billing", dlx)
	batch := func(prefix string, n int) []amqp.Publishing {
		msgs := make([]amqp.Publishing, n)
		for i := range msgs {
			msgs[i] = amqp.Publishing{MessageId: fmt.Sprintf("%s-%d", prefix, i), DeliveryMode: amqp.Persistent,
				Headers: amqp.Table{"event_id": fmt.Sprintf("%s-ev-%d", prefix, i)}, Body: []byte(`{}`)}
		}
		return msgs
	}
	testkit.DeadLetter(t, ch, "orders", "orders.dlq", batch("o", orders))
	testkit.DeadLetter(t, ch, "billing", "orders.dlq", batch("b", billing))
	if _, err := ch.QueueDelete("billing", false, false, false); err != nil {
		t.Fatal(err)
	}

	o, ctx, ref, target := resolved(t, vhost, "orders.dlq")
	// No preview: each destination is checked as it first comes up.
	res, err := o.StreamNow(ctx, target, PlanRequest{Action: Replay, Queue: ref}, 0, nil)
	if !errors.Is(err, actions.ErrNoDestination) || !strings.Contains(err.Error(), "billing") {
		t.Fatalf("replay with billing gone = %v (%+v), want ErrNoDestination naming billing", err, res.Counts)
	}
	// Pages form as deliveries arrive: billing's ten may share a page
	// with the last of orders' (then that page's orders stay too) or come
	// in a page of their own (then every order moved).
	if res.Moved == 0 || res.Moved > orders {
		t.Fatalf("moved %d: want the pages before billing's (some, at most all %d of orders)", res.Moved, orders)
	}
	testkit.WaitDepth(t, ch, "orders", res.Moved)
	testkit.WaitDepth(t, ch, "orders.dlq", orders+billing-res.Moved)

	op, err := o.Audit().Operation(ctx, res.Operation)
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]int{}
	for _, m := range op.Messages {
		outcomes[m.Outcome]++
	}
	if outcomes[audit.OutcomePublishing] != 0 || outcomes[audit.OutcomeConfirmed] != res.Moved {
		t.Fatalf("the audit log's outcomes %v after %d moved: every copy recorded as publishing must have gone out and been confirmed", outcomes, res.Moved)
	}
}

// A replay from a quorum DLQ sweeps it for twins of its confirmed copies
// once the feed is closed. When the origin still fails, the copies die
// again and come back to the DLQ before the sweep reads it, with the IDs
// and body of their sources: each is the only one of its message left,
// and must stay. Here the origin expires every message at once, so every
// copy comes back.
func TestCopiesThatDieAgainSurviveTheQuorumSweep(t *testing.T) {
	const n = 40
	vhost := testkit.Vhost(t, "warren-ops-sweep")
	ch := testkit.Channel(t, testConn(t, vhost))
	testkit.Declare(t, ch, "orders.dlq", amqp.Table{"x-queue-type": "quorum"})
	testkit.Declare(t, ch, "orders", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq", "x-message-ttl": 0})
	for i := range n {
		msg := amqp.Publishing{MessageId: fmt.Sprintf("o-%d", i), DeliveryMode: amqp.Persistent,
			Headers: amqp.Table{"event_id": fmt.Sprintf("ev-%d", i)}, Body: []byte(`{}`)}
		if err := ch.Publish("", "orders", false, false, msg); err != nil {
			t.Fatal(err)
		}
	}
	testkit.WaitDepth(t, ch, "orders.dlq", n)

	o, ctx, ref, target := resolved(t, vhost, "orders.dlq")
	res, err := o.StreamNow(ctx, target, PlanRequest{Action: Replay, Queue: ref}, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Moved != n || res.Deduplicated != 0 {
		t.Fatalf("moved %d, deduplicated %d: want %d moved and none taken for a twin (%v)", res.Moved, res.Deduplicated, n, res.Notes)
	}
	testkit.WaitDepth(t, ch, "orders.dlq", n)
	for range n {
		d, ok, err := ch.Get("orders.dlq", true)
		if err != nil || !ok {
			t.Fatalf("reading the DLQ back: %v", err)
		}
		if op, _ := d.Headers[actions.HeaderOperation].(string); op != res.Operation {
			t.Fatalf("%s in the DLQ is not the copy that died again (operation %q, want %s)", d.MessageId, op, res.Operation)
		}
	}
}

// The same event fanned out to two queues that share a quorum DLQ dies
// twice, with the same IDs and body. A replay of one queue's dead letters
// leaves the other's in the DLQ, and the sweep after it must not take
// them for twins of its confirmed copies: they died elsewhere.
func TestTheQuorumSweepKeepsTheSameEventDeadInAnotherQueue(t *testing.T) {
	const n = 5
	vhost := testkit.Vhost(t, "warren-ops-fanout")
	ch := testkit.Channel(t, testConn(t, vhost))
	testkit.Declare(t, ch, "events.dlq", amqp.Table{"x-queue-type": "quorum"})
	// The same events reach both queues, as a fanout would deliver them,
	// and both reject them.
	for _, q := range []string{"billing", "shipping"} {
		testkit.Declare(t, ch, q, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "events.dlq"})
		testkit.DeadLetter(t, ch, q, "events.dlq", orderEvents(n))
	}

	o, ctx, ref, target := resolved(t, vhost, "events.dlq")
	const rule = `origin_queue == "billing"`
	f, err := domain.CompileFilter(rule)
	if err != nil {
		t.Fatal(err)
	}
	res, err := o.StreamNow(ctx, target, PlanRequest{Action: Replay, Queue: ref, Filter: f, FilterText: rule}, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Moved != n || res.Deduplicated != 0 {
		t.Fatalf("moved %d, deduplicated %d: want billing's %d moved and shipping's none taken for a twin (%v)", res.Moved, res.Deduplicated, n, res.Notes)
	}
	testkit.WaitDepth(t, ch, "billing", n)
	testkit.WaitDepth(t, ch, "events.dlq", n)
	for range n {
		d, ok, err := ch.Get("events.dlq", true)
		if err != nil || !ok {
			t.Fatalf("reading the DLQ back: %v", err)
		}
		if q, _ := d.Headers["x-first-death-queue"].(string); q != "shipping" {
			t.Fatalf("%s in the DLQ died in %q, want shipping's dead letters only", d.MessageId, q)
		}
	}
}

// A browse holds messages, and a held message cannot expire: one held
// longer than the DLQ's message TTL expires as it is returned. The first
// page says so, and where such a message goes.
func TestABrowseOfADLQWithAMessageTTLSaysWhatHoldingCosts(t *testing.T) {
	vhost := testkit.Vhost(t, "warren-ops-ttl")
	ch := testkit.Channel(t, testConn(t, vhost))
	testkit.Declare(t, ch, "orders.dlq", amqp.Table{"x-message-ttl": int32(60000)})
	testkit.Declare(t, ch, "orders", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq"})
	testkit.DeadLetter(t, ch, "orders", "orders.dlq", []amqp.Publishing{{MessageId: "o-1", Body: []byte(`{}`)}})

	o, ctx, _, target := resolved(t, vhost, "orders.dlq")
	if ttl := target.Info.MessageTTL; ttl == nil || *ttl != time.Minute || target.Info.HasDLX {
		t.Fatalf("message TTL %v, DLX %v: want 1m and none", ttl, target.Info.HasDLX)
	}
	b, err := o.Browse(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	page, err := b.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := "message TTL 1m0s: a message held longer than that expires as it is returned, dropped: nothing keeps it"
	if !slices.Contains(page.Notes, want+"; close the session before then") {
		t.Fatalf("notes %q lack %q", page.Notes, want)
	}
}

// resolved is an Ops on the orders context and the target of queue name
// in vhost, resolved as a command resolves it.
func resolved(t *testing.T, vhost, name string) (*Ops, context.Context, domain.QueueRef, *Target) {
	t.Helper()
	o := newOps(t, ordersContext())
	ctx := testCtx(t)
	ref := domain.QueueRef{Vhost: vhost, Name: name}
	target, err := o.Resolve(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	return o, ctx, ref, target
}

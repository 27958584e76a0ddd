//go:build integration

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
	"github.com/warrenops/warren/config"
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

	o, ctx, ref, _ := resolved(t, vhost, "orders.dlq")
	// No preview: each destination is checked as it first comes up.
	res, err := unasked(t, o, ctx, Scope{Action: Replay, Queue: ref})
	// Found missing once copies went out: a run stopped midway, not a
	// refusal that changed nothing.
	if !errors.Is(err, actions.ErrDestinationGone) || errors.Is(err, actions.ErrNoDestination) || !strings.Contains(err.Error(), "billing") ||
		strings.Contains(err.Error(), "nothing was changed") || !strings.Contains(err.Error(), "once earlier pages' copies had gone out") {
		t.Fatalf("replay with billing gone = %v (%+v), want ErrDestinationGone naming billing", err, res.Counts)
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
	if outcomes[domain.OutcomePublishing] != 0 || outcomes[domain.OutcomeConfirmed] != res.Moved {
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

	o, ctx, ref, _ := resolved(t, vhost, "orders.dlq")
	res, err := unasked(t, o, ctx, Scope{Action: Replay, Queue: ref})
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

	o, ctx, ref, _ := resolved(t, vhost, "events.dlq")
	const rule = `origin_queue == "billing"`
	f, err := domain.CompileFilter(rule)
	if err != nil {
		t.Fatal(err)
	}
	res, err := unasked(t, o, ctx, Scope{Action: Replay, Queue: ref, Filter: f, FilterText: rule})
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

// unasked runs s over the whole queue as `--yes` does: planned without a
// preview (no one is asked, so nothing is read or decided), then run over
// what the queue holds when the run starts.
func unasked(t *testing.T, o *Ops, ctx context.Context, s Scope) (Result, error) {
	t.Helper()
	s.Unasked = true
	p, err := o.Plan(ctx, s)
	if err != nil {
		t.Fatalf("plan %s of %s: %v", s.Action, s.Queue.Name, err)
	}
	if p.Decided || p.Idle() {
		t.Fatalf("an unasked plan is decided (%v) or idle (%v): nothing was read to decide", p.Decided, p.Idle())
	}
	return o.Run(ctx, p, nil)
}

// A stream keeps its messages, so a whole-stream operation is planned
// over a page it holds: its first Limit messages (10 000 unless the
// operator says otherwise), held by the plan until it runs or closes.
func TestAStreamPlannedWholeHoldsItsFirstLimitMessages(t *testing.T) {
	const n = 5
	o, ch, ref := streamScene(t, n)
	ctx := testCtx(t)
	// The default limit holds all five; closed, the plan moves nothing.
	p, err := o.Plan(ctx, Scope{Action: Replay, Queue: ref})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Decided || p.Selected != n || p.Publish != n || len(p.Destinations) != 1 || p.Destinations[0].Name != "queue orders (default exchange)" {
		t.Fatalf("plan of the whole stream = %+v, want its %d messages to orders", p, n)
	}
	for _, w := range p.Warnings {
		if strings.Contains(w, "--limit") {
			t.Errorf("warning %q: the default limit was not reached", w)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("a second Close = %v, want nil", err)
	}
	if d := testkit.Depth(t, ch, "orders"); d != 0 {
		t.Fatalf("orders holds %d after a plan that was closed, want none", d)
	}

	p, err = o.Plan(ctx, Scope{Action: Replay, Queue: ref, Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if p.Selected != 3 || p.Publish != 3 {
		t.Fatalf("plan limited to 3 = %+v, want 3 moving", p)
	}
	res, err := o.Run(ctx, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Confirmed != 3 || res.Operation == "" {
		t.Fatalf("result = %+v, want 3 confirmed", res.Counts)
	}
	testkit.WaitDepth(t, ch, "orders", 3)
	var got []string
	for range 3 {
		d, ok, err := ch.Get("orders", true)
		if err != nil || !ok {
			t.Fatalf("get from orders: %v %v", ok, err)
		}
		got = append(got, d.MessageId)
	}
	if strings.Join(got, ",") != "m-ev-a,m-ev-b,m-ev-c" {
		t.Errorf("orders received %v, want the stream's first three in order", got)
	}

	var re *actions.RequestError
	if _, err := o.Plan(ctx, Scope{Action: Replay, Queue: ref, Limit: maxStreamLimit + 1}); !errors.As(err, &re) {
		t.Errorf("a limit past what a page holds: %v, want a request error", err)
	}
	if _, err := o.Plan(ctx, Scope{Action: Resume, Queue: ref}); !errors.As(err, &re) || !strings.Contains(err.Error(), "is a stream") {
		t.Errorf("a resume on a stream: %v, want it refused as a stream", err)
	}
}

// A stream planned with a limit it holds more than says that the rest
// stay for another run, whatever the page size.
func TestAStreamPlanLimitedSaysTheRestStay(t *testing.T) {
	const n = 5
	o, _, ref := streamScene(t, n)
	ctx := testCtx(t)
	for _, limit := range []int{1, 3, 4} {
		p, err := o.Plan(ctx, Scope{Action: Replay, Queue: ref, Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("--limit %d reached: more messages stay in the queue for another run", limit)
		if p.Selected != limit || !slices.Contains(p.Warnings, want) {
			t.Errorf("plan of %d of the stream's %d: %d selected, warnings %q; want %q", limit, n, p.Selected, p.Warnings, want)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// A stream keeps what is replayed out of it: the next replay leaves out
// what an earlier one confirmed (the audit log has its offsets), says
// so, and goes on to the messages after them.
func TestAStreamIsNotReplayedTwice(t *testing.T) {
	const n = 5
	o, ch, ref := streamScene(t, n)
	ctx := testCtx(t)
	p, err := o.Plan(ctx, Scope{Action: Replay, Queue: ref, Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	first, err := o.Run(ctx, p, nil)
	if err != nil || first.Confirmed != 3 {
		t.Fatalf("first replay: %+v, %v; want 3 confirmed", first.Counts, err)
	}
	p, err = o.Plan(ctx, Scope{Action: Replay, Queue: ref, Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	want := "3 messages read were replayed or quarantined before (" + first.Operation + ")"
	if p.Selected != 2 || !slices.ContainsFunc(p.Warnings, func(w string) bool { return strings.HasPrefix(w, want) }) {
		t.Fatalf("second plan: %d selected, warnings %q; want the 2 not replayed, and %q", p.Selected, p.Warnings, want)
	}
	if res, err := o.Run(ctx, p, nil); err != nil || res.Confirmed != 2 {
		t.Fatalf("second replay: %+v, %v; want 2 confirmed", res.Counts, err)
	}
	testkit.WaitDepth(t, ch, "orders", n)
	p, err = o.Plan(ctx, Scope{Action: Replay, Queue: ref})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Selected != 0 || !p.Idle() {
		t.Fatalf("third plan: %d selected; want none, every message replayed once", p.Selected)
	}
	if d := testkit.Depth(t, ch, "orders"); d != n {
		t.Fatalf("orders holds %d, want each of the %d once", d, n)
	}
}

// streamScene dead-letters n order events and moves them into the
// stream orders.dlq, as a shovel would (RabbitMQ 3.10 cannot dead-letter
// into a stream), headers and all; the config pairs orders with it.
func streamScene(t *testing.T, n int) (*Ops, *amqp.Channel, domain.QueueRef) {
	t.Helper()
	vhost := testkit.Vhost(t, "warren-ops-stream")
	ch := testkit.Channel(t, testConn(t, vhost))
	testkit.Declare(t, ch, "orders.dlq", amqp.Table{"x-queue-type": "stream"})
	testkit.Declare(t, ch, "dead", nil)
	testkit.Declare(t, ch, "orders", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "dead"})
	testkit.DeadLetter(t, ch, "orders", "dead", orderEvents(n))
	for range n {
		d, ok, err := ch.Get("dead", false)
		if err != nil || !ok {
			t.Fatalf("get from dead: %v %v", ok, err)
		}
		m := amqp.Publishing{MessageId: d.MessageId, ContentType: d.ContentType, Headers: d.Headers, Body: d.Body}
		if err := ch.Publish("", "orders.dlq", false, false, m); err != nil {
			t.Fatal(err)
		}
		if err := d.Ack(false); err != nil {
			t.Fatal(err)
		}
	}
	waitStream(t, vhost, "orders.dlq", n)
	o := newOps(t, &config.Context{Name: "test", Username: "guest", Queues: []config.Queue{
		{Name: "orders", DLQ: "orders.dlq", LogicalID: "header:event_id"},
	}})
	return o, ch, domain.QueueRef{Vhost: vhost, Name: "orders.dlq"}
}

// waitStream waits until a consumer reading the stream from its first
// offset has seen n messages: a stream's declare-ok count lags.
func waitStream(t *testing.T, vhost, name string, n int) {
	t.Helper()
	ch := testkit.Channel(t, testConn(t, vhost))
	if err := ch.Qos(n, 0, false); err != nil {
		t.Fatal(err)
	}
	ds, err := ch.Consume(name, "", false, false, false, false, amqp.Table{"x-stream-offset": "first"})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.After(20 * time.Second)
	for seen := 0; seen < n; seen++ {
		select {
		case <-ds:
		case <-deadline:
			t.Fatalf("the stream %s delivered %d of %d messages", name, seen, n)
		}
	}
	ch.Close()
}

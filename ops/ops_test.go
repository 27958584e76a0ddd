//go:build integration

package ops

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/testkit"
)

// ordersContext knows the consumer queue orders but not its DLQ: the
// pairing comes from the broker's dead-letter settings.
func ordersContext() *config.Context {
	return &config.Context{Name: "test", Username: "guest", Queues: []config.Queue{
		{Name: "orders", LogicalID: "header:event_id"},
	}}
}

func TestBrowsePlanAndReplayThroughTheAdapter(t *testing.T) {
	vhost := testkit.Vhost(t, "warren-ops")
	rejectedScene(t, vhost, 3)
	l := newOps(t, ordersContext())
	ctx := testCtx(t)
	ref := domain.QueueRef{Vhost: vhost, Name: "orders.dlq"}

	s, err := l.Open(ctx, ref, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	page, err := s.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Letters) != 3 || page.Depth != 3 {
		t.Fatalf("page holds %d letters of a depth of %d, want 3 of 3", len(page.Letters), page.Depth)
	}
	for _, d := range page.Letters {
		if d.Reason != "rejected" || d.OriginQueue != "orders" || !strings.HasPrefix(d.LogicalID, "ev-") || d.LogicalIDFrom != domain.IDHeader {
			t.Errorf("letter %+v: want a rejection from orders with the event_id header as logical ID", d)
		}
	}
	if _, err := l.Lookup(ctx, ref, []string{"ev-a"}); !errors.Is(err, ErrNoInbox) {
		t.Errorf("lookup without an inbox = %v, want ErrNoInbox", err)
	}

	plan, err := l.Plan(ctx, Scope{Action: Replay, Queue: ref, Held: s, Letters: page.Letters[:2]})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Selected != 2 || plan.Publish != 2 || len(plan.Destinations) != 1 || plan.Destinations[0].Name != "queue orders (default exchange)" {
		t.Fatalf("plan = %+v", plan)
	}
	if !strings.Contains(plan.Summary, "Replay 2 messages") || !strings.Contains(plan.Summary, "orders.dlq") {
		t.Errorf("summary = %q", plan.Summary)
	}
	var last Progress
	res, err := l.Run(ctx, plan, func(p Progress) { last = p })
	if err != nil {
		t.Fatal(err)
	}
	if res.Confirmed != 2 || res.Selected != 2 || res.Operation == "" {
		t.Errorf("result = %+v", res)
	}
	if last.Total != 2 || last.Done != 2 || last.Confirmed != 2 {
		t.Errorf("last progress = %+v", last)
	}
	if held := s.Letters(); len(held) != 1 || held[0].LogicalID != page.Letters[2].LogicalID {
		t.Errorf("still held: %+v, want only the unselected letter", held)
	}
	ch := testkit.Channel(t, testConn(t, vhost))
	testkit.WaitDepth(t, ch, "orders", 2)

	r := AuditReader{l}
	ops, err := r.Operations(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 1 || ops[0].Operation != res.Operation || ops[0].Counts["confirmed"] != 2 || ops[0].Incomplete() {
		t.Errorf("audit operations = %+v", ops)
	}
	if v, err := r.Verify(ctx); err != nil || !v.OK {
		t.Errorf("verify = %+v, %v", v, err)
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitDepth(t, ch, "orders.dlq", 1)
	select {
	case err := <-s.Done():
		if err != nil {
			t.Errorf("a closed session reported %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Done did not fire after Close")
	}
}

func TestQuarantineGoesToTheParkingQueue(t *testing.T) {
	vhost := testkit.Vhost(t, "warren-ops")
	rejectedScene(t, vhost, 2)
	l := newOps(t, ordersContext())
	ctx := testCtx(t)
	ref := domain.QueueRef{Vhost: vhost, Name: "orders.dlq"}
	s, err := l.Open(ctx, ref, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	page, err := s.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := l.Plan(ctx, Scope{Action: Quarantine, Queue: ref, Held: s, Letters: page.Letters, Reason: "poison"})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Publish != 2 || plan.Destinations[0].Name != "queue orders.dlq.quarantine (default exchange)" {
		t.Fatalf("plan = %+v", plan)
	}
	if _, err := l.Run(ctx, plan, func(Progress) {}); err != nil {
		t.Fatal(err)
	}
	testkit.WaitDepth(t, testkit.Channel(t, testConn(t, vhost)), "orders.dlq.quarantine", 2)
}

func TestQuorumDLQWithADeliveryLimitIsRefusedUnlessAllowed(t *testing.T) {
	vhost := testkit.Vhost(t, "warren-ops")
	ch := testkit.Channel(t, testConn(t, vhost))
	testkit.Declare(t, ch, "limited.dlq", amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": 5})
	l := newOps(t, ordersContext())
	ctx := testCtx(t)
	ref := domain.QueueRef{Vhost: vhost, Name: "limited.dlq"}

	_, err := l.Open(ctx, ref, false)
	if testkit.AtLeast(t, 4, 3) {
		// A browse returns with basic.nack, which 4.3 does not count.
		if err != nil {
			t.Fatalf("open on RabbitMQ %s = %v, want a browse: returns are free there", testkit.Version(t), err)
		}
		return
	}
	var refused *domain.RefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("open = %v, want a refusal", err)
	}
	if !strings.Contains(refused.Reason, "delivery limit 5") || !strings.Contains(refused.Risk, "limit of 5") {
		t.Errorf("refusal = %+v", refused)
	}
	s, err := l.Open(ctx, ref, true)
	if err != nil {
		t.Fatalf("open allowing the risk: %v", err)
	}
	defer s.Close()
	page, err := s.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !page.End || len(page.Notes) == 0 {
		t.Errorf("page = %+v, want the end of an empty queue with the override noted", page)
	}
}

func TestASessionKilledByTheBrokerReportsWhy(t *testing.T) {
	vhost := testkit.Vhost(t, "warren-ops")
	rejectedScene(t, vhost, 1)
	l := newOps(t, ordersContext())
	ctx := testCtx(t)
	s, err := l.Open(ctx, domain.QueueRef{Vhost: vhost, Name: "orders.dlq"}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Next(ctx); err != nil {
		t.Fatal(err)
	}
	done := s.Done()
	// The management API lists a connection once the broker has emitted
	// its statistics, which can come after the session's first: the
	// connections listed are closed again until the session reports.
	deadline := time.After(20 * time.Second)
	for closed := 0; ; {
		closed += closeListed(t, vhost)
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "lost") {
				t.Errorf("Done = %v, want the loss explained", err)
			}
			return
		case <-time.After(500 * time.Millisecond):
		case <-deadline:
			t.Fatalf("the session did not report its death (%d connections closed)", closed)
		}
	}
}

// closeListed has the broker close every connection the management API
// lists in vhost, as an operator (or a node restart) would, and says how
// many it closed. A connection listed after it closed (the list lags by
// a statistics interval) answers 404, which is not a failure here.
func closeListed(t *testing.T, vhost string) int {
	t.Helper()
	var conns []struct{ Name string }
	decodeJSON(t, testkit.Mgmt(t, http.MethodGet, "/api/vhosts/"+url.PathEscape(vhost)+"/connections", nil), &conns)
	closed := 0
	for _, c := range conns {
		req, err := http.NewRequest(http.MethodDelete, testkit.MgmtURL+"/api/connections/"+url.PathEscape(c.Name), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth("guest", "guest")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		switch {
		case resp.StatusCode < 300:
			closed++
		case resp.StatusCode != http.StatusNotFound:
			t.Fatalf("DELETE connection %s: %s", c.Name, resp.Status)
		}
	}
	return closed
}

func TestAWholeQueuePlanReadsEveryMessageAndStreamsTheFilteredOnes(t *testing.T) {
	vhost := testkit.Vhost(t, "warren-ops")
	rejectedScene(t, vhost, 6)
	l := newOps(t, ordersContext())
	ctx := testCtx(t)
	ref := domain.QueueRef{Vhost: vhost, Name: "orders.dlq"}
	f, err := CompileFilter(`logical_id in ["ev-a", "ev-c", "ev-e"]`)
	if err != nil {
		t.Fatal(err)
	}

	plan, err := l.Plan(ctx, Scope{Action: Replay, Queue: ref, Filter: f, FilterText: "three of six"})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Selected != 6 || plan.Publish != 3 || len(plan.Destinations) != 1 || plan.Destinations[0].Count != 3 {
		t.Fatalf("plan = %+v, want 6 read and 3 moving to orders", plan)
	}
	if !strings.Contains(plan.Summary, "read 6 messages of the queue") {
		t.Errorf("summary does not state the N read: %q", plan.Summary)
	}
	ch := testkit.Channel(t, testConn(t, vhost))
	testkit.WaitDepth(t, ch, "orders.dlq", 6) // the preview gave everything back

	res, err := l.Run(ctx, plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Confirmed != 3 || res.Operation == "" {
		t.Fatalf("result = %+v, want 3 confirmed", res)
	}
	testkit.WaitDepth(t, ch, "orders", 3)
	testkit.WaitDepth(t, ch, "orders.dlq", 3)
	var left []string
	for range 3 {
		d, ok, err := ch.Get("orders.dlq", false)
		if err != nil || !ok {
			t.Fatalf("get: %v %v", ok, err)
		}
		left = append(left, d.MessageId)
	}
	if strings.Join(left, ",") != "m-ev-b,m-ev-d,m-ev-f" {
		t.Errorf("left in the DLQ, in order: %v, want the three the filter did not match", left)
	}
}

func TestAWholeQueuePlanRefusesAMissingDestinationBeforeMovingAnything(t *testing.T) {
	vhost := testkit.Vhost(t, "warren-ops")
	rejectedScene(t, vhost, 2)
	ch := testkit.Channel(t, testConn(t, vhost))
	if _, err := ch.QueueDelete("orders", false, false, false); err != nil {
		t.Fatal(err)
	}
	l := newOps(t, ordersContext())
	_, err := l.Plan(testCtx(t), Scope{Action: Replay, Queue: domain.QueueRef{Vhost: vhost, Name: "orders.dlq"}})
	if !errors.Is(err, actions.ErrNoDestination) || !strings.Contains(err.Error(), "orders") {
		t.Fatalf("plan with the origin queue gone = %v, want ErrNoDestination naming it", err)
	}
	testkit.WaitDepth(t, ch, "orders.dlq", 2)
}

// The browse session dies while the prompt is open (a lost network, the
// broker's consumer timeout): the broker has the messages back, so a
// confirmed plan must publish nothing, or every copy would exist beside
// its source.
func TestAPlanWhoseSessionDiedPublishesNothing(t *testing.T) {
	vhost := testkit.Vhost(t, "warren-ops")
	rejectedScene(t, vhost, 3)
	l := newOps(t, ordersContext())
	ctx := testCtx(t)
	ref := domain.QueueRef{Vhost: vhost, Name: "orders.dlq"}
	s, err := l.Open(ctx, ref, false)
	if err != nil {
		t.Fatal(err)
	}
	page, err := s.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := l.Plan(ctx, Scope{Action: Replay, Queue: ref, Held: s, Letters: page.Letters})
	if err != nil {
		t.Fatal(err)
	}
	// The connection drops, as a network would drop it.
	s.holder().conn.Close()
	if _, err := l.Run(ctx, plan, nil); err == nil || !strings.Contains(err.Error(), "nothing was published") {
		t.Fatalf("Run on a dead session = %v, want a refusal saying nothing was published", err)
	}
	ch := testkit.Channel(t, testConn(t, vhost))
	testkit.WaitDepth(t, ch, "orders.dlq", 3)
	if n := testkit.Depth(t, ch, "orders"); n != 0 {
		t.Fatalf("%d copies reached orders from a dead session's plan", n)
	}
}

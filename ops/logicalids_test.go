//go:build integration

package ops

import (
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/testkit"
)

// The dashboard's question, planned over held messages, counts the
// logical IDs as the command line's does: three rejected messages of
// which two carry ev-a.
func TestThePlansQuestionSaysWhenHeldMessagesShareALogicalID(t *testing.T) {
	vhost := testkit.Vhost(t, "warren-ops-ids")
	ch := testkit.Channel(t, testConn(t, vhost))
	testkit.Declare(t, ch, "orders.dlq", nil)
	testkit.Declare(t, ch, "orders", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq"})
	events := orderEvents(3)
	events[1].Headers = amqp.Table{"event_id": "ev-a"}
	testkit.DeadLetter(t, ch, "orders", "orders.dlq", events)

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
	plan, err := l.Plan(ctx, Scope{Action: Replay, Queue: ref, Held: s, Letters: page.Letters})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(plan.Summary, "Replay 3 messages, 2 logical IDs: 1 duplicated (") {
		t.Errorf("summary = %q", plan.Summary)
	}
	plan, err = l.Plan(ctx, Scope{Action: Quarantine, Queue: ref, Held: s, Letters: page.Letters[1:], Reason: "poison"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(plan.Summary, "Quarantine 2 messages (") {
		t.Errorf("two distinct logical IDs: summary = %q", plan.Summary)
	}
}

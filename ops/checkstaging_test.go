//go:build integration

package ops

import (
	"errors"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/testkit"
)

// A whole-queue replay's plan says, before anyone confirms, which
// staging its run would refuse before anything moves: a canary waited
// for on an origin no consumer takes from, the consumers' pace there.
// Once a consumer takes from it, the same staging passes.
func TestCheckStagingSaysBeforeTheConfirmWhatTheRunWouldRefuse(t *testing.T) {
	vhost := testkit.Vhost(t, "warren-ops")
	// orders dead-letters through a named exchange, which the canary's
	// witness binds like the DLQ.
	ch := testkit.Channel(t, testConn(t, vhost))
	if err := ch.ExchangeDeclare("orders.dlx", amqp.ExchangeDirect, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	testkit.Declare(t, ch, "orders.dlq", nil)
	if err := ch.QueueBind("orders.dlq", "orders", "orders.dlx", false, nil); err != nil {
		t.Fatal(err)
	}
	testkit.Declare(t, ch, "orders", amqp.Table{"x-dead-letter-exchange": "orders.dlx"})
	testkit.DeadLetter(t, ch, "orders", "orders.dlq", orderEvents(3))
	l := newOps(t, ordersContext())
	ref := domain.QueueRef{Vhost: vhost, Name: "orders.dlq"}
	p, err := l.Plan(testCtx(t), Scope{Action: Replay, Queue: ref})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	canary := Staging{Canary: 1, CanaryWait: 30 * time.Second, HaltAt: 0.1}
	err = l.CheckStaging(testCtx(t), p, canary)
	if !errors.Is(err, actions.ErrCannotJudge) || !strings.Contains(err.Error(), "orders has no consumer") {
		t.Fatalf("a canary on orders without a consumer: %v, want the run's refusal naming orders", err)
	}
	if err := l.CheckStaging(testCtx(t), p, Staging{RateAuto: true}); err == nil || !strings.Contains(err.Error(), "orders") {
		t.Errorf("the consumers' pace on orders without a consumer: %v, want a refusal naming orders", err)
	}
	if err := l.CheckStaging(testCtx(t), p, Staging{Canary: 1}); err != nil {
		t.Errorf("a canary not waited for: %v, want no refusal", err)
	}
	// The check read nothing off the queue.
	if got := testkit.Depth(t, ch, "orders.dlq"); got != 3 {
		t.Fatalf("orders.dlq holds %d after the checks, want its 3", got)
	}
	if _, err := ch.Consume("orders", "", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := l.CheckStaging(testCtx(t), p, canary); err != nil {
		t.Errorf("a canary on orders with a consumer: %v, want no refusal", err)
	}

	// A DLQ fed through the default exchange, and no inbox: nothing
	// could see a copy die, which the check says as the run would.
	blind := testkit.Vhost(t, "warren-ops")
	rejectedScene(t, blind, 3)
	bp, err := l.Plan(testCtx(t), Scope{Action: Replay, Queue: domain.QueueRef{Vhost: blind, Name: "orders.dlq"}})
	if err != nil {
		t.Fatal(err)
	}
	defer bp.Close()
	var sr *StagingRefusal
	if err := l.CheckStaging(testCtx(t), bp, canary); !errors.As(err, &sr) || !strings.Contains(sr.Why, "dead-letters through the default exchange") {
		t.Errorf("a canary nothing could judge: %v, want the run's refusal naming the default exchange", err)
	}
}

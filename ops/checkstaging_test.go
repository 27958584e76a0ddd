//go:build integration

package ops

import (
	"errors"
	"strings"
	"testing"
	"time"

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
	rejectedScene(t, vhost, 3)
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
	ch := testkit.Channel(t, testConn(t, vhost))
	if got := testkit.Depth(t, ch, "orders.dlq"); got != 3 {
		t.Fatalf("orders.dlq holds %d after the checks, want its 3", got)
	}
	if _, err := ch.Consume("orders", "", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := l.CheckStaging(testCtx(t), p, canary); err != nil {
		t.Errorf("a canary on orders with a consumer: %v, want no refusal", err)
	}
}

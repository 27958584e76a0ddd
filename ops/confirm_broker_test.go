//go:build integration

package ops

import (
	"testing"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/testkit"
)

// A plan carries the rule's answer for the messages it moves: in a
// production context the phrase counts those the filter picks, not
// those read; a plan no one is asked about asks nothing.
func TestAPlanCarriesTheConfirmationForWhatItMoves(t *testing.T) {
	vhost := testkit.Vhost(t, "warren-ops-confirm")
	rejectedScene(t, vhost, 6)
	c := ordersContext()
	c.Environment = "prod"
	l := newOps(t, c)
	ctx := testCtx(t)
	ref := domain.QueueRef{Vhost: vhost, Name: "orders.dlq"}
	f, err := CompileFilter(`logical_id in ["ev-a", "ev-c", "ev-e"]`)
	if err != nil {
		t.Fatal(err)
	}
	p, err := l.Plan(ctx, Scope{Action: Replay, Queue: ref, Filter: f, FilterText: "three of six", DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Confirm{Phrase: "orders.dlq 3", Why: "production context"}); p.Confirm != want || p.Idle() {
		t.Errorf("plan of 3 of 6 in production: confirm %+v (idle %v), want %+v", p.Confirm, p.Idle(), want)
	}
	none, err := CompileFilter(`logical_id == "ev-z"`)
	if err != nil {
		t.Fatal(err)
	}
	p, err = l.Plan(ctx, Scope{Action: Replay, Queue: ref, Filter: none, FilterText: "none", DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Idle() || p.Publish != 0 {
		t.Errorf("a plan that moves nothing: idle %v, publish %d", p.Idle(), p.Publish)
	}
	p, err = l.Plan(ctx, Scope{Action: Replay, Queue: ref, Unasked: true, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Confirm != (Confirm{}) || p.Decided || p.Idle() {
		t.Errorf("an unasked plan: confirm %+v, decided %v, idle %v; want nothing asked and nothing decided", p.Confirm, p.Decided, p.Idle())
	}
	testkit.WaitDepth(t, testkit.Channel(t, testConn(t, vhost)), "orders.dlq", 6)
}

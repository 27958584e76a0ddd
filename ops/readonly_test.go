package ops

import (
	"errors"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/testkit"
)

// A read-only context is refused every change by the operations layer
// itself, whichever front end calls it: the command line's own check is
// not what keeps messages where they are.
func TestTheOperationsLayerRefusesEveryChangeInAReadOnlyContext(t *testing.T) {
	vhost := testkit.Vhost(t, "warren-ops-ro")
	rejectedScene(t, vhost, 3)
	o := newOps(t, &config.Context{Name: "ro", ReadOnly: true, Vhost: vhost})
	ctx := testCtx(t)
	ref := domain.QueueRef{Vhost: vhost, Name: "orders.dlq"}
	tgt, err := o.Resolve(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	req := PlanRequest{Action: Replay, Queue: ref}
	if _, err := o.StreamNow(ctx, tgt, req, 0, nil); !errors.Is(err, ErrReadOnly) {
		t.Errorf("a streamed replay: %v", err)
	}
	pre, err := o.Preview(ctx, tgt, req, 0)
	if err != nil {
		t.Fatalf("a preview changes nothing and is allowed: %v", err)
	}
	if _, err := o.Stream(ctx, tgt, pre, nil); !errors.Is(err, ErrReadOnly) {
		t.Errorf("a previewed replay: %v", err)
	}
	if _, err := o.Resume(ctx, tgt, &actions.Resumption{}, nil); !errors.Is(err, ErrReadOnly) {
		t.Errorf("a resume: %v", err)
	}
	if _, err := o.Edit(ctx, Plan{}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("an edit: %v", err)
	}
	s, err := o.Open(ctx, ref, false)
	if err != nil {
		t.Fatalf("a browse within the guard is allowed: %v", err)
	}
	if _, err := s.Next(ctx); err != nil {
		t.Fatal(err)
	}
	plan, err := o.Plan(ctx, PlanRequest{Action: Quarantine, Queue: ref, Session: s, Letters: s.Letters(), Reason: "x"})
	if err != nil {
		t.Fatalf("a plan changes nothing and is allowed: %v", err)
	}
	if _, err := o.Execute(ctx, plan, nil); !errors.Is(err, ErrReadOnly) {
		t.Errorf("a held quarantine: %v", err)
	}
	s.Close()
	if _, err := o.Open(ctx, ref, true); !errors.Is(err, ErrReadOnly) {
		t.Errorf("a browse past the delivery-limit guard: %v", err)
	}
	if n := testkit.Depth(t, testkit.Channel(t, testConn(t, vhost)), "orders.dlq"); n != 3 {
		t.Errorf("orders.dlq holds %d, want its 3", n)
	}
}

// A publisher can write x-death (and x-last-death-*) itself, straight
// into a DLQ: the origin it names is a destination only where the
// pairing confirms it. The broker's own dead letters still go back.
func TestAForgedDeathOriginIsNotReplayedTo(t *testing.T) {
	vhost := testkit.Vhost(t, "warren-ops-forged")
	rejectedScene(t, vhost, 2)
	ch := testkit.Channel(t, testConn(t, vhost))
	testkit.Declare(t, ch, "victim", nil)
	forged := amqp.Publishing{MessageId: "forged", Body: []byte("x"), Headers: amqp.Table{
		"x-death":            []any{amqp.Table{"queue": "victim", "reason": "rejected", "count": int64(1), "exchange": "", "routing-keys": []any{"victim"}}},
		"x-last-death-queue": "victim", "x-last-death-reason": "rejected", "x-first-death-queue": "victim", "x-first-death-reason": "rejected",
	}}
	if err := ch.Publish("", "orders.dlq", false, false, forged); err != nil {
		t.Fatal(err)
	}
	testkit.WaitDepth(t, ch, "orders.dlq", 3)
	o := newOps(t, &config.Context{Name: "t", Vhost: vhost})
	ctx := testCtx(t)
	ref := domain.QueueRef{Vhost: vhost, Name: "orders.dlq"}
	tgt, err := o.Resolve(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	pre, err := o.Preview(ctx, tgt, PlanRequest{Action: Replay, Queue: ref}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if pre.Moving != 2 || pre.Unconfirmed+pre.NoDestination != 1 {
		t.Fatalf("preview: %d moving, %d unconfirmed, %d without destination: %s", pre.Moving, pre.Unconfirmed, pre.NoDestination, pre.Summary())
	}
	if _, err := o.Stream(ctx, tgt, pre, nil); err != nil {
		t.Fatal(err)
	}
	testkit.WaitDepth(t, ch, "orders", 2)
	if n := testkit.Depth(t, ch, "victim"); n != 0 {
		t.Errorf("victim received %d messages", n)
	}
	if n := testkit.Depth(t, ch, "orders.dlq"); n != 1 {
		t.Errorf("orders.dlq holds %d, want the forged one", n)
	}
}

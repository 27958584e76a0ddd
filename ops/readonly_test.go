//go:build integration

package ops

import (
	"errors"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

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
	// A whole queue streamed without a preview (--yes): refused when
	// planned, and a dry run's plan refused when run.
	if _, err := o.Plan(ctx, Scope{Action: Replay, Queue: ref, Unasked: true}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("a streamed replay: %v", err)
	}
	unasked, err := o.Plan(ctx, Scope{Action: Replay, Queue: ref, Unasked: true, DryRun: true})
	if err != nil {
		t.Fatalf("a dry run of a streamed replay changes nothing and is allowed: %v", err)
	}
	if _, err := o.Run(ctx, unasked, nil); !errors.Is(err, ErrReadOnly) {
		t.Errorf("a streamed replay planned as a dry run: %v", err)
	}
	// A whole queue previewed: refused when planned to run; a dry run
	// previews, which changes nothing, and its plan is refused when run.
	if _, err := o.Plan(ctx, Scope{Action: Replay, Queue: ref}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("a previewed replay: %v", err)
	}
	pre, err := o.Plan(ctx, Scope{Action: Replay, Queue: ref, DryRun: true})
	if err != nil {
		t.Fatalf("a preview changes nothing and is allowed: %v", err)
	}
	if pre.Selected != 3 {
		t.Errorf("the preview read %d messages, want the 3 of orders.dlq", pre.Selected)
	}
	if _, err := o.Run(ctx, pre, nil); !errors.Is(err, ErrReadOnly) {
		t.Errorf("a previewed replay: %v", err)
	}
	if _, err := o.Plan(ctx, Scope{Action: Resume, Queue: ref}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("a resume: %v", err)
	}
	if _, err := o.Plan(ctx, Scope{Action: Edit, Queue: ref}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("an edit: %v", err)
	}
	s, err := o.Open(ctx, ref, false)
	if err != nil {
		t.Fatalf("a browse within the guard is allowed: %v", err)
	}
	if _, err := s.Next(ctx); err != nil {
		t.Fatal(err)
	}
	if len(s.Letters()) != 3 {
		t.Fatalf("the session holds %d letters, want 3", len(s.Letters()))
	}
	if _, err := o.StartEdit(ctx, ref, s, s.Letters()[0]); !errors.Is(err, ErrReadOnly) {
		t.Errorf("an edit started: %v", err)
	}
	held := Scope{Action: Quarantine, Queue: ref, Held: s, Letters: s.Letters(), Reason: "x"}
	if _, err := o.Plan(ctx, held); !errors.Is(err, ErrReadOnly) {
		t.Errorf("a held quarantine planned: %v", err)
	}
	held.DryRun = true
	plan, err := o.Plan(ctx, held)
	if err != nil {
		t.Fatalf("a plan changes nothing and is allowed: %v", err)
	}
	if _, err := o.Run(ctx, plan, nil); !errors.Is(err, ErrReadOnly) {
		t.Errorf("a held quarantine: %v", err)
	}
	s.Close()
	if _, err := o.Open(ctx, ref, true); !errors.Is(err, ErrReadOnly) {
		t.Errorf("a browse past the delivery-limit guard: %v", err)
	}
	if _, err := o.Scan(ctx, ref, true, nil); !errors.Is(err, ErrReadOnly) {
		t.Errorf("a whole-queue scan past the delivery-limit guard: %v", err)
	}
	if _, err := o.Scan(ctx, ref, false, nil); err != nil {
		t.Errorf("a whole-queue scan within the guard is allowed: %v", err)
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
	pre, err := o.Plan(ctx, Scope{Action: Replay, Queue: ref})
	if err != nil {
		t.Fatal(err)
	}
	// The one that stays is either unconfirmed or without a destination,
	// and the plan says which.
	unconfirmed := strings.Contains(pre.Summary, "1 stay: destination not confirmed")
	noDestination := strings.Contains(pre.Summary, "1 without an origin queue stay")
	if pre.Publish != 2 || pre.Selected != 3 || pre.SkippedApplied != 0 || unconfirmed == noDestination {
		t.Fatalf("plan: %d moving of %d read, unconfirmed %v, without destination %v: %s", pre.Publish, pre.Selected, unconfirmed, noDestination, pre.Summary)
	}
	for _, d := range pre.Destinations {
		if strings.Contains(d.Name, "victim") {
			t.Errorf("the plan sends %d messages to %s", d.Count, d.Name)
		}
	}
	if _, err := o.Run(ctx, pre, nil); err != nil {
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

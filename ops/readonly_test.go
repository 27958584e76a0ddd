package ops

import (
	"errors"
	"testing"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/sources/brokertest"
	"github.com/warrenops/warren/sources/mgmt"
)

// A read-only context is refused every change by the operations layer
// itself, whichever front end calls it: the command line's own check is
// not what keeps messages where they are.
func TestTheOperationsLayerRefusesEveryChangeInAReadOnlyContext(t *testing.T) {
	vhost := brokertest.Vhost(t, "warren-ops-ro")
	rejectedScene(t, vhost, 3)
	o := newOps(t, &config.Context{Name: "ro", ReadOnly: true, Vhost: vhost})
	ctx := testCtx(t)
	ref := mgmt.QueueRef{Vhost: vhost, Name: "orders.dlq"}
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
	if n := brokertest.Depth(t, brokertest.Channel(t, testConn(t, vhost)), "orders.dlq"); n != 3 {
		t.Errorf("orders.dlq holds %d, want its 3", n)
	}
}

package deadletters

import (
	"context"
	"testing"
	"time"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/ui/styles"
)

func TestASessionThatOpensAfterCloseIsClosed(t *testing.T) {
	late := newSession()
	m := New(ref, Deps{Browser: &fakeBrowser{sessions: []*fakeSession{late}}}, Options{Styles: styles.New(true)})
	m.Close()()
	msg := openCmd(context.Background(), m.life, m.deps.Browser, ref, false, 42, nil)()
	if om := msg.(openedMsg); om.session != nil || om.err == nil {
		t.Errorf("opened = %+v, want no session and an error", om)
	}
	if !late.isClosed() {
		t.Error("the late session was leaked")
	}
}

// gatedActions blocks Execute until released, to catch Close in the act.
type gatedActions struct {
	fakeActions
	started, release chan struct{}
}

func (a *gatedActions) Run(ctx context.Context, p *ops.Plan, progress func(ops.Progress)) (ops.Result, error) {
	close(a.started)
	<-a.release
	return ops.Result{Counts: ops.Counts{Operation: "op-gated"}}, ctx.Err()
}

func TestCloseWaitsForARunningOperationBeforeReturningTheMessages(t *testing.T) {
	acts := &gatedActions{started: make(chan struct{}), release: make(chan struct{})}
	d, s := browsingDriver(t, Options{}, nil)
	d.m.deps.Actions = acts
	d.keys("r")
	d.until("the prompt", func() bool { return d.m.mode() == prompting })
	d.keys("y")
	d.until("the operation to start", func() bool {
		select {
		case <-acts.started:
			return true
		default:
			return false
		}
	})

	closed := make(chan struct{})
	go func() {
		d.m.Close()()
		close(closed)
	}()
	select {
	case <-closed:
		t.Fatal("Close returned the messages while the operation was still running")
	case <-time.After(50 * time.Millisecond):
	}
	if s.isClosed() {
		t.Fatal("the session was closed under a running operation")
	}
	close(acts.release)
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not finish after the operation settled")
	}
	if !s.isClosed() {
		t.Error("the session was not closed")
	}
}

func TestAnOperationDoesNotStartAfterClose(t *testing.T) {
	acts := &fakeActions{}
	m := New(ref, Deps{Actions: acts}, Options{Styles: styles.New(true)})
	m.Close()()
	msg := executeCmd(context.Background(), m.life, acts, &ops.Plan{Decided: true, Publish: 1}, 1, make(chan ops.Progress, 1))()
	if r := msg.(resultMsg); r.err == nil {
		t.Error("an operation ran on a closed screen")
	}
	if _, exec := acts.plans(); len(exec) != 0 {
		t.Errorf("executed %d plans after Close", len(exec))
	}
}

// orderBrowser records, at each Open, whether the session before was
// closed by then.
type orderBrowser struct {
	*fakeBrowser
	before      *fakeSession
	closedFirst []bool
}

func (b *orderBrowser) Open(ctx context.Context, r domain.QueueRef, allowRisk bool) (ops.Session, error) {
	b.closedFirst = append(b.closedFirst, b.before.isClosed())
	return b.fakeBrowser.Open(ctx, r, allowRisk)
}

// Reopening gives back what the screen held before the next session
// looks at the queue: else it finds the screen's own messages held by
// "another client", and fewer ready.
func TestReopeningClosesTheSessionBeforeOpeningTheNext(t *testing.T) {
	d, first := browsingDriver(t, Options{}, nil)
	b := &orderBrowser{fakeBrowser: &fakeBrowser{sessions: []*fakeSession{newSession()}}, before: first}
	d.m.deps.Browser = b
	msg := d.m.open(false)()
	if om, ok := msg.(openedMsg); !ok || om.err != nil {
		t.Fatalf("reopened: %#v", msg)
	}
	if len(b.closedFirst) != 1 || !b.closedFirst[0] {
		t.Errorf("the session before closed when the next opened: %v, want [true]", b.closedFirst)
	}
}

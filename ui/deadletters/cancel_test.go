package deadletters

import (
	"context"
	"strings"
	"testing"

	"github.com/warrenops/warren/ops"
)

// stoppableActions publishes the first message of a plan, then waits to
// be cancelled and settles as actions.Execute does: what was confirmed
// stays confirmed, the rest is not sent.
type stoppableActions struct {
	fakeActions
	started chan struct{}
}

func (a *stoppableActions) Run(ctx context.Context, p *ops.Plan, progress func(ops.Progress)) (ops.Result, error) {
	progress(ops.Progress{Total: p.Publish, Done: 1, Confirmed: 1, At: t0})
	close(a.started)
	<-ctx.Done()
	return ops.Result{Counts: ops.Counts{Operation: "op-2", Selected: p.Publish, Confirmed: 1, NotSent: p.Publish - 1, Cancelled: true}}, nil
}

func helpOf(m *Model) string {
	var out []string
	for _, b := range m.Keys().ShortHelp() {
		if b.Enabled() {
			out = append(out, b.Help().Key+" "+b.Help().Desc)
		}
	}
	return strings.Join(out, ", ")
}

func TestARunningOperationCanBeCancelled(t *testing.T) {
	acts := &stoppableActions{started: make(chan struct{})}
	d, _ := browsingDriver(t, Options{}, &acts.fakeActions)
	d.m.deps.Actions = acts
	if h := helpOf(d.m); strings.Contains(h, "cancel the operation") {
		t.Fatalf("the cancel key is offered with nothing running: %s", h)
	}
	d.keys("*", "r")
	d.until("the plan prompt", func() bool { return d.m.mode() == prompting })
	d.keys("y")
	d.until("the operation to start", func() bool {
		select {
		case <-acts.started:
			return true
		default:
			return false
		}
	})
	if h := helpOf(d.m); !strings.Contains(h, "x cancel the operation") || strings.Contains(h, "replay") || strings.Contains(h, "quarantine") {
		t.Fatalf("help while running = %q, want the cancel key and no action keys", h)
	}
	d.keys("r")
	if e := d.errorText(); !strings.Contains(e, "press x to cancel it") {
		t.Fatalf("another action while running = %q", e)
	}
	d.keys("x")
	if v := d.m.View(); !strings.Contains(v, "Replay cancelling…") {
		t.Fatalf("the progress does not say it is cancelling:\n%s", v)
	}
	d.until("the result", func() bool { return d.m.mode() == normal })
	want := "replay op-2: 4 selected, 0 skipped as applied, 1 confirmed, 0 returned, 0 nacked, 0 unknown, 3 not sent (still in the DLQ) (cancelled)"
	if !strings.Contains(d.m.op.result, want) {
		t.Fatalf("result = %q, want %q", d.m.op.result, want)
	}
	// The notice is a message of its own, which may arrive after the
	// result: wait for it (until fails the test if it never comes).
	d.until("the cancelled notice", func() bool {
		info := d.infoText()
		// The message line says the operation ended and where to look,
		// without repeating the counts the screen shows.
		return strings.Contains(info, "Replay op-2 cancelled: the counts are under the table") && !strings.Contains(info, "confirmed")
	})
	if h := helpOf(d.m); !strings.Contains(h, "r replay") {
		t.Fatalf("the action keys did not come back: %s", h)
	}
}

func TestPlanningOffersOnlyEsc(t *testing.T) {
	d, _ := browsingDriver(t, Options{}, &fakeActions{})
	d.m.op.mode = planning
	if h := helpOf(d.m); h != "esc cancel, ↑/k up, ↓/j down" {
		t.Fatalf("help while planning = %q", h)
	}
}

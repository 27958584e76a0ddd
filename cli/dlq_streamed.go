package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
)

// runStreamedAction acts on every message of a classic or quorum DLQ (or
// its first --limit), whatever its size: a preview reads the queue and
// decides every message, the prompt states it, and the operation then
// streams over the messages the queue holds when it starts, with memory
// bounded by its windows.
func (a *App) runStreamedAction(ctx context.Context, o *ops.Ops, t *ops.Target, preq ops.PlanRequest, f actionFlags) error {
	defer bulkMemory()()
	if f.yes && !f.dryRun {
		// No one is asked, so no preview: the run decides as it goes.
		ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
		res, err := o.StreamNow(ctx, t, preq, f.limit, a.progressPrinter(f.action))
		if rerr := refusal(err); rerr != nil && res.Operation == "" {
			return rerr
		}
		if res.Cancelled {
			printNotes(a.Err, []string{fmt.Sprintf("cancelled: %d moved, the other %d stay in %s", res.Moved, max(res.Taken-res.Moved, 0), t.Ref.Name)})
		}
		rerr := a.report(ops.Action(f.action), t.Ref.Name, res, err, f)
		if errors.Is(err, actions.ErrNoDestination) {
			return Refused(err)
		}
		return rerr
	}
	if IsTerminal(a.Err) {
		fmt.Fprintf(a.Err, "reading %s to plan the %s…\n", sanitize.Text(t.Ref.Name), f.action)
	}
	pre, err := o.Preview(ctx, t, preq, f.limit)
	if err != nil {
		if rerr := refusal(err); rerr != nil {
			return rerr
		}
		return err
	}
	if f.dryRun || pre.Moving == 0 {
		return a.printPlan(pre.Summary(), pre.Lines(), pre.Moving, pre.SkippedApplied, f)
	}
	if err := o.CheckDestinations(t, pre); err != nil {
		if rerr := refusal(err); rerr != nil {
			return rerr
		}
		return err
	}
	if err := a.confirm(ctx, t.Ref.Name, pre.Summary(), pre.Moving, f); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := o.Stream(ctx, t, pre, a.progressPrinter(f.action))
	if res.Operation != "" {
		printNotes(a.Err, drift(pre, res))
	}
	return a.report(ops.Action(f.action), t.Ref.Name, res, err, f)
}

// refusal maps what an operation refuses before anything moves to its
// exit code: bad usage (2), or a guard's refusal (3). Other errors, and
// nil, give nil.
func refusal(err error) error {
	var (
		refused *domain.RefusedError
		bad     *actions.RequestError
	)
	switch {
	case errors.As(err, &refused), errors.Is(err, actions.ErrNoDestination):
		return Refused(err)
	case errors.As(err, &bad):
		return Usage(err)
	}
	return nil
}

// drift says where the run stopped short of the plan the operator
// answered; the run's own notes say what it skipped since the plan.
func drift(pre *actions.Preview, res ops.Result) []string {
	var notes []string
	if res.Cancelled {
		notes = append(notes, fmt.Sprintf("cancelled: %d moved, the other %d stay in %s", res.Moved, max(pre.Read-res.Moved, 0), pre.Request.Queue))
	}
	return notes
}

// progressPrinter writes an operation's progress to stderr: one line
// rewritten in place on a terminal, a plain line every few seconds
// otherwise, so a log shows the run without a flood.
func (a *App) progressPrinter(action string) func(ops.Progress) {
	tty := IsTerminal(a.Err)
	var (
		mu    sync.Mutex
		start time.Time
		last  time.Time
	)
	return func(p ops.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if start.IsZero() {
			start = p.At
		}
		if !tty && !p.Finished && p.At.Sub(last) < 5*time.Second {
			return
		}
		last = p.At
		line := progressLine(action, p, p.At.Sub(start))
		if tty {
			fmt.Fprint(a.Err, "\r"+line+"\033[K")
			if p.Finished {
				fmt.Fprintln(a.Err)
			}
			return
		}
		fmt.Fprintln(a.Err, line)
	}
}

// progressLine is "replay: 12000 of 200000 settled (11 998 confirmed) ·
// 8.1k msg/s · ETA 23s".
func progressLine(action string, p ops.Progress, took time.Duration) string {
	s := fmt.Sprintf("%s: %d", action, p.Done)
	if p.Total > 0 {
		s += fmt.Sprintf(" of %d", p.Total)
	}
	s += fmt.Sprintf(" settled (%d confirmed", p.Confirmed)
	if n := p.Returned + p.Nacked + p.Unknown; n > 0 {
		s += fmt.Sprintf(", %d returned, %d nacked, %d unknown", p.Returned, p.Nacked, p.Unknown)
	}
	s += ")"
	if took > 0 && p.Done > 0 {
		perSec := float64(p.Done) / took.Seconds()
		s += " · " + format.Rate(perSec) + " msg/s"
		if left := p.Total - p.Done; left > 0 && !p.Finished {
			s += " · ETA " + format.Duration(time.Duration(float64(left)/perSec*float64(time.Second)))
		}
	}
	return s
}

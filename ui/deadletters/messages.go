package deadletters

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
)

// lastID numbers sessions and operations across every DLQ screen, so a
// result that arrives after its screen or session is gone matches nothing.
var lastID atomic.Int64

func nextID() int64 { return lastID.Add(1) }

type openedMsg struct {
	sid     int64
	session ops.Session
	err     error
}

type pageMsg struct {
	sid  int64
	page ops.Page
	err  error
}

type inboxMsg struct {
	sid     int64
	applied map[string]time.Time
	asked   []string
	err     error
}

// sessionDoneMsg reports that a session ended on its own.
type sessionDoneMsg struct {
	sid int64
	err error
}

type lettersMsg struct {
	sid     int64
	letters []domain.DeadLetter
}

type planMsg struct {
	op   int64
	plan *ops.Plan
	err  error
}

// stagingMsg is what CheckStaging said of the staging the prompt shows
// (stage tells which).
type stagingMsg struct {
	stage int64
	err   error
}

type progressMsg struct {
	op int64
	p  ops.Progress
	ch <-chan ops.Progress
}

type resultMsg struct {
	op  int64
	res ops.Result
	err error
}

// openCmd opens session sid, once prev (the screen's session before,
// if any) is closed: what prev held is back in the queue, for the new
// session to read rather than take for another client's.
func openCmd(ctx context.Context, lf *life, b Browser, ref domain.QueueRef, allowRisk bool, sid int64, prev ops.Session) tea.Cmd {
	return func() tea.Msg {
		if prev != nil {
			_ = prev.Close() // the deliveries return to the queue either way
		}
		s, err := b.Open(ctx, ref, allowRisk)
		if err == nil && !lf.adopt(sid, s) {
			_ = s.Close()
			return openedMsg{sid: sid, err: context.Canceled}
		}
		return openedMsg{sid: sid, session: s, err: err}
	}
}

func nextCmd(ctx context.Context, s ops.Session, sid int64) tea.Cmd {
	return func() tea.Msg {
		p, err := s.Next(ctx)
		return pageMsg{sid: sid, page: p, err: err}
	}
}

// watchCmd waits for the session to end. A session closed by the screen
// ends too; its message then carries a sid that no longer matches.
func watchCmd(s ops.Session, sid int64) tea.Cmd {
	done := s.Done()
	return func() tea.Msg {
		return sessionDoneMsg{sid: sid, err: <-done}
	}
}

func lettersCmd(s ops.Session, sid int64) tea.Cmd {
	return func() tea.Msg { return lettersMsg{sid: sid, letters: s.Letters()} }
}

// closeCmd closes the screen's session sid, if it still has it.
func closeCmd(lf *life, sid int64) tea.Cmd {
	s := lf.release(sid)
	if s == nil {
		return nil
	}
	return func() tea.Msg {
		_ = s.Close() // the deliveries return to the queue either way
		return nil
	}
}

func inboxCmd(ctx context.Context, in InboxLookup, ref domain.QueueRef, ids []string, sid int64) tea.Cmd {
	return func() tea.Msg {
		if in == nil {
			return inboxMsg{sid: sid, asked: ids, err: ops.ErrNoInbox}
		}
		m, err := in.Lookup(ctx, ref, ids)
		return inboxMsg{sid: sid, applied: m, asked: ids, err: err}
	}
}

// planCmd asks for the plan of req; s, when not nil, is a browse session
// closed first, so what it held is back in the queue for a whole-queue
// preview to read.
func planCmd(ctx context.Context, a Actions, req ops.Scope, s ops.Session, op int64) tea.Cmd {
	return func() tea.Msg {
		if s != nil {
			_ = s.Close() // the deliveries return to the queue either way
		}
		p, err := a.Plan(ctx, req)
		if ctx.Err() != nil && p != nil {
			// Nobody waits for it (esc, or the screen closed): what it
			// holds goes back now.
			_ = p.Close()
			return nil
		}
		return planMsg{op: op, plan: p, err: err}
	}
}

// stagingCheckTimeout bounds the check of a staging the prompt shows.
const stagingCheckTimeout = 10 * time.Second

// checkStagingCmd asks whether the run would refuse st before anything
// moves, while the prompt waits for the answer to the question.
func checkStagingCmd(ctx context.Context, c StagingChecker, p *ops.Plan, st ops.Staging, stage int64) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, stagingCheckTimeout)
		defer cancel()
		return stagingMsg{stage: stage, err: c.CheckStaging(ctx, p, st)}
	}
}

// executeCmd runs the plan; progress goes to ch without ever blocking the
// operation (a slow screen misses intermediate figures, not the result).
func executeCmd(ctx context.Context, lf *life, a Actions, plan *ops.Plan, op int64, ch chan ops.Progress) tea.Cmd {
	return func() tea.Msg {
		defer close(ch)
		if !lf.begin() {
			_ = plan.Close()
			return resultMsg{op: op, err: context.Canceled}
		}
		defer lf.end()
		res, err := a.Run(ctx, plan, func(p ops.Progress) {
			select {
			case ch <- p:
			default:
			}
		})
		return resultMsg{op: op, res: res, err: err}
	}
}

// closePlan releases what a plan that will not run holds (a stream's
// page), off the update loop.
func closePlan(p *ops.Plan) tea.Cmd {
	if p == nil {
		return nil
	}
	return func() tea.Msg {
		_ = p.Close()
		return nil
	}
}

// waitProgress delivers the next progress figure and is re-armed by the
// screen for as long as the channel is open.
func waitProgress(ch <-chan ops.Progress, op int64) tea.Cmd {
	return func() tea.Msg {
		p, ok := <-ch
		if !ok {
			return nil
		}
		return progressMsg{op: op, p: p, ch: ch}
	}
}

func isRefused(err error) (*domain.RefusedError, bool) {
	var r *domain.RefusedError
	ok := errors.As(err, &r)
	return r, ok
}

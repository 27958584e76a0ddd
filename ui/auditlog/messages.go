package auditlog

import (
	"context"
	"sync/atomic"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
)

// lastLoad numbers loads and resumes across audit screens, so an answer
// for one that was superseded (or a screen that was closed) is dropped.
var lastLoad atomic.Int64

type operationsMsg struct {
	load int64
	ops  []domain.OperationSummary
	err  error
}

type verifiedMsg struct {
	load  int64
	chain ops.Chain
	err   error
}

// detailMsg answers the reading of one operation's records.
type detailMsg struct {
	load int64
	d    *ops.OperationDetail
	// search is each message's text the filter looks in, lower-cased,
	// made in the command so filtering a large operation stays cheap.
	search []string
	err    error
}

type resumePlanMsg struct {
	id   int64
	plan *ops.Plan
	err  error
}

type resumeProgressMsg struct {
	id int64
	p  ops.Progress
	ch <-chan ops.Progress
}

type resumeResultMsg struct {
	id  int64
	res ops.Result
	err error
}

// resumedMsg tells every audit screen that a resume ended, so the list
// and the operation show what the log says now.
type resumedMsg struct{ operation string }

func operationsCmd(ctx context.Context, r Reader, limit int, load int64) tea.Cmd {
	return func() tea.Msg {
		ops, err := r.Operations(ctx, limit)
		return operationsMsg{load: load, ops: ops, err: err}
	}
}

func verifyCmd(ctx context.Context, r Reader, load int64) tea.Cmd {
	return func() tea.Msg {
		c, err := r.Verify(ctx)
		return verifiedMsg{load: load, chain: c, err: err}
	}
}

func detailCmd(ctx context.Context, r Reader, id string, load int64) tea.Cmd {
	return func() tea.Msg {
		d, err := r.Operation(ctx, id)
		if err != nil {
			return detailMsg{load: load, err: err}
		}
		return detailMsg{load: load, d: d, search: searchTexts(d.Messages)}
	}
}

func planResumeCmd(ctx context.Context, r Resumer, ref domain.QueueRef, id string, n int64) tea.Cmd {
	return func() tea.Msg {
		p, err := r.Plan(ctx, ops.Scope{Action: ops.Resume, Queue: ref, Operation: id})
		return resumePlanMsg{id: n, plan: p, err: err}
	}
}

// resumeCmd runs the resume; progress goes to ch without ever blocking
// it (a slow screen misses intermediate figures, not the result).
func resumeCmd(ctx context.Context, r Resumer, p *ops.Plan, n int64, ch chan ops.Progress) tea.Cmd {
	return func() tea.Msg {
		defer close(ch)
		res, err := r.Run(ctx, p, func(pr ops.Progress) {
			select {
			case ch <- pr:
			default:
			}
		})
		return resumeResultMsg{id: n, res: res, err: err}
	}
}

// waitResumeProgress delivers the next figure and is re-armed for as
// long as the channel is open.
func waitResumeProgress(ch <-chan ops.Progress, n int64) tea.Cmd {
	return func() tea.Msg {
		p, ok := <-ch
		if !ok {
			return nil
		}
		return resumeProgressMsg{id: n, p: p, ch: ch}
	}
}

package auditlog

import (
	"context"
	"sync/atomic"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/audit"
)

// lastLoad numbers loads across audit screens, so an answer for a load
// that was superseded (or a screen that was closed) is dropped.
var lastLoad atomic.Int64

type operationsMsg struct {
	load int64
	ops  []audit.OperationSummary
	err  error
}

type verifiedMsg struct {
	load int64
	res  audit.Result
	err  error
}

func operationsCmd(ctx context.Context, r Reader, limit int, load int64) tea.Cmd {
	return func() tea.Msg {
		ops, err := r.Operations(ctx, limit)
		return operationsMsg{load: load, ops: ops, err: err}
	}
}

func verifyCmd(ctx context.Context, r Reader, load int64) tea.Cmd {
	return func() tea.Msg {
		res, err := r.Verify(ctx)
		return verifiedMsg{load: load, res: res, err: err}
	}
}

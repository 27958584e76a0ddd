package deadletters

import (
	"context"
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/sources/dlq"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/components/progress"
	"github.com/warrenops/warren/ui/components/prompt"
	"github.com/warrenops/warren/ui/format"
	"github.com/warrenops/warren/ui/sanitize"
)

// targets are the selected messages, or the one under the cursor when
// nothing is selected.
func (m *Model) targets() []dlq.DeadLetter {
	var out []dlq.DeadLetter
	for _, l := range m.letters {
		if m.selected[l.Position] {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		if l, ok := m.current(); ok {
			out = append(out, l)
		}
	}
	return out
}

func (m *Model) startAction(a ops.Action) tea.Cmd {
	name := sanitize.Text(m.ref.Name)
	switch {
	case m.opts.ReadOnly:
		return common.ReportError(fmt.Errorf("read-only context: %s is disabled (read_only in the config or --read-only)", a))
	case m.deps.Actions == nil:
		return common.ReportError(fmt.Errorf("%s is not available in this session", a))
	case m.state != browsing:
		return common.ReportError(fmt.Errorf("no browse session on %s: press R to reopen before %s", name, verb(a)))
	case len(m.targets()) == 0:
		return common.ReportError(fmt.Errorf("nothing to %s: %s holds no messages", a, name))
	}
	if a == ops.Quarantine {
		m.openPrompt(askReason, prompt.Question{
			Title: "Quarantine",
			Text:  fmt.Sprintf("Quarantine %s from %s: why? The reason is stored in each message and the audit log.", format.Messages(len(m.targets())), name),
			Ask:   "Reason",
		})
		return nil
	}
	return m.requestPlan(ops.Replay, "")
}

func (m *Model) requestPlan(a ops.Action, reason string) tea.Cmd {
	m.op = nextID()
	m.mode = planning
	m.planAction = a
	req := ops.PlanRequest{Action: a, Queue: m.ref, Session: m.session, Letters: m.targets(), Reason: reason}
	return planCmd(m.ctx, m.deps.Actions, req, m.op)
}

func (m *Model) askOverride() tea.Cmd {
	if m.state != refused || m.refusal == nil {
		return nil
	}
	name := sanitize.Text(m.ref.Name)
	m.openPrompt(confirmOverride, prompt.Question{
		Title:         "Browse anyway",
		Text:          fmt.Sprintf("Browse %s although warren refused: %s", name, sanitize.Text(m.refusal.Reason)),
		Warning:       sanitize.Text(m.refusal.Risk),
		TypeToConfirm: name,
	})
	return nil
}

func (m *Model) openPrompt(kind promptKind, q prompt.Question) {
	m.prompt = prompt.New(q, m.st)
	m.prompt.SetWidth(m.width)
	m.promptKind = kind
	m.mode = prompting
}

func (m *Model) promptKey(k tea.KeyMsg) tea.Cmd {
	var d prompt.Decision
	var cmd tea.Cmd
	m.prompt, d, cmd = m.prompt.Update(k)
	switch d {
	case prompt.Cancelled:
		m.mode = normal
		return common.Info("cancelled: nothing was changed")
	case prompt.Confirmed:
		m.mode = normal
		switch m.promptKind {
		case askReason:
			m.reason = m.prompt.Value()
			return m.requestPlan(ops.Quarantine, m.reason)
		case confirmOverride:
			return m.open(true)
		case confirmPlan:
			return m.execute()
		}
	}
	return cmd
}

func (m *Model) planned(msg planMsg) tea.Cmd {
	if msg.op != m.op || m.mode != planning {
		return nil
	}
	m.mode = normal
	if msg.err != nil {
		return common.ReportError(fmt.Errorf("planning the %s of %s failed: %w", msg.plan.Action, m.ref.Name, msg.err))
	}
	p := msg.plan
	if p.Publish <= 0 {
		return common.Info(p.Summary)
	}
	m.plan = p
	m.openPrompt(confirmPlan, m.planQuestion(p))
	return nil
}

func (m *Model) planQuestion(p ops.Plan) prompt.Question {
	q := prompt.Question{Title: title(p.Action), Text: sanitize.Text(p.Summary)}
	for _, d := range p.Destinations {
		q.Details = append(q.Details, fmt.Sprintf("→ %s: %s", sanitize.Text(d.Name), format.Messages(d.Count)))
	}
	if left := p.Selected - p.Publish; left > 0 {
		q.Details = append(q.Details, fmt.Sprintf("stay in the DLQ: %d of %d selected (%d already applied)", left, p.Selected, p.SkippedApplied))
	}
	r := "unlimited"
	if p.Rate > 0 {
		r = format.Rate(p.Rate) + " msg/s"
	}
	q.Details = append(q.Details, "rate: "+r) // the size is in the summary
	var warn []string
	for _, w := range p.Warnings {
		warn = append(warn, sanitize.Text(w))
	}
	if m.opts.Prod || p.Publish > m.opts.ConfirmThreshold {
		why := fmt.Sprintf("more than %d messages", m.opts.ConfirmThreshold)
		if m.opts.Prod {
			why = "production context"
		}
		warn = append(warn, why+": type the queue name and the count to confirm")
		q.TypeToConfirm = fmt.Sprintf("%s %d", sanitize.Text(m.ref.Name), p.Publish)
	}
	q.Warning = strings.Join(warn, "; ")
	return q
}

func (m *Model) execute() tea.Cmd {
	m.mode = running
	m.op = nextID()
	m.result = ""
	m.progress = progress.New(title(m.plan.Action)+" in progress", m.plan.Publish, m.opts.Now(), m.st)
	m.progress.SetWidth(m.width)
	ctx, stop := context.WithCancel(m.ctx)
	m.stopOp, m.stopping = stop, false
	ch := make(chan ops.Progress, 64)
	return tea.Batch(executeCmd(ctx, m.life, m.deps.Actions, m.plan, m.op, ch), waitProgress(ch, m.op))
}

// stop cancels the running operation: it stops sending, settles what is
// in flight, and its result says what moved and what stayed.
func (m *Model) stop() {
	if m.stopping || m.stopOp == nil {
		return
	}
	m.stopping = true
	m.stopOp()
	m.progress.SetTitle(title(m.plan.Action) + " cancelling… no more messages are sent; settling those in flight")
}

func (m *Model) progressed(msg progressMsg) tea.Cmd {
	if msg.op != m.op || m.mode != running {
		return nil
	}
	p := msg.p
	m.progress.Set(progress.Counts{Total: p.Total, Done: p.Done, Confirmed: p.Confirmed, Returned: p.Returned, Nacked: p.Nacked, Unknown: p.Unknown}, p.At)
	return waitProgress(msg.ch, msg.op)
}

func (m *Model) finished(msg resultMsg) tea.Cmd {
	if msg.op != m.op || m.mode != running {
		return nil
	}
	m.mode = normal
	if m.stopOp != nil {
		m.stopOp() // releases the operation's context
	}
	m.stopOp, m.stopping = nil, false
	r := msg.res
	outcome := ""
	if r.Cancelled {
		outcome = " cancelled"
	}
	m.result = fmt.Sprintf("%s %s%s: %d selected · %d skipped (applied) · %d confirmed · %d returned · %d nacked · %d unknown",
		title(m.plan.Action), r.Operation, outcome, r.Selected, r.SkippedApplied, r.Confirmed, r.Returned, r.Nacked, r.Unknown)
	if r.NotSent > 0 {
		m.result += fmt.Sprintf(" · %d not sent (still in the DLQ)", r.NotSent)
	}
	for _, n := range r.Notes {
		m.result += " · " + n
	}
	var cmds []tea.Cmd
	if m.session != nil {
		cmds = append(cmds, lettersCmd(m.session, m.sid))
	}
	if msg.err != nil {
		m.result += " — failed: " + msg.err.Error()
		cmds = append(cmds, common.ReportError(fmt.Errorf("%s of %s failed: %w; messages without a confirm stay in the DLQ, see the audit log (A)", m.plan.Action, m.ref.Name, msg.err)))
	} else {
		cmds = append(cmds, common.Info(m.result))
	}
	return tea.Batch(cmds...)
}

func title(a ops.Action) string {
	if a == "" {
		return ""
	}
	return strings.ToUpper(string(a[:1])) + string(a[1:])
}

func verb(a ops.Action) string {
	if a == ops.Replay {
		return "replaying"
	}
	return "quarantining"
}

package message

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/components/prompt"
)

// Editor edits and resubmits one dead letter; *ops.Ops implements it.
type Editor interface {
	StartEdit(ctx context.Context, queue domain.QueueRef, held ops.Holder, d domain.DeadLetter) (*ops.EditDraft, error)
	// Plan with Action ops.Edit reads the draft back once the editor
	// exits; Run publishes the confirmed plan.
	Plan(ctx context.Context, s ops.Scope) (*ops.Plan, error)
	Run(ctx context.Context, plan *ops.Plan, progress func(ops.Progress)) (ops.Result, error)
}

// The edit's steps come back as these; each carries its draft, so an
// answer for an edit the screen has given up on is dropped.
type (
	draftMsg struct {
		draft *ops.EditDraft
		err   error
	}
	// EditedMsg says the editor exited (Err is how).
	EditedMsg struct {
		draft *ops.EditDraft
		Err   error
	}
	editPlanMsg struct {
		draft *ops.EditDraft
		plan  *ops.Plan
		err   error
	}
	editResultMsg struct {
		draft *ops.EditDraft
		res   ops.Result
		err   error
	}
)

// edit is the inspector's edit in progress.
type edit struct {
	draft  *ops.EditDraft
	plan   *ops.Plan
	prompt *prompt.Model
	// publishing is closed when the confirmed edit has settled: until
	// then the edited copy may be in flight on the DLQ screen's session,
	// which must stay open, so the screen keeps its keys and Close waits.
	publishing chan struct{}
	// start is shared with the command writing the draft: a screen
	// closed before the draft is written leaves it to the command to
	// remove, since the draft holds the message's body.
	start *draftStart
}

type draftStart struct {
	mu   sync.Mutex
	gone bool
}

// running reports a confirmed edit that has not settled.
func (m *Model) running() bool { return m.edit != nil && m.edit.publishing != nil }

// startEdit writes the draft in a command; the editor runs once it is
// there.
func (m *Model) startEdit() tea.Cmd {
	switch {
	case m.opts.ReadOnly || m.opts.Editor == nil:
		return common.ReportError(errors.New("read-only context: edit is disabled (read_only in the config or --read-only)"))
	case m.msg.Session == nil:
		return common.ReportError(errors.New("no browse session holds this message: open it from the DLQ screen to edit it"))
	case m.edit != nil:
		return nil
	}
	ed, q, s, d := m.opts.Editor, m.msg.Queue, m.msg.Session, m.msg.Letter
	start := &draftStart{}
	m.edit = &edit{start: start}
	return func() tea.Msg {
		draft, err := ed.StartEdit(context.Background(), q, s, d)
		start.mu.Lock()
		defer start.mu.Unlock()
		if start.gone && draft != nil {
			draft.Discard()
			return nil
		}
		return draftMsg{draft: draft, err: err}
	}
}

// updateEdit handles the edit's answers; ok is false for other messages.
func (m *Model) updateEdit(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case draftMsg:
		if m.edit == nil || m.edit.draft != nil {
			if msg.draft != nil {
				msg.draft.Discard()
			}
			return nil, true
		}
		if msg.err != nil {
			m.edit = nil
			return common.ReportError(msg.err), true
		}
		m.edit.draft = msg.draft
		draft := msg.draft
		// The program releases the terminal to the editor and takes it
		// back when the editor exits.
		return m.opts.Exec(draft.Command(), func(err error) tea.Msg { return EditedMsg{draft: draft, Err: err} }), true
	case EditedMsg:
		if !m.current(msg.draft) {
			msg.draft.Discard()
			return nil, true
		}
		ed := m.opts.Editor
		return func() tea.Msg {
			plan, err := ed.Plan(context.Background(), ops.Scope{Action: ops.Edit, Queue: msg.draft.Queue, Draft: msg.draft, EditorErr: msg.Err})
			return editPlanMsg{draft: msg.draft, plan: plan, err: err}
		}, true
	case editPlanMsg:
		if !m.current(msg.draft) {
			return nil, true
		}
		if msg.err != nil {
			m.edit = nil
			return common.ReportError(msg.err), true
		}
		m.edit.plan = msg.plan
		p := prompt.New(m.question(msg.plan), m.st)
		p.SetWidth(m.Width)
		m.edit.prompt = &p
		return nil, true
	case editResultMsg:
		if !m.current(msg.draft) {
			return nil, true
		}
		m.edit = nil
		changed := func() tea.Msg { return common.HeldChangedMsg{Queue: m.msg.Queue} }
		if msg.err != nil {
			return tea.Batch(common.ReportError(msg.err), changed), true
		}
		r := msg.res
		if r.Confirmed != 1 {
			return tea.Batch(common.ReportError(fmt.Errorf("edit %s: %d confirmed, %d returned, %d nacked, %d unknown: the original stays in %s",
				r.Operation, r.Confirmed, r.Returned, r.Nacked, r.Unknown, sanitize.Text(m.msg.Queue.Name))), changed), true
		}
		m.left = fmt.Sprintf("its edited copy was confirmed and it was acked (edit %s)", r.Operation)
		m.render()
		return tea.Batch(common.Info(fmt.Sprintf("edit %s: the edited copy was confirmed and the original left %s%s",
			r.Operation, sanitize.Text(m.msg.Queue.Name), format.AuditHead(r.AuditHead))), changed), true
	}
	return nil, false
}

func (m *Model) current(d *ops.EditDraft) bool { return m.edit != nil && m.edit.draft == d }

// promptKey gives a key to the open prompt. While a confirmed edit
// publishes there is none: keys wait for its outcome.
func (m *Model) promptKey(k tea.KeyMsg) tea.Cmd {
	if m.running() {
		return common.Info("the edited copy is being published: wait for its confirm")
	}
	p, decision, cmd := m.edit.prompt.Update(k)
	m.edit.prompt = &p
	switch decision {
	case prompt.Cancelled:
		m.edit = nil
		return common.Info("not confirmed: nothing was published; the message stays in " + sanitize.Text(m.msg.Queue.Name))
	case prompt.Confirmed:
		m.edit.prompt = nil
		done := make(chan struct{})
		m.edit.publishing = done
		ed, plan, draft := m.opts.Editor, m.edit.plan, m.edit.draft
		return func() tea.Msg {
			defer close(done)
			res, err := ed.Run(context.Background(), plan, nil)
			return editResultMsg{draft: draft, res: res, err: err}
		}
	}
	return cmd
}

// question is the prompt for an edit: the sentence, the destination and
// the diff, under the replay's rules for typing to confirm.
func (m *Model) question(p *ops.Plan) prompt.Question {
	q := prompt.Question{Title: "Edit and resubmit", Text: sanitize.Text(p.Summary)}
	for _, l := range p.Lines {
		q.Details = append(q.Details, "→ "+sanitize.Text(l))
	}
	diff := strings.Split(strings.TrimRight(p.Diff, "\n"), "\n")
	room := max(m.Height-12, 4)
	if len(diff) > room {
		diff = append(diff[:room], fmt.Sprintf("… %d more lines of diff", len(diff)-room))
	}
	for _, l := range diff {
		q.Details = append(q.Details, sanitize.Text(l))
	}
	var warn []string
	for _, w := range p.Warnings {
		warn = append(warn, sanitize.Text(strings.TrimSuffix(w, ops.PaceFlag)))
	}
	if w := p.Confirm.Warning(); w != "" {
		warn = append(warn, w)
	}
	q.Warning, q.TypeToConfirm = strings.Join(warn, "; "), p.Confirm.Phrase
	return q
}

// editView is the prompt while one is open, else the inspector's view.
func (m *Model) editView(view string) string {
	if m.edit != nil && m.edit.prompt != nil {
		return m.edit.prompt.View()
	}
	if m.running() {
		note := m.st.Warn.Render(ansi.Truncate("publishing the edited copy; the original leaves "+sanitize.Text(m.msg.Queue.Name)+" once the broker confirms it…", max(m.Width, 1), "…"))
		lines := strings.Split(view, "\n")
		if m.Height > 0 && len(lines) >= m.Height {
			lines = lines[:max(m.Height-1, 0)]
		}
		return strings.Join(append([]string{note}, lines...), "\n")
	}
	return view
}

// Capturing reports an open prompt, whose keys the root must not take,
// or a confirmed edit still publishing, which no key may leave.
func (m *Model) Capturing() bool { return m.edit != nil && (m.edit.prompt != nil || m.running()) }

// Close waits for a confirmed edit to settle: the DLQ screen below
// closes its session next, and the original must not go back to the
// queue while its edited copy is in flight.
func (m *Model) Close() tea.Cmd {
	if m.edit != nil && m.edit.draft == nil && m.edit.start != nil {
		m.edit.start.mu.Lock()
		m.edit.start.gone = true
		m.edit.start.mu.Unlock()
	}
	if !m.running() {
		return nil
	}
	done := m.edit.publishing
	return func() tea.Msg {
		<-done
		return nil
	}
}

// execProcess runs an editor with the terminal released, and gives it
// the terminal itself: the program reads its keys through a wrapper that
// takes a hangup for SIGHUP (cli's hangupInput), which exec would feed
// the editor through a pipe — the editor warned its input was not a
// terminal, and the pipe's copier held the dashboard until one more key
// came after the editor had exited.
func execProcess(c *exec.Cmd, fn tea.ExecCallback) tea.Cmd {
	if c.Stdin == nil {
		c.Stdin = os.Stdin
	}
	return tea.ExecProcess(c, fn)
}

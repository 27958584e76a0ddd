package auditlog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/components/progress"
	"github.com/warrenops/warren/ui/components/prompt"
	"github.com/warrenops/warren/ui/styles"
)

// resume finishes an operation left incomplete, from the audit screen:
// the plan read in a command, the same prompt as every other operation,
// the run with its progress and its cancel, and what it did. Both the
// list and an opened operation offer it.
type resume struct {
	r      Resumer
	opts   Options
	keys   KeyMap
	st     styles.Styles
	ctx    context.Context
	state  resumeState
	id     int64
	plan   *ops.Plan
	prompt prompt.Model
	// progress is shown while running; stop cancels the run.
	progress progress.Model
	stop     context.CancelFunc
	stopping bool
	width    int
}

type resumeState int

const (
	idle resumeState = iota
	planning
	prompting
	running
)

func newResume(ctx context.Context, opts Options, keys KeyMap) *resume {
	return &resume{r: opts.Resumer, opts: opts, keys: keys, st: opts.Styles, ctx: ctx}
}

// Busy reports whether the resume holds the keys.
func (r *resume) Busy() bool { return r.state != idle }

// Capturing is true while the prompt takes text or a run goes on, so
// neither q nor esc leaves the screen under it.
func (r *resume) Capturing() bool {
	return (r.state == prompting && r.prompt.Capturing()) || r.state == running
}

func (r *resume) setWidth(w int) {
	r.width = w
	r.prompt.SetWidth(w)
	r.progress.SetWidth(w)
}

// Start asks for the plan of resuming s, or says why it cannot.
func (r *resume) Start(s domain.OperationSummary) tea.Cmd {
	switch {
	case r.Busy():
		return nil
	case !s.Incomplete():
		return common.Info(fmt.Sprintf("operation %s finished at %s: there is nothing to resume", sanitize.Text(s.Operation), s.Finished.UTC().Format(time.RFC3339)))
	case r.opts.ReadOnly || r.r == nil:
		return common.ReportError(errors.New("this context is read-only: the audit screen offers no resume (`warren dlq resume` in a context that may write finishes it)"))
	}
	r.id = lastLoad.Add(1)
	r.state = planning
	ref := domain.QueueRef{Vhost: s.Vhost, Name: s.Queue}
	return planResumeCmd(r.ctx, r.r, ref, s.Operation, r.id)
}

// Update handles the keys while the resume holds them, and its messages.
func (r *resume) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		return r.key(msg)
	case resumePlanMsg:
		return r.planned(msg)
	case resumeProgressMsg:
		if msg.id != r.id || r.state != running {
			return nil
		}
		p := msg.p
		if p.Total == 0 {
			// A resume counts against the DLQ's depth, which it does
			// not report; the plan read it.
			p.Total = r.plan.Depth
		}
		r.progress.Set(progress.Counts{Total: p.Total, Done: p.Done, Confirmed: p.Confirmed, Returned: p.Returned, Nacked: p.Nacked, Unknown: p.Unknown}, p.At)
		return waitResumeProgress(msg.ch, msg.id)
	case resumeResultMsg:
		return r.finished(msg)
	}
	return nil
}

func (r *resume) key(k tea.KeyMsg) tea.Cmd {
	switch r.state {
	case prompting:
		var d prompt.Decision
		var cmd tea.Cmd
		r.prompt, d, cmd = r.prompt.Update(k)
		switch d {
		case prompt.Cancelled:
			r.state, r.plan = idle, nil
			return common.Info("resume cancelled: nothing was changed")
		case prompt.Confirmed:
			return r.run()
		}
		return cmd
	case planning:
		if key.Matches(k, r.keys.Cancel) {
			// The plan holds nothing: dropping its answer is enough.
			r.state, r.id = idle, lastLoad.Add(1)
			return common.Info("resume cancelled: nothing was changed")
		}
		return common.ReportError(errors.New("reading what the resume would do; wait for the prompt or press esc"))
	case running:
		if key.Matches(k, r.keys.Stop) {
			r.cancel()
			return nil
		}
		return common.ReportError(fmt.Errorf("the resume of %s is running; wait for its result or press x to cancel it", r.plan.Operation))
	}
	return nil
}

func (r *resume) planned(msg resumePlanMsg) tea.Cmd {
	if msg.id != r.id || r.state != planning {
		return nil
	}
	if msg.err != nil {
		r.state = idle
		return common.ReportError(fmt.Errorf("cannot resume: %s", sanitize.Text(msg.err.Error())))
	}
	r.plan = msg.plan
	p := msg.plan
	q := prompt.Question{Title: "Resume", Text: sanitize.Text(p.Summary)}
	q.Details = append(q.Details,
		fmt.Sprintf("DLQ: %s in vhost %s, as it holds now", sanitize.Text(p.Queue.Name), sanitize.Text(p.Queue.Vhost)),
		fmt.Sprintf("twins of recorded confirms: up to %d · recorded as going out, no confirm recorded (published, or never sent): %d", p.Twins, p.Unconfirmed))
	for _, d := range p.Destinations {
		q.Details = append(q.Details, fmt.Sprintf("  → %s: %s", sanitize.Text(d.Name), format.Messages(d.Count)))
	}
	q.Warning, q.TypeToConfirm = p.Confirm.Warning(), p.Confirm.Phrase
	r.prompt = prompt.New(q, r.st)
	r.prompt.SetWidth(r.width)
	r.state = prompting
	return nil
}

func (r *resume) run() tea.Cmd {
	r.state = running
	r.id = lastLoad.Add(1)
	r.progress = progress.New("Resume of "+sanitize.Text(r.plan.Operation)+" in progress", r.plan.Depth, r.opts.Now(), r.st)
	r.progress.SetWidth(r.width)
	ctx, stop := context.WithCancel(r.ctx)
	r.stop, r.stopping = stop, false
	ch := make(chan ops.Progress, 64)
	return tea.Batch(resumeCmd(ctx, r.r, r.plan, r.id, ch), waitResumeProgress(ch, r.id))
}

// cancel stops publishing; what is in flight settles and the result says
// what moved and what stayed.
func (r *resume) cancel() {
	if r.stopping || r.stop == nil {
		return
	}
	r.stopping = true
	r.stop()
	r.progress.SetTitle("Resume cancelling… no more messages are sent; settling those in flight")
}

func (r *resume) finished(msg resumeResultMsg) tea.Cmd {
	if msg.id != r.id || r.state != running {
		return nil
	}
	r.state = idle
	if r.stop != nil {
		r.stop()
	}
	r.stop, r.stopping = nil, false
	id, queue := r.plan.Operation, r.plan.Queue.Name
	r.plan = nil
	reload := func() tea.Msg { return resumedMsg{operation: id} }
	text := sanitize.Text(format.Outcome(string(ops.Resume), queue, msg.res.Counts))
	text += format.AuditHead(msg.res.AuditHead)
	for _, n := range msg.res.Notes {
		text += " · " + sanitize.Text(n)
	}
	if msg.err != nil {
		return tea.Batch(reload, common.ReportError(fmt.Errorf("the resume of %s failed: %s; %s", id, sanitize.Text(msg.err.Error()), text)))
	}
	return tea.Batch(reload, common.Info(text))
}

// View draws the prompt or the progress; nothing while idle or planning.
func (r *resume) View() string {
	switch r.state {
	case prompting:
		return r.prompt.View()
	case running:
		return r.progress.View()
	case planning:
		return r.st.Muted.Render("reading what the resume would do… (esc cancels)")
	}
	return ""
}

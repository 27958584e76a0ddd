// Package auditlog is the audit screen: recent operations with their
// outcomes, whether the hash chain is intact, one operation opened with
// each of its messages, and the resume of an operation left incomplete.
package auditlog

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/components/list"
	"github.com/warrenops/warren/ui/components/table"
	"github.com/warrenops/warren/ui/styles"
)

// DefaultLimit is how many recent operations the screen shows.
const DefaultLimit = 200

// Options are the screen's settings.
type Options struct {
	Limit  int
	Now    func() time.Time
	Styles styles.Styles
	// Resumer finishes incomplete operations; nil (and ReadOnly) in a
	// read-only context, where R only says why it does nothing.
	Resumer  Resumer
	ReadOnly bool
}

func (o Options) withDefaults() Options {
	if o.Limit <= 0 {
		o.Limit = DefaultLimit
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Model is the audit screen.
type Model struct {
	r      Reader
	opts   Options
	st     styles.Styles
	keys   KeyMap
	ctx    context.Context
	cancel context.CancelFunc
	common.Frame

	load     int64
	loading  bool
	ops      []domain.OperationSummary // newest first
	opsErr   error
	verified bool
	chain    ops.Chain
	chainErr error
	resume   *resume
	// list's rows are ops; its height depends on the detail of the row
	// under the cursor, so it is set again after every move.
	list list.Model[int]
}

// New returns the audit screen reading r.
func New(r Reader, opts Options) *Model {
	opts = opts.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	k := DefaultKeyMap()
	l := list.New[int](k.Nav, nil)
	l.SetOverlap(1)
	return &Model{r: r, opts: opts, st: opts.Styles, keys: k, ctx: ctx, cancel: cancel, list: l, resume: newResume(ctx, opts, k)}
}

// Init loads the operations and verifies the chain.
func (m *Model) Init() tea.Cmd { return m.reload() }

func (m *Model) reload() tea.Cmd {
	m.load = lastLoad.Add(1)
	m.loading, m.verified = true, false
	return tea.Batch(operationsCmd(m.ctx, m.r, m.opts.Limit, m.load), verifyCmd(m.ctx, m.r, m.load))
}

// Close stops a load or a resume in flight.
func (m *Model) Close() tea.Cmd {
	m.load = 0
	m.cancel()
	return nil
}

// Title names the screen in the breadcrumb.
func (m *Model) Title() string { return "audit log" }

// Keys returns the bindings for the help view.
func (m *Model) Keys() help.KeyMap {
	switch m.resume.state {
	case running:
		return busyKeys{stop: m.keys.Stop}
	case prompting:
		return m.resume.prompt.Keys()
	}
	return m.keys
}

// Capturing is true while a resume's prompt takes text or its run goes
// on.
func (m *Model) Capturing() bool { return m.resume.Capturing() }

// SetSize sets the space the screen may draw in.
func (m *Model) SetSize(w, h int) {
	m.Resize(w, h)
	m.resume.setWidth(w)
	m.fit()
}

// Update handles one message.
func (m *Model) Update(msg tea.Msg) (common.Screen, tea.Cmd) {
	switch msg := msg.(type) {
	case operationsMsg:
		if msg.load != m.load {
			return m, nil
		}
		m.loading = false
		m.opsErr = msg.err
		if msg.err != nil {
			return m, common.ReportError(fmt.Errorf("reading the audit log (%s) failed: %w", m.r.Describe(), msg.err))
		}
		m.ops = m.ops[:0]
		for i := len(msg.ops) - 1; i >= 0; i-- {
			m.ops = append(m.ops, msg.ops[i])
		}
		m.list.SetLen(len(m.ops))
		m.fit()
	case verifiedMsg:
		if msg.load != m.load {
			return m, nil
		}
		m.verified, m.chain, m.chainErr = true, msg.chain, msg.err
		m.fit()
	case resumedMsg:
		return m, m.reload()
	case resumePlanMsg, resumeProgressMsg, resumeResultMsg:
		cmd := m.resume.Update(msg)
		m.fit()
		return m, cmd
	case tea.KeyMsg:
		return m, m.keyCmd(msg)
	}
	return m, nil
}

func (m *Model) keyCmd(k tea.KeyMsg) tea.Cmd {
	if m.resume.Busy() {
		cmd := m.resume.Update(k)
		m.fit()
		return cmd
	}
	c := m.list.Cursor()
	switch {
	case key.Matches(k, m.keys.Reload):
		return m.reload()
	case key.Matches(k, m.keys.Open) && c >= 0:
		d := NewDetail(m.r, m.ops[c], m.opts)
		return func() tea.Msg { return common.PushMsg{Screen: d} }
	case key.Matches(k, m.keys.Resume) && c >= 0:
		cmd := m.resume.Start(m.ops[c])
		m.fit()
		return cmd
	}
	m.key(k)
	return nil
}

// key moves the cursor a page of the height around the row it leaves,
// then scrolls by the height around the row it lands on.
func (m *Model) key(k tea.KeyMsg) {
	m.list.SetHeight(m.rows())
	m.list.Move(k)
	m.fit()
}

// rows is how many operations fit between the title, chain state and
// table header above and the detail of the current operation (or a
// resume's prompt or progress) below.
func (m *Model) rows() int {
	return max(m.Height-lipgloss.Height(m.top())-lipgloss.Height(m.below())-3, 1)
}

// below is what the screen draws under the table.
func (m *Model) below() string {
	if v := m.resume.View(); v != "" {
		return v
	}
	return m.detail()
}

func (m *Model) fit() {
	m.list.SetHeight(m.rows())
	m.list.Reveal()
}

// View draws the screen.
func (m *Model) View() string {
	lines := []string{m.top(), ""}
	lines = append(lines, m.table()...)
	lines = append(lines, "", m.below())
	return strings.Join(lines, "\n")
}

func (m *Model) top() string {
	return m.wrap(m.st.Title.Render("Audit log") + "  " + m.st.Muted.Render(sanitize.Text(m.r.Describe())) + "\n" + m.chainLine())
}

// wrap keeps long lines inside the screen.
func (m *Model) wrap(s string) string {
	if m.Width <= 0 {
		return s
	}
	return ansi.Wrap(s, m.Width, "")
}

func (m *Model) chainLine() string {
	switch {
	case !m.verified:
		return m.st.Muted.Render("verifying the chain…")
	case m.chainErr != nil:
		return m.st.Trouble.Render("chain not verified: " + sanitize.Text(m.chainErr.Error()))
	case !m.chain.OK:
		return m.st.Trouble.Render(fmt.Sprintf("chain BROKEN at seq %d: %s", m.chain.BrokenSeq, sanitize.Text(m.chain.Reason))) +
			m.st.Warn.Render(fmt.Sprintf(" — records up to seq %d are intact; do not trust anything after. Keep the log as evidence, compare it with your last `warren audit export`, and move a file store aside to start a new chain", m.chain.LastSeq))
	}
	return m.st.OK.Render(fmt.Sprintf("chain verified: %s, %s, last seq %d", format.Plural(m.chain.Records, "record"), format.Plural(m.chain.Operations, "operation"), m.chain.LastSeq))
}

// header: the state follows the action, so that a narrow terminal, which
// cuts the row's end, keeps whether the operation finished.
var header = []string{"STARTED (UTC)", "ACTION", "STATE", "QUEUE", "TARGET", "OPERATOR", "SEL", "CONF", "RET", "NACK", "UNK", "SKIP"}

func (m *Model) table() []string {
	widths := m.widths()
	out := []string{m.st.TableHeader.Render("  " + ansi.Truncate(row(widths, header), max(m.Width-2, 20), "…"))}
	switch {
	case m.loading && len(m.ops) == 0:
		return append(out, m.st.Muted.Render("loading…"))
	case m.opsErr != nil:
		return append(out, m.st.Trouble.Render("could not read the log: "+sanitize.Text(m.opsErr.Error())))
	case len(m.ops) == 0:
		return append(out, m.st.Muted.Render("no operations recorded yet"))
	}
	// The chain line may have changed the height since the last move.
	shown := m.list
	shown.SetHeight(m.rows())
	return append(out, shown.View(func(i int) string {
		o := m.ops[i]
		c := o.Counts
		state := o.State()
		line := row(widths, []string{
			o.Started.UTC().Format("2006-01-02 15:04:05"), sanitize.Text(o.Action), state,
			sanitize.Text(o.Queue), sanitize.Text(o.Target), sanitize.Text(o.Operator),
			count(o.Selected), count(c[domain.OutcomeConfirmed]), count(c[domain.OutcomeReturned]),
			count(c[domain.OutcomeNacked]), count(c[domain.OutcomeUnknown]), count(c[domain.OutcomeSkippedApplied]),
		})
		line = ansi.Truncate(line, max(m.Width-2, 20), "…")
		switch {
		case i == m.list.Cursor():
			return m.st.TableSelected.Render("> " + line)
		case o.Incomplete() || o.Failed != "" || c[domain.OutcomeUnknown] > 0 || c[domain.OutcomeNacked] > 0:
			return m.st.Warn.Render("  " + line)
		}
		return m.st.TableRow.Render("  " + line)
	}))
}

func (m *Model) detail() string {
	c := m.list.Cursor()
	if c < 0 {
		return ""
	}
	return m.wrap(m.describe(m.ops[c]))
}

func (m *Model) describe(o domain.OperationSummary) string {
	s := fmt.Sprintf("operation %s · vhost %s · seq %d–%d\nstarted %s",
		sanitize.Text(o.Operation), sanitize.Text(o.Vhost), o.FirstSeq, o.LastSeq, format.Ago(m.opts.Now().Sub(o.Started)))
	if o.Halted != "" {
		return m.st.Muted.Render(s) + "\n" + m.st.Trouble.Render("halted "+sanitize.Text(o.Halted)+": the rest stayed in the DLQ; R resumes it with a fresh canary, enter opens it")
	}
	if o.Incomplete() {
		return m.st.Muted.Render(s) + "\n" + m.st.Warn.Render("no final record: still running, or interrupted — unconfirmed messages stayed in the DLQ; those listed unknown may exist twice. R resumes it, enter opens it")
	}
	return m.st.Muted.Render(s + " · finished " + format.Time(*o.Finished) + " · enter opens it")
}

func count(n int) string { return format.Count(int64(n)) }

// widths are the list's columns. Counts are exact up to 999 999
// (format.Count), so an operation on a whole large DLQ fits its columns.
// On a narrow terminal the queue, target and operator give up room, down
// to a few letters each, before anything is cut; the STATE, beside the
// action, stays on screen whatever is cut.
func (m *Model) widths() []int {
	widths := []int{19, 10, 10, 16, 14, 8, 6, 6, 4, 4, 4, 5}
	if m.Width <= 0 {
		return widths
	}
	need := 2 + len(widths) - 1
	for _, w := range widths {
		need += w
	}
	for _, c := range []struct{ i, least int }{{3, 8}, {4, 6}, {5, 5}} {
		if over := need - m.Width; over > 0 {
			cut := min(over, widths[c.i]-c.least)
			widths[c.i] -= cut
			need -= cut
		}
	}
	// A wide terminal gives its room to the target, then the queue, as
	// far as the longest of those listed needs: two quarantines and a
	// replay into orders.status must not all read queue:orders.…
	for _, c := range []struct{ i, most int }{{4, m.longest(func(o domain.OperationSummary) string { return o.Target }, 48)},
		{3, m.longest(func(o domain.OperationSummary) string { return o.Queue }, 40)}} {
		if spare := m.Width - need; spare > 0 && c.most > widths[c.i] {
			grow := min(spare, c.most-widths[c.i])
			widths[c.i] += grow
			need += grow
		}
	}
	return widths
}

// longest is the widest of the listed operations' field, at most most.
func (m *Model) longest(field func(domain.OperationSummary) string, most int) int {
	n := 0
	for _, o := range m.ops {
		n = max(n, ansi.StringWidth(sanitize.Text(field(o))))
	}
	return min(n, most)
}

func row(widths []int, cells []string) string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = table.Fit(c, widths[i], table.Left)
	}
	return strings.TrimRight(strings.Join(out, " "), " ")
}

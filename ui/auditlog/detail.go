package auditlog

import (
	"context"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/components/list"
	"github.com/warrenops/warren/ui/styles"
)

// Detail is one operation opened from the audit screen: who ran it, when,
// in which context, the rule it followed, where the messages went, how
// many ended how, and each message with its logical ID, message ID and
// outcome. The messages are read in a command and only the rows on
// screen are drawn, so an operation of 100 000 messages opens and
// scrolls as one of ten does.
type Detail struct {
	r    Reader
	opts Options
	st   styles.Styles
	keys KeyMap
	ctx  context.Context
	stop context.CancelFunc
	common.Frame

	sum     domain.OperationSummary // as the list showed it, until read
	load    int64
	loading bool
	err     error
	d       *ops.OperationDetail
	search  []string
	visible []int // indexes into d.Messages that the filter lets through
	list    list.Model[int]
	filter  textinput.Model
	typing  bool
	resume  *resume
}

// NewDetail returns the screen of operation s.
func NewDetail(r Reader, s domain.OperationSummary, opts Options) *Detail {
	opts = opts.withDefaults()
	ctx, stop := context.WithCancel(context.Background())
	k := DefaultKeyMap()
	in := textinput.New()
	in.Prompt = "/"
	in.Placeholder = "logical ID, message ID or outcome"
	in.CharLimit = 200
	in.Cursor.SetMode(cursor.CursorStatic)
	l := list.New[int](k.Nav, nil)
	l.SetOverlap(1)
	return &Detail{r: r, opts: opts, st: opts.Styles, keys: k, ctx: ctx, stop: stop, sum: s,
		list: l, filter: in, resume: newResume(ctx, opts, k)}
}

// Init reads the operation's records.
func (m *Detail) Init() tea.Cmd { return m.read() }

func (m *Detail) read() tea.Cmd {
	m.load = lastLoad.Add(1)
	m.loading = true
	return detailCmd(m.ctx, m.r, m.sum.Operation, m.load)
}

// Close stops a reading or a resume in flight.
func (m *Detail) Close() tea.Cmd {
	m.load = 0
	m.stop()
	return nil
}

// Title names the screen in the breadcrumb.
func (m *Detail) Title() string { return "operation " + sanitize.Text(m.sum.Operation) }

// Keys returns the bindings for the help view.
func (m *Detail) Keys() help.KeyMap {
	switch {
	case m.resume.state == running:
		return busyKeys{stop: m.keys.Stop}
	case m.resume.state == prompting:
		return m.resume.prompt.Keys()
	case m.typing:
		return filterKeys{apply: m.keys.Apply, clear: m.keys.Clear}
	}
	return detailKeys{m.keys}
}

// Capturing is true while the filter is typed, and while a resume's
// prompt takes text or its run goes on.
func (m *Detail) Capturing() bool { return m.typing || m.resume.Capturing() }

// SetSize sets the space the screen may draw in.
func (m *Detail) SetSize(w, h int) {
	m.Resize(w, h)
	m.filter.Width = max(w-20, 10)
	m.resume.setWidth(w)
	m.fit()
}

// summary is the operation as last read, or as the list showed it.
func (m *Detail) summary() domain.OperationSummary {
	if m.d != nil {
		return m.d.OperationSummary
	}
	return m.sum
}

// Update handles one message.
func (m *Detail) Update(msg tea.Msg) (common.Screen, tea.Cmd) {
	switch msg := msg.(type) {
	case detailMsg:
		if msg.load != m.load {
			return m, nil
		}
		m.loading, m.err = false, msg.err
		if msg.err != nil {
			return m, common.ReportError(fmt.Errorf("reading operation %s from the audit log (%s) failed: %s",
				sanitize.Text(m.sum.Operation), sanitize.Text(m.r.Describe()), sanitize.Text(msg.err.Error())))
		}
		m.d, m.search = msg.d, msg.search
		m.refilter()
	case resumedMsg:
		if msg.operation == m.sum.Operation {
			return m, m.read()
		}
	case resumePlanMsg, resumeProgressMsg, resumeResultMsg:
		cmd := m.resume.Update(msg)
		m.fit()
		return m, cmd
	case tea.KeyMsg:
		return m, m.key(msg)
	}
	return m, nil
}

func (m *Detail) key(k tea.KeyMsg) tea.Cmd {
	if m.resume.Busy() {
		cmd := m.resume.Update(k)
		m.fit()
		return cmd
	}
	if m.typing {
		return m.filterKey(k)
	}
	switch {
	case key.Matches(k, m.keys.Filter):
		m.typing = true
		m.fit()
		return m.filter.Focus()
	case key.Matches(k, m.keys.Resume):
		cmd := m.resume.Start(m.summary())
		m.fit()
		return cmd
	}
	m.list.SetHeight(m.rows())
	if m.list.Move(k) {
		m.list.Reveal()
	}
	return nil
}

// filterKey edits the filter: the rows follow every change; enter keeps
// it, esc clears it.
func (m *Detail) filterKey(k tea.KeyMsg) tea.Cmd {
	switch {
	case key.Matches(k, m.keys.Apply):
		m.typing = false
		m.filter.Blur()
		m.fit()
		return nil
	case key.Matches(k, m.keys.Clear):
		m.typing = false
		m.filter.Blur()
		m.filter.SetValue("")
		m.refilter()
		return nil
	}
	before := m.filter.Value()
	var cmd tea.Cmd
	m.filter, cmd = m.filter.Update(k)
	if m.filter.Value() != before {
		m.refilter()
	}
	return cmd
}

// refilter recomputes the rows the filter lets through, case-blind.
func (m *Detail) refilter() {
	q := strings.ToLower(strings.TrimSpace(m.filter.Value()))
	m.visible = m.visible[:0]
	for i, s := range m.search {
		if q == "" || strings.Contains(s, q) {
			m.visible = append(m.visible, i)
		}
	}
	m.list.SetLen(len(m.visible))
	m.fit()
}

func (m *Detail) fit() {
	m.list.SetHeight(m.rows())
	m.list.Reveal()
}

// rows is how many messages fit under the operation's facts and above a
// prompt or progress.
func (m *Detail) rows() int {
	used := lipgloss.Height(m.head()) + 3 // blank, filter line, table header
	if v := m.resume.View(); v != "" {
		used += lipgloss.Height(v) + 1
	}
	return max(m.Height-used, 1)
}

// View draws the screen.
func (m *Detail) View() string {
	lines := []string{m.head(), "", m.filterLine()}
	lines = append(lines, m.table()...)
	if v := m.resume.View(); v != "" {
		lines = append(lines, "", v)
	}
	return strings.Join(lines, "\n")
}

// wrap fits s to the screen without breaking a word: a time broken at
// its hyphen (2026-12-/08T…) or a queue name read as two.
func (m *Detail) wrap(s string) string {
	if m.Width <= 0 {
		return s
	}
	return common.Wrap(s, m.Width)
}

// head is the operation's facts, one line each.
func (m *Detail) head() string {
	s := m.summary()
	state := m.st.OK.Render(s.State())
	if s.State() != "done" {
		state = m.st.Warn.Render(s.State())
	}
	title := m.st.Title.Render("Operation "+sanitize.Text(s.Operation)) + "  " + sanitize.Text(s.Action) + " · " + state
	label := func(l string) string { return m.st.Muted.Render(fmt.Sprintf("%-9s", l)) }
	when := "started " + format.Time(s.Started) + " (" + format.Ago(m.opts.Now().Sub(s.Started)) + ")"
	if !s.Incomplete() {
		when += " · finished " + format.Time(*s.Finished) + " after " + format.Duration(s.Finished.Sub(s.Started))
	}
	lines := []string{title}
	who := sanitize.Text(s.Operator)
	if m.d != nil {
		if m.d.Host != "" {
			who += " on " + sanitize.Text(m.d.Host)
		}
		who += " · context " + orUnknown(sanitize.Text(m.d.Context))
	}
	lines = append(lines,
		label("who")+who,
		label("when")+when,
		label("from")+sanitize.Text(s.Queue)+" in vhost "+sanitize.Text(s.Vhost)+" · target "+orUnknown(sanitize.Text(s.Target)))
	if m.d != nil {
		lines = append(lines, label("rule")+m.rule(), label("to")+m.destinations())
	}
	lines = append(lines, label("outcomes")+m.outcomes(s))
	for i, v := range s.Stages {
		l := ""
		if i == 0 {
			l = "stages"
		}
		lines = append(lines, label(l)+sanitize.Text(v.Line()))
	}
	if s.Halted != "" {
		lines = append(lines, m.st.Trouble.Render("halted "+sanitize.Text(s.Halted)+": nothing was rolled back, the rest stayed in the DLQ — R resumes it as `warren dlq resume` does, with a fresh canary"))
	} else if s.Incomplete() {
		lines = append(lines, m.st.Warn.Render("no final record: interrupted, or still running — R resumes it as `warren dlq resume` does"))
	} else if m.d != nil && m.d.Final["cancelled"] == "true" {
		lines = append(lines, m.st.Warn.Render("cancelled by the operator: what was not moved stayed in the DLQ"))
	} else if m.d != nil && m.d.Final["error"] != "" {
		lines = append(lines, m.st.Trouble.Render("ended with an error: "+sanitize.Text(m.d.Final["error"])))
	}
	return m.wrap(strings.Join(lines, "\n"))
}

func orUnknown(s string) string {
	if s == "" {
		return format.Unknown
	}
	return s
}

// rule is what the intent record states the operation would do.
func (m *Detail) rule() string {
	d := m.d
	parts := []string{fmt.Sprintf("selected %d", d.Selected)}
	if d.Bytes > 0 {
		parts = append(parts, format.Bytes(d.Bytes))
	}
	f := "no filter"
	if d.Filter != "" {
		f = "filter " + sanitize.Text(d.Filter)
	}
	parts = append([]string{f}, parts...)
	if d.Reason != "" {
		parts = append(parts, "reason "+sanitize.Text(d.Reason))
	}
	if d.Rate != "" {
		parts = append(parts, "rate "+sanitize.Text(d.Rate)+" msg/s")
	}
	if d.Walk {
		parts = append(parts, "walked the whole queue")
	}
	if d.Resumes > 0 {
		parts = append(parts, fmt.Sprintf("resumed %d×", d.Resumes))
	}
	return strings.Join(parts, " · ")
}

func (m *Detail) destinations() string {
	if m.d.Action == ops.ActionExport {
		return "file " + orUnknown(sanitize.Text(m.d.Target)) + " · sha256 " + orUnknown(sanitize.Text(m.d.FileSHA256))
	}
	if len(m.d.Destinations) == 0 {
		if m.d.Parking != "" {
			return "queue " + sanitize.Text(m.d.Parking)
		}
		return format.Unknown + " (decided per message as it walked the queue)"
	}
	out := make([]string, len(m.d.Destinations))
	for i, d := range m.d.Destinations {
		out[i] = sanitize.Text(d)
	}
	return strings.Join(out, ", ")
}

func (m *Detail) outcomes(s domain.OperationSummary) string {
	var parts []string
	for _, o := range append(domain.MessageOutcomes, domain.OutcomeExported) {
		if n := s.Counts[o]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", o, n))
		}
	}
	if m.d != nil {
		waiting := map[string]int{}
		for _, e := range m.d.Messages {
			if e.Outcome == domain.OutcomePublishing || e.Outcome == domain.OutcomeIntent {
				waiting[e.Outcome]++
			}
		}
		for _, o := range []string{domain.OutcomePublishing, domain.OutcomeIntent} {
			if n := waiting[o]; n > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", outcomeWords(o), n))
			}
		}
	}
	if len(parts) == 0 {
		return "none recorded"
	}
	return strings.Join(parts, " · ")
}

// outcomeWords says what a message's last record means.
func outcomeWords(o string) string {
	switch o {
	case domain.OutcomePublishing:
		return "published, no confirm"
	case domain.OutcomeIntent:
		return "selected, no outcome"
	}
	return sanitize.Text(o)
}

func (m *Detail) filterLine() string {
	if m.typing {
		return m.filter.View()
	}
	switch {
	case m.loading && m.d == nil:
		return m.st.Muted.Render("reading the operation's records…")
	case m.err != nil:
		return m.st.Trouble.Render("could not read the operation: " + sanitize.Text(m.err.Error()))
	case m.d == nil:
		return ""
	}
	n, shown := len(m.d.Messages), len(m.visible)
	s := format.Messages(n)
	if f := m.filter.Value(); f != "" {
		s = fmt.Sprintf("%d of %s match %q", shown, format.Messages(n), sanitize.Text(f))
	}
	if start, end := m.list.Window(); end > start {
		s += fmt.Sprintf(" · rows %d–%d", start+1, end)
	}
	return m.st.Muted.Render(s + " · / filters")
}

var detailHeader = []string{"LOGICAL ID", "MESSAGE ID", "OUTCOME", "SEQ"}

func (m *Detail) table() []string {
	if m.d == nil {
		return nil
	}
	widths := m.widths()
	out := []string{m.st.TableHeader.Render("  " + row(widths, detailHeader))}
	if len(m.visible) == 0 {
		switch {
		case len(m.d.Messages) == 0 && m.d.Action == ops.ActionExport:
			return append(out, m.st.Muted.Render(m.wrap("an export names its messages in its file, which the sha256 above identifies; it took none from the queue")))
		case len(m.d.Messages) == 0:
			return append(out, m.st.Muted.Render("the records name no message"))
		}
		return append(out, m.st.Muted.Render("no message matches the filter"))
	}
	shown := m.list
	shown.SetHeight(m.rows())
	return append(out, shown.View(func(i int) string {
		e := m.d.Messages[m.visible[i]]
		line := row(widths, []string{sanitize.Text(e.LogicalID), sanitize.Text(e.MessageID), outcomeWords(e.Outcome), fmt.Sprint(e.Seq)})
		switch {
		case i == m.list.Cursor():
			return m.st.TableSelected.Render("> " + line)
		case e.Outcome != domain.OutcomeConfirmed && e.Outcome != domain.OutcomeSkippedApplied && e.Outcome != domain.OutcomeDeduplicated:
			return m.st.Warn.Render("  " + line)
		}
		return m.st.TableRow.Render("  " + line)
	}))
}

// widths share the screen between the two IDs; the outcome and the seq
// keep theirs.
func (m *Detail) widths() []int {
	ids := max((m.Width-2-22-8-3)/2, 12)
	return []int{ids, ids, 22, 8}
}

// searchTexts are the lower-cased words the filter looks in, one per
// message.
func searchTexts(msgs []ops.MessageEntry) []string {
	out := make([]string, len(msgs))
	for i, e := range msgs {
		out[i] = strings.ToLower(e.LogicalID + "\x00" + e.MessageID + "\x00" + outcomeWords(e.Outcome))
	}
	return out
}

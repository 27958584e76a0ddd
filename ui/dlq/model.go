// Package dlq is the dead-letter queue screen: the held messages with why
// they died and whether their effect was already applied, histograms of
// attempts, reasons and origins, a filter, multi-select, and the replay
// and quarantine actions behind the confirmation prompt.
package dlq

import (
	"context"
	"fmt"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/sources/dlq"
	"github.com/warrenops/warren/sources/mgmt"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/components/progress"
	"github.com/warrenops/warren/ui/components/prompt"
	"github.com/warrenops/warren/ui/styles"
)

// Options are the context's settings the screen obeys.
type Options struct {
	ReadOnly bool
	Prod     bool
	// ConfirmThreshold is the number of messages above which an action
	// needs the queue name and count typed; 0 means the config default.
	ConfirmThreshold int
	// Now is the clock; views read time only through it.
	Now    func() time.Time
	Styles styles.Styles
}

type sessionState int

const (
	opening sessionState = iota
	browsing
	refused
	failed
	died
)

type mode int

const (
	normal mode = iota
	filtering
	prompting
	planning
	running
)

type promptKind int

const (
	askReason promptKind = iota
	confirmPlan
	confirmOverride
)

// inboxStatus is one logical ID's inbox state; an empty state means the
// lookup has not answered yet.
type inboxStatus struct {
	state  string // applied | pending | unknown
	at     time.Time
	detail string
}

// Model is the DLQ screen.
type Model struct {
	ref  mgmt.QueueRef
	deps Deps
	opts Options
	st   styles.Styles
	keys KeyMap

	ctx    context.Context
	cancel context.CancelFunc
	width  int
	height int

	sid       int64
	session   Session
	state     sessionState
	stateErr  error
	refusal   *RefusedError
	allowRisk bool
	loading   bool
	end       bool
	notes     []string
	letters   []dlq.DeadLetter
	inbox     map[string]inboxStatus
	inboxNote string

	mode      mode
	cursor    int
	offset    int
	selected  map[int]bool // by Position
	filter    Filter
	filterSrc string
	filterErr error
	visible   []int // indexes into letters
	input     textinput.Model

	op         int64
	prompt     prompt.Model
	promptKind promptKind
	reason     string
	planAction Action
	plan       Plan
	progress   progress.Model
	result     string
}

// New returns the screen for the DLQ ref; Init opens the browse session.
func New(ref mgmt.QueueRef, deps Deps, opts Options) *Model {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.ConfirmThreshold <= 0 {
		opts.ConfirmThreshold = config.DefaultConfirmThreshold
	}
	in := textinput.New()
	in.Prompt = "/"
	in.Placeholder = `reason == "rejected" && attempts >= 3`
	in.Cursor.SetMode(cursor.CursorStatic)
	ctx, cancel := context.WithCancel(context.Background())
	return &Model{
		ref: ref, deps: deps, opts: opts, st: opts.Styles,
		keys: DefaultKeyMap(opts.ReadOnly),
		ctx:  ctx, cancel: cancel,
		inbox: map[string]inboxStatus{}, selected: map[int]bool{},
		input: in,
	}
}

// Init opens the browse session.
func (m *Model) Init() tea.Cmd { return m.open(false) }

func (m *Model) open(allowRisk bool) tea.Cmd {
	var cmds []tea.Cmd
	if m.session != nil {
		cmds = append(cmds, closeCmd(m.session))
	}
	m.sid = nextID()
	m.session, m.state, m.stateErr, m.refusal = nil, opening, nil, nil
	m.allowRisk = allowRisk
	m.loading, m.end, m.notes = false, false, nil
	m.letters, m.selected = nil, map[int]bool{}
	m.inbox, m.inboxNote = map[string]inboxStatus{}, ""
	m.cursor, m.offset, m.result = 0, 0, ""
	m.refresh()
	return tea.Batch(append(cmds, openCmd(m.ctx, m.deps.Browser, m.ref, allowRisk, m.sid))...)
}

// Close releases the browse session; the held messages return to the DLQ.
func (m *Model) Close() tea.Cmd {
	m.sid = 0
	m.cancel()
	s := m.session
	m.session = nil
	if s == nil {
		return nil
	}
	return closeCmd(s)
}

// Title names the screen; the root sanitises it.
func (m *Model) Title() string { return "DLQ " + m.ref.Name }

// Keys returns the bindings that apply now.
func (m *Model) Keys() help.KeyMap {
	switch m.mode {
	case filtering:
		return filterKeys{Apply: m.keys.Apply, Cancel: m.keys.Cancel}
	case prompting:
		return m.prompt.Keys()
	}
	return m.keys
}

// Capturing is true while a filter or prompt takes keys, and while an
// operation runs, so esc cannot pop the screen from under it.
func (m *Model) Capturing() bool { return m.mode != normal }

// SetSize sets the space the screen may draw in.
func (m *Model) SetSize(w, h int) {
	m.width, m.height = w, h
	m.input.Width = max(w-4, 10)
	m.prompt.SetWidth(w)
	m.progress.SetWidth(w)
	m.clampCursor()
}

// Update handles one message.
func (m *Model) Update(msg tea.Msg) (common.Screen, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		return m, m.key(msg)
	case openedMsg:
		return m, m.opened(msg)
	case pageMsg:
		return m, m.paged(msg)
	case inboxMsg:
		m.inboxAnswered(msg)
	case sessionDoneMsg:
		return m, m.sessionDone(msg)
	case lettersMsg:
		if msg.sid == m.sid {
			m.letters, m.selected = msg.letters, map[int]bool{}
			m.refresh()
		}
	case planMsg:
		return m, m.planned(msg)
	case progressMsg:
		return m, m.progressed(msg)
	case resultMsg:
		return m, m.finished(msg)
	}
	return m, nil
}

func (m *Model) key(k tea.KeyMsg) tea.Cmd {
	switch m.mode {
	case filtering:
		return m.filterKey(k)
	case prompting:
		return m.promptKey(k)
	case planning, running:
		if m.navigate(k) {
			return nil
		}
		return common.ReportError(fmt.Errorf("an operation on %s is in progress; wait for its result", m.ref.Name))
	}
	if m.navigate(k) {
		return nil
	}
	switch {
	case key.Matches(k, m.keys.Select):
		if l, ok := m.current(); ok {
			m.selected[l.Position] = !m.selected[l.Position]
			if !m.selected[l.Position] {
				delete(m.selected, l.Position)
			}
		}
	case key.Matches(k, m.keys.SelectAll):
		return m.selectAllMatching()
	case key.Matches(k, m.keys.Filter):
		m.mode = filtering
		m.input.SetValue(m.filterSrc)
		m.input.CursorEnd()
		return m.input.Focus()
	case key.Matches(k, m.keys.Inspect):
		return m.inspect()
	case key.Matches(k, m.keys.Replay):
		return m.startAction(Replay)
	case key.Matches(k, m.keys.Quarantine):
		return m.startAction(Quarantine)
	case key.Matches(k, m.keys.NextPage):
		return m.nextPage()
	case key.Matches(k, m.keys.Reopen):
		return m.open(m.allowRisk)
	case key.Matches(k, m.keys.Override):
		return m.askOverride()
	}
	return nil
}

func (m *Model) navigate(k tea.KeyMsg) bool {
	n := m.keys.Nav
	page := max(m.tableRows()-1, 1)
	switch {
	case key.Matches(k, n.Up):
		m.cursor--
	case key.Matches(k, n.Down):
		m.cursor++
	case key.Matches(k, n.PageUp):
		m.cursor -= page
	case key.Matches(k, n.PageDown):
		m.cursor += page
	case key.Matches(k, n.Top):
		m.cursor = 0
	case key.Matches(k, n.Bottom):
		m.cursor = len(m.visible) - 1
	default:
		return false
	}
	m.clampCursor()
	return true
}

func (m *Model) clampCursor() {
	m.cursor = max(min(m.cursor, len(m.visible)-1), 0)
	rows := max(m.tableRows(), 1)
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if m.cursor >= m.offset+rows {
		m.offset = m.cursor - rows + 1
	}
	m.offset = max(min(m.offset, len(m.visible)-rows), 0)
}

func (m *Model) current() (dlq.DeadLetter, bool) {
	if m.cursor < 0 || m.cursor >= len(m.visible) {
		return dlq.DeadLetter{}, false
	}
	return m.letters[m.visible[m.cursor]], true
}

func (m *Model) inspect() tea.Cmd {
	l, ok := m.current()
	if !ok {
		return nil
	}
	st := m.inbox[l.LogicalID]
	msg := common.OpenMessageMsg{Queue: m.ref, Letter: l, Inbox: st.label(), InboxDetail: st.describe()}
	return func() tea.Msg { return msg }
}

func (m *Model) nextPage() tea.Cmd {
	switch {
	case m.state != browsing:
		return common.ReportError(fmt.Errorf("no browse session on %s: press R to reopen", m.ref.Name))
	case m.loading:
		return nil
	case m.end:
		return common.Info(fmt.Sprintf("all of %s is held: no more pages", m.ref.Name))
	}
	m.loading = true
	return nextCmd(m.ctx, m.session, m.sid)
}

func (m *Model) opened(msg openedMsg) tea.Cmd {
	if msg.sid != m.sid {
		if msg.session != nil {
			return closeCmd(msg.session)
		}
		return nil
	}
	if msg.err != nil {
		if r, ok := isRefused(msg.err); ok {
			m.state, m.refusal = refused, r
			return nil
		}
		m.state, m.stateErr = failed, msg.err
		return common.ReportError(fmt.Errorf("browsing %s failed: %w; press R to retry", m.ref.Name, msg.err))
	}
	m.session, m.state = msg.session, browsing
	m.loading = true
	return tea.Batch(nextCmd(m.ctx, m.session, m.sid), watchCmd(m.session, m.sid))
}

func (m *Model) paged(msg pageMsg) tea.Cmd {
	if msg.sid != m.sid {
		return nil
	}
	m.loading = false
	if msg.err != nil {
		return common.ReportError(fmt.Errorf("reading the next page of %s failed: %w; press n to retry or R to reopen", m.ref.Name, msg.err))
	}
	m.end = msg.page.End
	for _, n := range msg.page.Notes {
		m.addNote(n)
	}
	m.letters = append(m.letters, msg.page.Letters...)
	var ids []string
	for _, l := range msg.page.Letters {
		if _, seen := m.inbox[l.LogicalID]; seen {
			continue
		}
		switch {
		case l.LogicalIDFrom == dlq.IDHash || l.LogicalID == "":
			m.inbox[l.LogicalID] = inboxStatus{state: "unknown", detail: "no logical ID (content hash): the inbox cannot know this message"}
		default:
			m.inbox[l.LogicalID] = inboxStatus{}
			ids = append(ids, l.LogicalID)
		}
	}
	m.refresh()
	if len(ids) == 0 {
		return nil
	}
	return inboxCmd(m.ctx, m.deps.Inbox, m.ref, ids, m.sid)
}

func (m *Model) addNote(n string) {
	for _, have := range m.notes {
		if have == n {
			return
		}
	}
	m.notes = append(m.notes, n)
}

func (m *Model) inboxAnswered(msg inboxMsg) {
	if msg.sid != m.sid {
		return
	}
	for _, id := range msg.asked {
		switch {
		case msg.err != nil:
			m.inbox[id] = inboxStatus{state: "unknown", detail: msg.err.Error()}
		default:
			if at, ok := msg.applied[id]; ok {
				m.inbox[id] = inboxStatus{state: "applied", at: at}
			} else {
				m.inbox[id] = inboxStatus{state: "pending", detail: "no inbox row for this logical ID"}
			}
		}
	}
	m.inboxNote = ""
	if msg.err != nil {
		m.inboxNote = "inbox unknown: " + msg.err.Error()
	}
	m.refresh()
}

func (m *Model) sessionDone(msg sessionDoneMsg) tea.Cmd {
	if msg.sid != m.sid || m.state != browsing {
		return nil
	}
	m.state, m.stateErr, m.loading = died, msg.err, false
	m.session = nil
	why := "it was closed"
	if msg.err != nil {
		why = msg.err.Error()
	}
	return common.ReportError(fmt.Errorf("browse session on %s ended (%s); its messages went back to the queue; press R to reopen", m.ref.Name, why))
}

func (s inboxStatus) label() string {
	if s.state == "" {
		return "unknown"
	}
	return s.state
}

func (s inboxStatus) describe() string {
	switch {
	case s.state == "":
		return "inbox lookup still running"
	case s.state == "applied" && !s.at.IsZero():
		return "applied at " + s.at.UTC().Format(time.RFC3339)
	case s.state == "applied":
		return "inbox row present (no time column)"
	}
	return s.detail
}

// appliedPtr is the filter's view of the inbox: nil when unknown.
func (s inboxStatus) appliedPtr() *bool {
	switch s.state {
	case "applied":
		t := true
		return &t
	case "pending":
		f := false
		return &f
	}
	return nil
}

// Package dlq is the dead-letter queue screen: the held messages with why
// they died and whether their effect was already applied, histograms of
// attempts, reasons and origins, a filter, multi-select, and the replay
// and quarantine actions behind the confirmation prompt.
package deadletters

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
	"github.com/warrenops/warren/ops"
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
	life   *life
	width  int
	height int

	sid       int64
	session   ops.Session
	state     sessionState
	stateErr  error
	refusal   *ops.RefusedError
	allowRisk bool
	loading   bool
	end       bool
	depth     int
	notes     []string
	letters   []dlq.DeadLetter
	inbox     map[string]inboxStatus
	inboxNote string

	mode      mode
	cursor    int
	offset    int
	selected  map[int]bool // by Position
	filter    ops.Filter
	filterSrc string
	filterErr error
	visible   []int // indexes into letters
	input     textinput.Model

	op         int64
	prompt     prompt.Model
	promptKind promptKind
	reason     string
	planAction ops.Action
	plan       ops.Plan
	progress   progress.Model
	// stopOp cancels the running operation's context; stopping is set
	// once the operator asked, until the result arrives.
	stopOp   context.CancelFunc
	stopping bool
	result   string

	scan scan
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
		ctx:  ctx, cancel: cancel, life: newLife(),
		inbox: map[string]inboxStatus{}, selected: map[int]bool{},
		input: in,
	}
}

// Init opens the browse session.
func (m *Model) Init() tea.Cmd { return m.open(false) }

func (m *Model) open(allowRisk bool) tea.Cmd {
	cmds := []tea.Cmd{closeCmd(m.life, m.sid)}
	m.sid = nextID()
	m.session, m.state, m.stateErr, m.refusal = nil, opening, nil, nil
	m.allowRisk = allowRisk
	m.loading, m.end, m.notes, m.depth = false, false, nil, 0
	m.letters, m.selected = nil, map[int]bool{}
	m.inbox, m.inboxNote = map[string]inboxStatus{}, ""
	m.cursor, m.offset, m.result = 0, 0, ""
	m.refresh()
	return tea.Batch(append(cmds, openCmd(m.ctx, m.life, m.deps.Browser, m.ref, allowRisk, m.sid))...)
}

// Close stops what the screen started: a running operation stops
// publishing and settles, then every held message returns to the DLQ.
func (m *Model) Close() tea.Cmd {
	m.sid, m.session = 0, nil
	m.cancel()
	sessions := m.life.shutdown()
	lf := m.life
	return func() tea.Msg {
		lf.work.Wait()
		for _, s := range sessions {
			_ = s.Close()
		}
		return nil
	}
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
	case planning:
		return busyKeys{nav: m.keys.Nav, stop: m.keys.Cancel}
	case running:
		return busyKeys{nav: m.keys.Nav, stop: m.keys.Stop}
	}
	k := m.keys
	switch {
	case m.scan.running:
		k.Scan = key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel the scan"))
	case m.scan.show:
		k.Scan.SetHelp("S", "stats of held messages")
	}
	return k
}

// Capturing is true while a filter or prompt takes keys, and while an
// operation or a scan runs, so esc cannot pop the screen from under it
// (esc cancels the scan).
func (m *Model) Capturing() bool { return m.mode != normal || m.scan.running }

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
	case scanProgressMsg:
		return m, m.scanProgressed(msg)
	case scanMsg:
		return m, m.scanned(msg)
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
		if m.mode == planning && key.Matches(k, m.keys.Cancel) {
			// The plan touches nothing: dropping its answer is enough.
			m.mode, m.op = normal, nextID()
			return common.Info("cancelled: nothing was changed")
		}
		if m.mode == running && key.Matches(k, m.keys.Stop) {
			m.stop()
			return nil
		}
		if m.mode == running {
			return common.ReportError(fmt.Errorf("an operation on %s is in progress; wait for its result or press x to cancel it", m.ref.Name))
		}
		return common.ReportError(fmt.Errorf("an operation on %s is being planned; wait for the prompt or press esc", m.ref.Name))
	}
	if m.navigate(k) {
		return nil
	}
	switch {
	case m.scan.running && key.Matches(k, m.keys.Cancel):
		m.cancelScan()
	case key.Matches(k, m.keys.Scan):
		return m.toggleScan()
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
		return m.startAction(ops.Replay)
	case key.Matches(k, m.keys.Quarantine):
		return m.startAction(ops.Quarantine)
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
	c, ok := m.keys.Nav.Move(k, m.cursor, max(m.tableRows()-1, 1), len(m.visible)-1)
	if !ok {
		return false
	}
	m.cursor = c
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

// Package deadletters is the dead-letter queue screen: the held messages
// with why they died and whether their effect was already applied,
// histograms of attempts, reasons and origins, a filter, multi-select,
// and the replay and quarantine actions behind the confirmation prompt.
package deadletters

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
	"github.com/warrenops/warren/text/format"
	"github.com/warrenops/warren/text/sanitize"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/components/prompt"
	"github.com/warrenops/warren/ui/keys"
	"github.com/warrenops/warren/ui/styles"
)

// Options are the context's settings the screen obeys.
type Options struct {
	ReadOnly bool
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
	lent // closed while an operation reads the whole queue
)

type mode int

const (
	normal mode = iota
	filtering
	prompting
	planning
	running
)

// env is what the screen's parts share: the queue, the services and
// settings, the context and life of the screen's commands, and its width.
type env struct {
	ref   domain.QueueRef
	deps  Deps
	opts  Options
	st    styles.Styles
	keys  KeyMap
	ctx   context.Context
	life  *life
	width int
}

// Model is the DLQ screen: the browse session and the held messages it
// brings, and three parts that each take their own keys and messages —
// the listing of the held messages, the operation on them, and the
// whole-queue scan.
type Model struct {
	*env
	cancel context.CancelFunc
	height int

	sid       int64
	session   ops.Session
	state     sessionState
	stateErr  error
	refusal   *domain.RefusedError
	allowRisk bool
	loading   bool
	end       bool
	// askedAfterEnd says the page under way was asked for after the
	// end: n then reads what arrived since the browse reached it.
	askedAfterEnd bool
	depth         int
	notes         []string
	// now is the time of the last deadline tick, and ticking says the
	// ticks run: a session that will give its messages back before the
	// broker's consumer timeout counts down in the header.
	now       time.Time
	ticking   bool
	inboxNote string

	held   *listing
	widths widthCache
	op     *operation
	scan   *scan
	groups *groups
}

// New returns the screen for the DLQ ref; Init opens the browse session.
func New(ref domain.QueueRef, deps Deps, opts Options) *Model {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &env{
		ref: ref, deps: deps, opts: opts, st: opts.Styles,
		keys: DefaultKeyMap(opts.ReadOnly), ctx: ctx, life: newLife(),
	}
	m := &Model{env: e, cancel: cancel, op: newOperation(e), scan: &scan{env: e}, groups: newGroups(e.st)}
	m.held = newListing(e, m.tableRows)
	return m
}

// Init opens the browse session.
func (m *Model) Init() tea.Cmd { return m.open(false) }

func (m *Model) open(allowRisk bool) tea.Cmd {
	prev := m.life.release(m.sid)
	m.sid = nextID()
	m.session, m.state, m.stateErr, m.refusal = nil, opening, nil, nil
	m.allowRisk = allowRisk
	m.loading, m.end, m.notes, m.depth = false, false, nil, 0
	m.inboxNote, m.op.result = "", ""
	m.held.reset(nil, true)
	return openCmd(m.ctx, m.life, m.deps.Browser, m.ref, allowRisk, m.sid, prev)
}

// Close stops what the screen started: a running operation stops
// publishing and settles, then every held message returns to the DLQ.
func (m *Model) Close() tea.Cmd {
	m.sid, m.session = 0, nil
	m.cancel()
	sessions := m.life.shutdown()
	lf := m.life
	plan := m.op.plan // a plan the prompt still asks about holds what it read
	m.op.plan = nil
	return func() tea.Msg {
		lf.work.Wait()
		for _, s := range sessions {
			_ = s.Close()
		}
		_ = plan.Close()
		return nil
	}
}

// Title names the screen; the root sanitises it.
func (m *Model) Title() string { return "DLQ " + m.ref.Name }

// mode is what holds the keys: the filter input, or the operation.
func (m *Model) mode() mode {
	if m.held.typing {
		return filtering
	}
	return m.op.mode
}

// Keys returns the bindings that apply now.
func (m *Model) Keys() help.KeyMap {
	switch m.mode() {
	case filtering:
		return filterKeys{Apply: m.keys.Apply, Cancel: m.keys.Cancel}
	case prompting:
		return m.op.prompt.Keys()
	case planning:
		return busyKeys{nav: m.keys.Nav, stop: m.keys.Cancel}
	case running:
		return busyKeys{nav: m.keys.Nav, stop: m.keys.Stop}
	}
	if m.groups.open {
		return m.groupKeys()
	}
	k := m.keys
	switch {
	case m.scan.running:
		k.Scan = keys.New("esc", "cancel the scan")
	case m.scan.show:
		k.Scan.SetHelp("S", "stats of held messages")
	}
	if m.op.halted != nil {
		k.Reopen.SetHelp("R", "resume the halted replay")
		k.halted = true
	}
	k.filtered = m.filtered() && !m.listingGroup()
	return k
}

// Capturing is true while a filter or prompt takes keys, while an
// operation or a scan runs, and while the failure groups are shown, so
// esc cannot pop the screen from under them (esc cancels the scan, and
// goes back from the groups to the list).
func (m *Model) Capturing() bool { return m.mode() != normal }

// HandlesEsc is true while esc closes the groups view, goes back to it
// from the group it listed, or cancels a scan rather than the screen;
// q, ? and A still reach the root.
func (m *Model) HandlesEsc() bool {
	return m.scan.running || m.groups.open || m.listingGroup() || m.filtered()
}

// filtered reports a filter applied to the held messages, which esc
// clears before it leaves the screen, as on the overview.
func (m *Model) filtered() bool { return m.held.filterSrc != "" && !m.held.typing }

// SetSize sets the space the screen may draw in.
func (m *Model) SetSize(w, h int) {
	m.width, m.height = w, h
	m.held.input.Width = max(w-4, 10)
	m.op.setWidth(w)
	m.held.fit()
}

// Update handles one message: the session's own, and the parts' by
// delegation. The failure groups shown are counted again when what they
// count has changed.
func (m *Model) Update(msg tea.Msg) (common.Screen, tea.Cmd) {
	cmd := m.handle(msg)
	if m.groups.open {
		m.countGroups()
	}
	return m, cmd
}

func (m *Model) handle(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		return m.key(msg)
	case openedMsg:
		return m.opened(msg)
	case pageMsg:
		return m.paged(msg)
	case inboxMsg:
		m.inboxAnswered(msg)
	case sessionDoneMsg:
		return m.sessionDone(msg)
	case deadlineMsg:
		return m.deadlineTick(msg)
	case lettersMsg:
		if msg.sid == m.sid {
			m.held.reset(msg.letters, false)
		}
	case common.HeldChangedMsg:
		if msg.Queue == m.ref && m.session != nil {
			return lettersCmd(m.session, m.sid)
		}
	case planMsg, stagingMsg, progressMsg, resultMsg:
		return m.follow(m.op.Update(msg))
	case exportCheckedMsg:
		return m.exportChecked(msg)
	case exportProgressMsg:
		return m.op.exportProgressed(msg)
	case exportedMsg:
		return m.follow(m.op.exported(msg))
	case scanProgressMsg, scanMsg:
		cmd, shown := m.scan.Update(msg, m.held.letters)
		if shown {
			m.held.fit() // the panel's height changed
		}
		return cmd
	}
	return nil
}

// follow does what the operation's answer or result asks of the screen.
func (m *Model) follow(cmd tea.Cmd, w wants) tea.Cmd {
	switch w {
	case planQuarantine:
		if m.op.askedWhole {
			return m.startWhole(ops.Quarantine, m.op.reason)
		}
		return m.op.start(m.planRequest(ops.Quarantine, m.op.reason), nil)
	case reopenAnyway:
		return m.open(true)
	case reload:
		if m.session != nil {
			return tea.Batch(lettersCmd(m.session, m.sid), cmd)
		}
	case reopen:
		result := m.op.result // what the operation did stays in view
		open := m.open(m.allowRisk)
		m.op.result = result
		return tea.Batch(cmd, open)
	case exportTo:
		o := m.op
		o.mode, o.action, o.id = planning, actionExport, nextID()
		return checkExportCmd(o.exportPath, o.id)
	}
	return cmd
}

func (m *Model) key(k tea.KeyMsg) tea.Cmd {
	switch m.mode() {
	case filtering:
		cmd, _ := m.held.Update(k)
		return cmd
	case prompting:
		return m.follow(m.op.Update(k))
	case planning, running:
		if m.held.navigate(k) {
			return nil
		}
		return m.follow(m.op.Update(k))
	}
	if m.groups.open {
		return m.groupKey(k)
	}
	if m.listingGroup() && !m.held.typing && !m.scan.running && key.Matches(k, m.keys.Cancel) {
		return m.backToGroups()
	}
	if m.filtered() && !m.scan.running && key.Matches(k, m.keys.Cancel) {
		m.held.input.SetValue("")
		return m.held.applyFilter("")
	}
	if cmd, ok := m.held.Update(k); ok {
		return cmd
	}
	switch {
	case m.scan.running && key.Matches(k, m.keys.Cancel):
		m.scan.cancel()
	case key.Matches(k, m.keys.Scan):
		return m.scan.toggle(m.loading, m.allowRisk)
	case key.Matches(k, m.keys.Groups):
		return m.openGroups()
	case key.Matches(k, m.keys.Inspect):
		return m.inspect()
	case key.Matches(k, m.keys.Replay):
		return m.startAction(ops.Replay, false)
	case key.Matches(k, m.keys.Quarantine):
		return m.startAction(ops.Quarantine, false)
	case key.Matches(k, m.keys.ReplayAll):
		return m.startAction(ops.Replay, true)
	case key.Matches(k, m.keys.QuarantineAll):
		return m.startAction(ops.Quarantine, true)
	case key.Matches(k, m.keys.NextPage):
		return m.nextPage()
	case key.Matches(k, m.keys.Export):
		return m.startExport()
	case m.op.halted != nil && key.Matches(k, m.keys.Reopen):
		return m.resumeHalted()
	case key.Matches(k, m.keys.Reopen), key.Matches(k, m.keys.Override):
		if m.scan.running {
			// The scan holds the queue's messages: a session opened now
			// would find it empty and say it reached the end.
			return common.ReportError(fmt.Errorf("a whole-queue scan holds the messages of %s; reopen once it ends (esc cancels it)", m.ref.Name))
		}
		if key.Matches(k, m.keys.Reopen) {
			return m.open(m.allowRisk)
		}
		return m.askOverride()
	}
	return nil
}

func (m *Model) inspect() tea.Cmd {
	l, ok := m.held.current()
	if !ok {
		return nil
	}
	st := m.held.inbox[l.LogicalID]
	msg := common.OpenMessageMsg{Queue: m.ref, Letter: l, Inbox: st.label(), InboxDetail: st.describe(), Session: m.session}
	return func() tea.Msg { return msg }
}

// planRequest is what an action would act on now: the selection, or the
// message under the cursor, held by this session.
func (m *Model) planRequest(a ops.Action, reason string) ops.Scope {
	return ops.Scope{Action: a, Queue: m.ref, Held: m.session, Letters: m.held.targets(), Reason: reason}
}

// startAction starts a replay or quarantine of the held targets, or with
// whole of every message the queue holds (those the filter matches).
func (m *Model) startAction(a ops.Action, whole bool) tea.Cmd {
	name := sanitize.Text(m.ref.Name)
	switch {
	case m.opts.ReadOnly:
		return common.ReportError(fmt.Errorf("read-only context: %s is disabled (read_only in the config or --read-only)", a))
	case m.deps.Actions == nil:
		return common.ReportError(fmt.Errorf("%s is not available in this session", a))
	case whole && m.scan.running:
		return common.ReportError(fmt.Errorf("a scan of %s is running: press esc to stop it before %s the whole queue", name, verb(a)))
	case whole && m.held.filterErr != nil:
		return common.ReportError(fmt.Errorf("the filter does not work (%v): fix or clear it before %s the whole queue", m.held.filterErr, verb(a)))
	case whole && m.state == refused:
		return common.ReportError(fmt.Errorf("warren refused to read %s: %s", name, m.refusal.Reason))
	case whole:
	case m.state != browsing:
		return common.ReportError(fmt.Errorf("no browse session on %s: press R to reopen before %s", name, verb(a)))
	case len(m.held.targets()) == 0:
		return common.ReportError(fmt.Errorf("nothing to %s: %s holds no messages", a, name))
	}
	// What a plan of held messages leaves out of the queue, for its
	// question: a selection of every held message is not the queue.
	m.op.beyond = 0
	if !whole && !m.end && m.depth > len(m.held.letters) {
		m.op.beyond = m.depth - len(m.held.letters)
	}
	if a == ops.Quarantine {
		what := format.Messages(len(m.held.targets()))
		if whole {
			what = m.wholeWords()
		}
		m.op.ask(askReason, prompt.Question{
			Title: "Quarantine",
			Text:  fmt.Sprintf("Quarantine %s from %s: why? The reason is stored in each message and the audit log.", what, name),
			Ask:   "Reason",
		})
		m.op.askedWhole = whole
		return nil
	}
	if whole {
		return m.startWhole(ops.Replay, "")
	}
	return m.op.start(m.planRequest(ops.Replay, ""), nil)
}

// wholeWords names what a whole-queue operation acts on.
func (m *Model) wholeWords() string {
	if m.held.filter != nil {
		return "every message of the queue matching " + m.held.filterSrc
	}
	return "every message of the queue"
}

// lend takes the browse session from the screen for an operation on the
// whole queue, which closes it so that what it held is back in the queue,
// and returns it; the screen shows nothing held until it browses again.
func (m *Model) lend() ops.Session {
	s := m.life.release(m.sid)
	m.sid, m.session, m.state = nextID(), nil, lent
	m.loading, m.end = false, false
	m.held.reset(nil, true)
	return s
}

// startWhole closes the browse session, so what it held goes back to the
// queue, and plans a across the whole queue with the screen's filter: a
// preview reads every message, then the prompt states what would move.
func (m *Model) startWhole(a ops.Action, reason string) tea.Cmd {
	req := ops.Scope{Action: a, Queue: m.ref, Reason: reason}
	if m.held.filter != nil {
		req.Filter, req.FilterText = m.held.filter, m.held.filterSrc
	}
	s := m.lend()
	return m.op.start(req, s)
}

// resumeHalted plans the resume of the replay that halted itself: the
// browse session is lent to it, as for any whole-queue operation, and
// the prompt asks again, with a fresh canary.
func (m *Model) resumeHalted() tea.Cmd {
	name := sanitize.Text(m.ref.Name)
	switch {
	case m.opts.ReadOnly:
		return common.ReportError(errors.New("read-only context: resume is disabled (read_only in the config or --read-only)"))
	case m.deps.Actions == nil:
		return common.ReportError(errors.New("resume is not available in this session"))
	case m.scan.running:
		return common.ReportError(fmt.Errorf("a scan of %s is running: press esc to stop it before resuming", name))
	}
	s := m.lend()
	return m.op.start(ops.Scope{Action: ops.Resume, Queue: m.ref, Operation: m.op.halted.operation}, s)
}

func (m *Model) askOverride() tea.Cmd {
	if m.state != refused || m.refusal == nil {
		return common.Info("nothing to override: warren did not refuse to browse " + sanitize.Text(m.ref.Name))
	}
	name := sanitize.Text(m.ref.Name)
	m.op.ask(confirmOverride, prompt.Question{
		Title:         "Browse anyway",
		Text:          fmt.Sprintf("Browse %s although warren refused: %s", name, sanitize.Text(m.refusal.Reason)),
		Warning:       sanitize.Text(m.refusal.Risk) + "; the whole-queue statistics (S) then read every message of the queue under the same risk",
		TypeToConfirm: name,
	})
	return nil
}

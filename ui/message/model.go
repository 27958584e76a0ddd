// Package message is the inspector: one dead letter with every property,
// its headers, x-death as a table, the body decoded by content type, and
// the inbox row when there is one.
package message

import (
	"os/exec"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/text/sanitize"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/styles"
)

// Options are the inspector's settings.
type Options struct {
	// Now is the clock for ages; views read time only through it.
	Now    func() time.Time
	Styles styles.Styles
	// Editor edits and resubmits the letter (e); nil, or ReadOnly, when
	// the context may not change anything.
	Editor   Editor
	ReadOnly bool
	// Exec runs the editor with the terminal released; tea.ExecProcess
	// unless a test replaces it.
	Exec func(*exec.Cmd, tea.ExecCallback) tea.Cmd
}

// Model is the inspector on one dead letter. It does no I/O: everything
// it shows came with the request to open it.
type Model struct {
	msg  common.OpenMessageMsg
	opts Options
	st   styles.Styles
	keys KeyMap
	hex  bool
	common.Frame
	common.NoText
	lines  []string
	offset int
	edit   *edit
	// left says the message is no longer in its queue (its edited copy
	// was confirmed and the original acked): what is shown is what it
	// was.
	left string
	// body is the body's section as last laid out: the content is laid
	// out again every second for its ages, and the body is the costly
	// part, the same until the width or the hex toggle changes.
	laid struct {
		width int
		hex   bool
		text  string
	}
}

// agoEvery is how often the content is laid out again, so that "3m47s
// ago" counts on while the operator reads.
const agoEvery = time.Second

// agoTick lays the content of one inspector out again.
type agoTick struct{ m *Model }

// New returns the inspector for the letter msg carries.
func New(msg common.OpenMessageMsg, opts Options) *Model {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Exec == nil {
		opts.Exec = execProcess
	}
	m := &Model{msg: msg, opts: opts, st: opts.Styles, keys: DefaultKeyMap(), Frame: common.Frame{Width: 80}}
	m.render()
	return m
}

// Init starts the clock of the ages shown.
func (m *Model) Init() tea.Cmd { return m.tick() }

func (m *Model) tick() tea.Cmd {
	return tea.Tick(agoEvery, func(time.Time) tea.Msg { return agoTick{m} })
}

// Title names the screen in the breadcrumb; the root sanitises it.
func (m *Model) Title() string {
	id := m.msg.Letter.LogicalID
	if id == "" {
		id = m.msg.Letter.MessageID
	}
	return "message " + id
}

// Keys returns the bindings for the help view.
func (m *Model) Keys() help.KeyMap { return m.keys }

// SetSize lays the content out again for the new width.
func (m *Model) SetSize(w, h int) {
	m.Resize(w, h)
	m.render()
}

// Update scrolls, switches the body between decoded and hex, and edits.
func (m *Model) Update(msg tea.Msg) (common.Screen, tea.Cmd) {
	if t, ok := msg.(agoTick); ok {
		if t.m != m {
			return m, nil // another inspector's, since closed
		}
		m.render()
		return m, m.tick()
	}
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		cmd, _ := m.updateEdit(msg)
		return m, cmd
	}
	if m.Capturing() {
		return m, m.promptKey(k)
	}
	if key.Matches(k, m.keys.Edit) {
		if m.left != "" {
			return m, common.Info("this message is no longer in " + sanitize.Text(m.msg.Queue.Name) + ": " + m.left)
		}
		return m, m.startEdit()
	}
	if o, ok := m.keys.Nav.Move(k, m.offset, max(m.rows()-1, 1), len(m.lines)); ok {
		m.offset = o
	}
	if key.Matches(k, m.keys.Hex) {
		m.hex = !m.hex
		m.render()
	}
	m.clamp()
	return m, nil
}

// rows is how many content lines fit: one line is kept for the scroll
// position when the content is taller than the screen.
func (m *Model) rows() int {
	if m.Height <= 0 || len(m.lines) <= m.Height {
		return len(m.lines)
	}
	return max(m.Height-1, 1)
}

func (m *Model) clamp() {
	m.offset = max(min(m.offset, len(m.lines)-m.rows()), 0)
}

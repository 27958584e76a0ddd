// Package ui is warren's root bubbletea model. It owns the layout, the
// stack of screens, the header, the footer's message line and the help;
// each screen lives in its own package and talks to the root through the
// messages of package common.
//
// Messages other than keys reach every screen on the stack, so a screen
// below the top keeps its polling chain alive and stays current; each
// screen keeps only the results tagged with its own ID. Keys go to the
// top screen only.
package ui

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ui/channels"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/debug"
	"github.com/warrenops/warren/ui/keys"
	"github.com/warrenops/warren/ui/overview"
	"github.com/warrenops/warren/ui/styles"
)

// Options are what main.go wires into the UI.
type Options struct {
	// Context names the target: a context's name, or with NoConfig
	// what stands in for the missing config file ("local broker").
	Context     string
	NoConfig    bool
	Environment string // dev|staging|prod; prod gets a red banner
	ReadOnly    bool
	InsecureTLS bool
	// Unencrypted marks a production context reached over plain amqp://
	// or http:// on another machine.
	Unencrypted bool
	Refresh     time.Duration
	Vhost       string
	// Ignored are config files found in the working directory and not
	// read, each in a few words ("./warren.toml ignored: not trusted").
	Ignored []string

	// Contexts are the config's contexts, for the switcher (C); fewer
	// than two leave it out.
	Contexts []ContextChoice

	// Overview is the home screen, at the bottom of the stack.
	Overview *overview.Model
	// Channels lists the broker's channels, for the header's count of
	// unconfirmed publishes and the channels screen; nil leaves both out.
	Channels channels.Lister

	// Screens the root opens on request, wired by the composition root
	// (app); a nil constructor makes the request an error on the footer.
	NewQueue    func(domain.QueueRef) common.Screen
	NewChannels func() common.Screen
	NewDLQ      func(domain.QueueRef) common.Screen
	NewMessage  func(common.OpenMessageMsg) common.Screen
	NewAudit    func() common.Screen

	// Debug receives one line per handled message; nil disables it.
	Debug io.Writer
	// Styles default to styles.Default(); Now to time.Now.
	Styles *styles.Styles
	Now    func() time.Time
}

// Model is the root model.
type Model struct {
	o        Options
	st       styles.Styles
	keys     keys.Global
	help     help.Model
	showHelp bool
	log      *debug.Logger
	now      func() time.Time

	overview *overview.Model
	stack    []common.Screen // screens above the overview, top last
	confirms confirms

	width, height int
	footer        footer
	picker        picker
	command       commandLine
	switchTo      string
	toFleet       bool
}

// footer is the message line: an error (red) or information (green),
// cleared by the next key.
type footer struct {
	text  string
	isErr bool
}

// New returns the root model with the overview at the bottom of the stack.
func New(o Options) Model {
	st := styles.Default()
	if o.Styles != nil {
		st = *o.Styles
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	h := help.New()
	h.Styles = st.HelpStyles()
	return Model{
		o:        o,
		st:       st,
		keys:     keys.DefaultGlobal(),
		help:     h,
		log:      debug.New(o.Debug, now),
		now:      now,
		overview: o.Overview,
	}
}

// Init starts the overview's polling and the header's count of
// unconfirmed publishes.
func (m Model) Init() tea.Cmd { return tea.Batch(m.overview.Init(), m.pollConfirms()) }

// top is the screen that receives keys.
func (m Model) top() common.Screen {
	if len(m.stack) > 0 {
		return m.stack[len(m.stack)-1]
	}
	return m.overview
}

// Update implements tea.Model.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	m.log.Log(msg)
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.resize()
		// The overview may need rates for rows the new size shows.
		s, cmd := m.overview.Update(msg)
		m.overview = s.(*overview.Model)
		return m, cmd
	case tea.KeyMsg:
		return m.handleKeys(msg)
	case common.PushMsg:
		return m.push(msg.Screen)
	case common.PopMsg:
		return m.pop()
	case common.OpenQueueMsg:
		if m.o.NewQueue == nil {
			return m.fail(errors.New("the queue screen is not available: no management client"))
		}
		return m.push(m.o.NewQueue(msg.Queue))
	case common.OpenDLQMsg:
		if m.o.NewDLQ == nil {
			return m.fail(errors.New("the DLQ screen is not available in this build"))
		}
		return m.push(m.o.NewDLQ(msg.Queue))
	case common.OpenMessageMsg:
		if m.o.NewMessage == nil {
			return m.fail(errors.New("the message inspector is not available in this build"))
		}
		return m.push(m.o.NewMessage(msg))
	case common.OpenAuditMsg:
		if m.o.NewAudit == nil {
			return m.fail(errors.New("the audit screen is not available in this build"))
		}
		return m.push(m.o.NewAudit())
	case confirmsTick:
		return m, m.pollConfirms()
	case confirmsMsg:
		msg.confirms.held = msg.confirms.unconfirmed > 0 && m.confirms.unconfirmed > 0
		m.confirms = msg.confirms
		return m, tea.Tick(m.confirmsEvery(), func(time.Time) tea.Msg { return confirmsTick{} })
	case common.ErrorMsg:
		return m.fail(msg.Err)
	case common.InfoMsg:
		m.footer = footer{text: msg.Text}
		return m, nil
	}
	return m.broadcast(msg)
}

func (m Model) fail(err error) (tea.Model, tea.Cmd) {
	if err != nil {
		m.footer = footer{text: err.Error(), isErr: true}
	}
	return m, nil
}

func (m Model) handleKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	m.footer = footer{}
	switch {
	case key.Matches(msg, m.keys.ForceQuit):
		return m.quit()
	case !m.drawn():
		// Nothing but the size is drawn: a key must not act on a
		// screen or a question the operator cannot see.
		if key.Matches(msg, m.keys.Quit) && !m.top().Capturing() {
			return m.quit()
		}
		return m.fail(fmt.Errorf("keys wait for a terminal of %d×%d or more; q quits", minWidth, minHeight))
	case m.showHelp:
		if key.Matches(msg, m.keys.Quit) {
			return m.quit()
		}
		m.showHelp = false
		return m, nil
	}
	if m.command.open {
		return m.commandKey(msg)
	}
	if m.picker.open {
		return m.pickerKey(msg)
	}
	if !m.top().Capturing() {
		switch {
		case key.Matches(msg, m.keys.Command):
			return m.openCommand()
		case key.Matches(msg, m.keys.Contexts):
			return m.openPicker()
		case key.Matches(msg, m.keys.Quit):
			return m.quit()
		case key.Matches(msg, m.keys.Help):
			m.showHelp = true
			return m, nil
		case key.Matches(msg, m.keys.Audit):
			return m, func() tea.Msg { return common.OpenAuditMsg{} }
		case key.Matches(msg, m.keys.Channels) && len(m.stack) == 0:
			return m.openChannels()
		case key.Matches(msg, m.keys.Back) && len(m.stack) > 0 && !handlesEsc(m.top()):
			return m.pop()
		}
	}
	if len(m.stack) == 0 {
		s, cmd := m.overview.Update(msg)
		m.overview = s.(*overview.Model)
		return m, cmd
	}
	i := len(m.stack) - 1
	s, cmd := m.stack[i].Update(msg)
	m.stack[i] = s
	return m, cmd
}

// handleKeys handles the keys of one read one at a time, in order
// (keys.Split).
func (m Model) handleKeys(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	split := keys.Split(msg)
	if len(split) == 1 {
		return m.handleKey(msg)
	}
	cmds := make([]tea.Cmd, 0, len(split))
	for _, k := range split {
		next, cmd := m.handleKey(k)
		m = next.(Model)
		cmds = append(cmds, cmd)
	}
	return m, tea.Batch(cmds...)
}

// broadcast gives a non-key message to every screen.
func (m Model) broadcast(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmds := make([]tea.Cmd, 0, len(m.stack)+1)
	s, cmd := m.overview.Update(msg)
	m.overview = s.(*overview.Model)
	cmds = append(cmds, cmd)
	for i := range m.stack {
		s, cmd := m.stack[i].Update(msg)
		m.stack[i] = s
		cmds = append(cmds, cmd)
	}
	return m, tea.Batch(cmds...)
}

func (m Model) push(s common.Screen) (tea.Model, tea.Cmd) {
	if s == nil {
		return m.fail(errors.New("the screen could not be opened"))
	}
	w, h, _ := bodySize(m.width, m.height)
	s.SetSize(w, h)
	m.stack = append(m.stack[:len(m.stack):len(m.stack)], s)
	m.showHelp = false
	return m, s.Init()
}

func (m Model) pop() (tea.Model, tea.Cmd) {
	if len(m.stack) == 0 {
		return m, nil
	}
	s := m.stack[len(m.stack)-1]
	m.stack = m.stack[:len(m.stack)-1]
	return m, closeScreen(s)
}

// quit releases every screen's resources, top first, then quits.
func (m Model) quit() (tea.Model, tea.Cmd) {
	cmds := make([]tea.Cmd, 0, len(m.stack)+1)
	for i := len(m.stack) - 1; i >= 0; i-- {
		cmds = append(cmds, closeScreen(m.stack[i]))
	}
	return m, tea.Sequence(append(cmds, tea.Quit)...)
}

func closeScreen(s common.Screen) tea.Cmd {
	if c, ok := s.(common.Closer); ok {
		return c.Close()
	}
	return nil
}

func (m *Model) resize() {
	w, h, _ := bodySize(m.width, m.height)
	m.help.Width = m.width
	m.overview.SetSize(w, h)
	for _, s := range m.stack {
		s.SetSize(w, h)
	}
}

// handlesEsc reports whether the screen takes esc for itself just now.
func handlesEsc(s common.Screen) bool {
	h, ok := s.(common.EscHandler)
	return ok && h.HandlesEsc()
}

// Package keys holds the bindings screens share: the root's global keys,
// the movement keys of lists and scrolled text, and those of the screens
// about queues. Each screen keeps its own bindings in its own keys.go.
package keys

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// New returns a binding for k, and any more keys, that the help shows as
// k with text.
func New(k, text string, more ...string) key.Binding {
	return key.NewBinding(key.WithKeys(append([]string{k}, more...)...), key.WithHelp(k, text))
}

// Global are the keys the root model handles whenever the current screen
// is not capturing text.
type Global struct {
	Quit      key.Binding
	ForceQuit key.Binding
	Help      key.Binding
	Back      key.Binding
	Audit     key.Binding
	// Channels opens the channels screen from the overview.
	Channels key.Binding
	// Contexts opens the context switcher.
	Contexts key.Binding
	// Command opens the command line (ctx, fleet, …).
	Command key.Binding
}

// DefaultGlobal returns the root's bindings.
func DefaultGlobal() Global {
	return Global{
		Quit:      New("q", "quit"),
		ForceQuit: New("ctrl+c", "quit"),
		Help:      New("?", "help"),
		Back:      New("esc", "back"),
		Audit:     New("A", "audit log"),
		Channels:  New("c", "channels"),
		Contexts:  New("C", "switch context"),
		Command:   New(":", "command: ctx, ctx NAME, fleet, audit, channels, help, q"),
	}
}

// ShortHelp implements help.KeyMap.
func (g Global) ShortHelp() []key.Binding { return []key.Binding{g.Back, g.Help, g.Quit} }

// FullHelp implements help.KeyMap.
func (g Global) FullHelp() [][]key.Binding {
	return [][]key.Binding{{g.Back, g.Audit, g.Channels, g.Contexts, g.Command, g.Help, g.Quit, g.ForceQuit}}
}

// Queue are the bindings of the screens about queues (the list and one
// queue), which open a queue's DLQ and refresh alike.
type Queue struct {
	DLQ     key.Binding
	Refresh key.Binding
}

// DefaultQueue returns the bindings the queue screens share.
func DefaultQueue() Queue {
	return Queue{
		DLQ:     New("d", "open DLQ"),
		Refresh: New("r", "refresh now"),
	}
}

// Nav moves a cursor through a list or scrolls a text.
type Nav struct {
	Up       key.Binding
	Down     key.Binding
	PageUp   key.Binding
	PageDown key.Binding
	Top      key.Binding
	Bottom   key.Binding
}

// DefaultNav returns the movement bindings (arrows and vi keys).
func DefaultNav() Nav {
	return Nav{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+b"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+f", " "), key.WithHelp("pgdn", "page down")),
		Top:      key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g/home", "top")),
		Bottom:   key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G/end", "bottom")),
	}
}

// Bindings lists the movement keys for a help column.
func (n Nav) Bindings() []key.Binding {
	return []key.Binding{n.Up, n.Down, n.PageUp, n.PageDown, n.Top, n.Bottom}
}

// Move applies a movement key to pos: one step, a page of page steps, or
// the ends (0 and last). ok is false for any other key; the caller clamps.
func (n Nav) Move(k tea.KeyMsg, pos, page, last int) (int, bool) {
	switch {
	case key.Matches(k, n.Up):
		return pos - 1, true
	case key.Matches(k, n.Down):
		return pos + 1, true
	case key.Matches(k, n.PageUp):
		return pos - page, true
	case key.Matches(k, n.PageDown):
		return pos + page, true
	case key.Matches(k, n.Top):
		return 0, true
	case key.Matches(k, n.Bottom):
		return last, true
	}
	return pos, false
}

// Split is the keys that arrived in one read, one at a time, as the
// terminal gives them when they are typed or repeated faster than they
// are read (over ssh, a held j, esc pressed twice): each as if it had
// arrived alone. A paste, and any single key, stays whole.
func Split(msg tea.KeyMsg) []tea.KeyMsg {
	switch {
	case msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste:
		out := make([]tea.KeyMsg, 0, len(msg.Runes))
		for _, r := range msg.Runes {
			out = append(out, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt})
		}
		return out
	case msg.Type == tea.KeyEsc && msg.Alt:
		// Two escs in one read reach the program as alt+esc, a key no
		// screen binds: they are the two escs they were.
		return []tea.KeyMsg{{Type: tea.KeyEsc}, {Type: tea.KeyEsc}}
	}
	return []tea.KeyMsg{msg}
}

package auditlog

import (
	"github.com/charmbracelet/bubbles/key"

	"github.com/warrenops/warren/ui/keys"
)

// KeyMap are the audit screen's bindings, in the list and in an opened
// operation.
type KeyMap struct {
	Nav    keys.Nav
	Open   key.Binding
	Reload key.Binding
	Resume key.Binding
	Stop   key.Binding // cancels a running resume
	Cancel key.Binding // drops a resume being planned
	Filter key.Binding
	Apply  key.Binding // keeps the filter typed
	Clear  key.Binding // clears the filter
}

// DefaultKeyMap returns the audit screen's bindings.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Nav:    keys.DefaultNav(),
		Open:   keys.New("enter", "open operation"),
		Reload: keys.New("r", "reload and verify", "ctrl+r"),
		Resume: keys.New("R", "resume incomplete"),
		Stop:   keys.New("x", "cancel the resume"),
		Cancel: keys.New("esc", "cancel"),
		Filter: keys.New("/", "filter messages"),
		Apply:  keys.New("enter", "keep filter"),
		Clear:  keys.New("esc", "clear filter"),
	}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Nav.Up, k.Nav.Down, k.Open, k.Resume, k.Reload}
}

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.Nav.Bindings(), {k.Open, k.Resume, k.Stop, k.Reload}}
}

// detailKeys are the bindings of an opened operation.
type detailKeys struct{ KeyMap }

func (k detailKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Nav.Up, k.Nav.Down, k.Filter, k.Resume}
}

func (k detailKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.Nav.Bindings(), {k.Filter, k.Resume, k.Stop}}
}

// filterKeys are the bindings while the filter is typed.
type filterKeys struct{ apply, clear key.Binding }

func (k filterKeys) ShortHelp() []key.Binding  { return []key.Binding{k.apply, k.clear} }
func (k filterKeys) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

// busyKeys are the bindings while a resume is planned or runs.
type busyKeys struct{ stop key.Binding }

func (k busyKeys) ShortHelp() []key.Binding  { return []key.Binding{k.stop} }
func (k busyKeys) FullHelp() [][]key.Binding { return [][]key.Binding{{k.stop}} }

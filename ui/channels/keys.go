package channels

import (
	"github.com/charmbracelet/bubbles/key"

	"github.com/warrenops/warren/ui/keys"
)

// KeyMap are the channels screen's bindings.
type KeyMap struct {
	Nav     keys.Nav
	Filter  key.Binding
	Clear   key.Binding
	Apply   key.Binding
	Refresh key.Binding
}

// DefaultKeyMap returns the channels screen's bindings.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Nav:     keys.DefaultNav(),
		Filter:  keys.New("/", "filter"),
		Clear:   keys.New("esc", "clear filter"),
		Apply:   keys.New("enter", "keep filter"),
		Refresh: keys.New("r", "refresh now"),
	}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Filter, k.Refresh}
}

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Filter, k.Clear, k.Apply, k.Refresh}, k.Nav.Bindings()}
}

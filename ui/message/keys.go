package message

import (
	"github.com/charmbracelet/bubbles/key"

	"github.com/warrenops/warren/ui/keys"
)

// KeyMap are the inspector's bindings.
type KeyMap struct {
	Nav  keys.Nav
	Hex  key.Binding
	Edit key.Binding
}

// DefaultKeyMap returns the inspector's bindings.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Nav:  keys.DefaultNav(),
		Hex:  keys.New("x", "body as hex / decoded"),
		Edit: keys.New("e", "edit and resubmit"),
	}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Nav.Down, k.Nav.Up, k.Nav.PageDown, k.Hex, k.Edit}
}

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.Nav.Bindings(), {k.Hex, k.Edit}}
}

package auditlog

import (
	"github.com/charmbracelet/bubbles/key"

	"github.com/warrenops/warren/ui/keys"
)

// KeyMap are the audit screen's bindings.
type KeyMap struct {
	Nav    keys.Nav
	Reload key.Binding
}

// DefaultKeyMap returns the audit screen's bindings.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Nav:    keys.DefaultNav(),
		Reload: keys.New("r", "reload and verify", "ctrl+r"),
	}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Nav.Up, k.Nav.Down, k.Reload}
}

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.Nav.Bindings(), {k.Reload}}
}

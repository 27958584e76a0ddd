package queuedetail

import (
	"github.com/charmbracelet/bubbles/key"

	"github.com/warrenops/warren/ui/keys"
)

// KeyMap is the queue screen's bindings.
type KeyMap struct {
	keys.Queue
	Nav keys.Nav
}

// DefaultKeyMap returns the queue screen's bindings.
func DefaultKeyMap() KeyMap {
	return KeyMap{Queue: keys.DefaultQueue(), Nav: keys.DefaultNav()}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.DLQ, k.Refresh, k.Nav.Down, k.Nav.Up}
}

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.DLQ, k.Refresh}, k.Nav.Bindings()}
}

package overview

import (
	"github.com/charmbracelet/bubbles/key"

	"github.com/warrenops/warren/ui/keys"
)

// KeyMap is the overview's bindings.
type KeyMap struct {
	keys.Queue
	Open   key.Binding
	Filter key.Binding
	Sort   key.Binding
	Vhost  key.Binding
	Clear  key.Binding
	Apply  key.Binding
	Nav    keys.Nav
}

// DefaultKeyMap returns the overview's bindings.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Queue:  keys.DefaultQueue(),
		Open:   keys.New("enter", "open queue"),
		Filter: keys.New("/", "filter"),
		Sort:   keys.New("s", "sort: depth/age/DLQ/name"),
		Vhost:  keys.New("v", "next vhost"),
		Clear:  keys.New("esc", "clear filter"),
		Apply:  keys.New("enter", "keep filter"),
		Nav:    keys.DefaultNav(),
	}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Open, k.DLQ, k.Filter, k.Sort, k.Vhost}
}

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Open, k.DLQ, k.Refresh},
		{k.Filter, k.Clear, k.Sort, k.Vhost},
		k.Nav.Bindings(),
	}
}

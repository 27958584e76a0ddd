package overview

import (
	"github.com/charmbracelet/bubbles/key"

	"github.com/warrenops/warren/ui/keys"
)

// KeyMap is the overview's bindings.
type KeyMap struct {
	Open    key.Binding
	DLQ     key.Binding
	Filter  key.Binding
	Sort    key.Binding
	Vhost   key.Binding
	Refresh key.Binding
	Clear   key.Binding
	Apply   key.Binding
	Nav     keys.Nav
}

// DefaultKeyMap returns the overview's bindings.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Open:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open queue")),
		DLQ:     key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "open DLQ")),
		Filter:  key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Sort:    key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort: depth/age/DLQ/name")),
		Vhost:   key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "next vhost")),
		Refresh: key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "refresh now")),
		Clear:   key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter")),
		Apply:   key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "keep filter")),
		Nav:     keys.DefaultNav(),
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

package prompt

import "github.com/charmbracelet/bubbles/key"

// KeyMap are the prompt's bindings. Yes and No are single keys for a plain
// question; while the operator types, only Confirm and Cancel apply.
type KeyMap struct {
	Confirm key.Binding
	Cancel  key.Binding
	Yes     key.Binding
	No      key.Binding
	typing  bool
}

// DefaultKeyMap returns the prompt's bindings.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Confirm: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "confirm")),
		Cancel:  key.NewBinding(key.WithKeys("esc", "ctrl+c"), key.WithHelp("esc", "cancel")),
		Yes:     key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", "yes")),
		No:      key.NewBinding(key.WithKeys("n", "N"), key.WithHelp("n", "no")),
	}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding {
	if k.typing {
		return []key.Binding{k.Confirm, k.Cancel}
	}
	return []key.Binding{k.Yes, k.No, k.Cancel}
}

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

package common

import tea "github.com/charmbracelet/bubbletea"

// Stamp marks a polling screen's messages with the screen's ID and the
// tag of its polling round, so a late tick or answer — from a screen
// since closed, or from before a vhost switch or a manual refresh — is
// recognised and dropped.
type Stamp struct{ ID, Tag int }

// Stamped returns the stamp a message carries.
func (s Stamp) Stamped() Stamp { return s }

// Stale reports whether msg carries a stamp other than current; a message
// without one is never stale.
func Stale(msg tea.Msg, current Stamp) bool {
	s, ok := msg.(interface{ Stamped() Stamp })
	return ok && s.Stamped() != current
}

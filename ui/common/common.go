// Package common holds the contract between the root model and the
// screens: the Screen interface and the messages screens use to ask the
// root for navigation, errors and information.
package common

import (
	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/ops"
)

// Screen is one view the root model stacks and shows.
type Screen interface {
	Init() tea.Cmd
	Update(tea.Msg) (Screen, tea.Cmd)
	View() string
	// SetSize gives the screen the space below the header and above the
	// footer.
	SetSize(width, height int)
	// Title names the screen in the breadcrumb.
	Title() string
	// Keys are the screen's bindings for the help view.
	Keys() help.KeyMap
	// Capturing reports whether the screen is taking text input (a
	// filter or a prompt), so the root must not treat keys as global.
	Capturing() bool
}

// EscHandler is implemented by screens that take esc for themselves at
// times (to close a view inside them, to cancel a scan) while the root's
// other global keys still work.
type EscHandler interface {
	HandlesEsc() bool
}

// Closer is implemented by screens holding resources (a browse session)
// that must be released when the screen is popped.
type Closer interface {
	Close() tea.Cmd
}

// PushMsg asks the root to open a screen on top of the current one.
type PushMsg struct{ Screen Screen }

// PopMsg asks the root to close the current screen.
type PopMsg struct{}

// OpenQueueMsg asks the root to open the queue screen.
type OpenQueueMsg struct{ Queue domain.QueueRef }

// OpenDLQMsg asks the root to open the DLQ screen of a queue.
type OpenDLQMsg struct{ Queue domain.QueueRef }

// OpenMessageMsg asks the root to open the inspector on one dead letter.
type OpenMessageMsg struct {
	Queue  domain.QueueRef
	Letter domain.DeadLetter
	// Inbox is the letter's inbox status (applied|pending|unknown) and
	// InboxDetail the row or the reason, as the DLQ screen knows them.
	Inbox       string
	InboxDetail string
	// Session is the DLQ screen's browse session that holds Letter; an
	// edit resubmits it and removes it through that session.
	Session ops.Holder
}

// HeldChangedMsg tells the DLQ screen of Queue that a screen above it
// settled a message its session held (an edit), so it reads its held
// letters again.
type HeldChangedMsg struct{ Queue domain.QueueRef }

// OpenAuditMsg asks the root to open the audit screen.
type OpenAuditMsg struct{}

// ErrorMsg reports an error on the footer's red line.
type ErrorMsg struct{ Err error }

// InfoMsg reports information on the footer's green line.
type InfoMsg struct{ Text string }

// ReportError returns a command that reports err.
func ReportError(err error) tea.Cmd {
	return func() tea.Msg { return ErrorMsg{Err: err} }
}

// Info returns a command that reports text.
func Info(text string) tea.Cmd {
	return func() tea.Msg { return InfoMsg{Text: text} }
}

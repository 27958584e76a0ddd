package deadletters

import (
	"github.com/charmbracelet/bubbles/key"

	"github.com/warrenops/warren/ui/keys"
)

// KeyMap are the DLQ screen's bindings.
type KeyMap struct {
	Nav        keys.Nav
	Select     key.Binding
	SelectAll  key.Binding
	Filter     key.Binding
	Inspect    key.Binding
	Replay     key.Binding
	Quarantine key.Binding
	// ReplayAll and QuarantineAll act on every message of the queue
	// (those the filter matches), not the held ones.
	ReplayAll     key.Binding
	QuarantineAll key.Binding
	NextPage      key.Binding
	Reopen        key.Binding
	Override      key.Binding
	Scan          key.Binding // whole-queue statistics
	Export        key.Binding // the queue into a file
	Groups        key.Binding // the failure groups in place of the list
	ShowGroup     key.Binding // lists the group under the cursor
	CloseGroups   key.Binding // back from the groups to the list
	Apply         key.Binding // ends filter input
	Cancel        key.Binding // leaves filter input
	Stop          key.Binding // cancels a running operation
	// Canary and Pace change how a whole-queue replay goes out, at its
	// prompt.
	Canary key.Binding
	Pace   key.Binding

	readOnly bool
	// halted puts R, which resumes a halted replay then, in the short
	// help beside the banner that names it.
	halted bool
	// filtered puts esc, which clears the filter applied, first in the
	// help.
	filtered bool
}

// DefaultKeyMap returns the bindings; in a read-only context the action
// keys are left out of the help (pressing them still explains why nothing
// happens).
func DefaultKeyMap(readOnly bool) KeyMap {
	nav := keys.DefaultNav()
	// Space selects here, so it cannot also page down, and g opens the
	// failure groups, so it cannot also go to the top.
	nav.PageDown = key.NewBinding(key.WithKeys("pgdown", "ctrl+f"), key.WithHelp("pgdn", "page down"))
	nav.Top = key.NewBinding(key.WithKeys("home"), key.WithHelp("home", "top"))
	return KeyMap{
		Nav:           nav,
		Select:        key.NewBinding(key.WithKeys(" "), key.WithHelp("space", "select")),
		SelectAll:     keys.New("*", "select all matching"),
		Filter:        keys.New("/", "filter"),
		Inspect:       keys.New("enter", "inspect"),
		Replay:        keys.New("r", "replay"),
		Quarantine:    keys.New("Q", "quarantine"),
		ReplayAll:     keys.New("ctrl+r", "replay whole queue"),
		QuarantineAll: keys.New("ctrl+q", "quarantine whole queue"),
		NextPage:      keys.New("n", "next page"),
		Reopen:        keys.New("R", "reopen session"),
		Override:      keys.New("O", "browse anyway"),
		Scan:          keys.New("S", "whole-queue stats"),
		Export:        keys.New("E", "export to a file"),
		Groups:        keys.New("g", "failure groups"),
		ShowGroup:     keys.New("enter", "list the group's messages"),
		CloseGroups:   keys.New("esc", "back to the messages", "g"),
		Apply:         keys.New("enter", "apply filter"),
		Cancel:        keys.New("esc", "cancel"),
		Stop:          keys.New("x", "cancel the operation"),
		Canary:        keys.New("tab", "canary size"),
		Pace:          keys.New("ctrl+p", "consumers' pace"),
		readOnly:      readOnly,
	}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding {
	b := []key.Binding{k.Select, k.SelectAll, k.Filter, k.Inspect}
	if k.filtered {
		b = append([]key.Binding{keys.New("esc", "clear the filter")}, b...)
	}
	if !k.readOnly {
		b = append(b, k.Replay, k.Quarantine)
	}
	b = append(b, k.NextPage, k.Scan, k.Groups)
	if k.halted {
		b = append(b, k.Reopen)
	}
	return b
}

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	act := []key.Binding{k.Inspect, k.NextPage, k.Scan, k.Groups, k.Export, k.Reopen, k.Override}
	if !k.readOnly {
		act = append([]key.Binding{k.Replay, k.Quarantine, k.ReplayAll, k.QuarantineAll}, act...)
	}
	return [][]key.Binding{
		k.Nav.Bindings(),
		{k.Select, k.SelectAll, k.Filter},
		act,
	}
}

// busyKeys are the bindings while an operation is planned (esc drops
// the plan) or runs (x stops it): the action keys are not offered then.
type busyKeys struct {
	nav  keys.Nav
	stop key.Binding
}

func (k busyKeys) ShortHelp() []key.Binding { return []key.Binding{k.stop, k.nav.Up, k.nav.Down} }
func (k busyKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.stop}, k.nav.Bindings()}
}

// filterKeys are the bindings while the filter is being typed.
type filterKeys struct{ Apply, Cancel key.Binding }

func (k filterKeys) ShortHelp() []key.Binding  { return []key.Binding{k.Apply, k.Cancel} }
func (k filterKeys) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

// groupKeys are the bindings of the failure groups view.
type groupKeys struct {
	nav               keys.Nav
	show, close, scan key.Binding
}

func (k groupKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.show, k.close, k.scan, k.nav.Up, k.nav.Down}
}
func (k groupKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.show, k.close, k.scan}, k.nav.Bindings()}
}

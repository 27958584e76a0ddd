package ui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

func pressAll(m Model, keys ...string) (Model, tea.Cmd) {
	var cmd tea.Cmd
	for _, k := range keys {
		var msg tea.KeyMsg
		switch k {
		case "enter":
			msg = tea.KeyMsg{Type: tea.KeyEnter}
		case "esc":
			msg = tea.KeyMsg{Type: tea.KeyEsc}
		case "down":
			msg = tea.KeyMsg{Type: tea.KeyDown}
		default:
			msg = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
		}
		next, c := m.Update(msg)
		m, cmd = next.(Model), c
	}
	return m, cmd
}

func TestTheContextSwitcherListsTheContextsAndSwitchesOnEnter(t *testing.T) {
	m := newRoot(Options{Context: "prod-eu", Environment: "prod", Contexts: []ContextChoice{
		{Name: "prod-eu", Environment: "prod", Current: true}, {Name: "staging\x1b[2J", Environment: "staging"},
	}})
	m, _ = pressAll(m, "C")
	v := m.View()
	if !strings.Contains(v, "Switch context") || !strings.Contains(v, "prod-eu (prod) · current") || !strings.Contains(v, "(staging)") || strings.Contains(v, "\x1b[2J") {
		t.Fatalf("the switcher does not list the contexts (safely):\n%s", v)
	}
	// enter on the current one only closes the list.
	m, cmd := pressAll(m, "enter")
	if m.picker.open || m.SwitchTo() != "" || cmd != nil {
		t.Fatalf("enter on the current context: open %v, switch to %q", m.picker.open, m.SwitchTo())
	}
	// esc keeps the context.
	m, _ = pressAll(m, "C", "down", "esc")
	if m.picker.open || m.SwitchTo() != "" {
		t.Fatal("esc switched")
	}
	m, cmd = pressAll(m, "C", "down", "enter")
	if m.SwitchTo() != "staging\x1b[2J" || cmd == nil {
		t.Fatalf("switch to %q, cmd %v; want staging and the program to end for it", m.SwitchTo(), cmd)
	}
}

func TestTheContextSwitcherSaysWhenThereIsNoOther(t *testing.T) {
	m := newRoot(Options{Context: "local", Contexts: []ContextChoice{{Name: "local", Current: true}}})
	m, _ = pressAll(m, "C")
	if m.picker.open || !strings.Contains(m.View(), "no other context to switch to") {
		t.Fatalf("one context: %s", m.View())
	}
}

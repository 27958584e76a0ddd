package ui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/warrenops/warren/ui/styles"
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
	// Its help line is its own keys, not the screen's under it.
	if last := v[strings.LastIndex(v, "\n")+1:]; !strings.Contains(last, "enter switch") || strings.Contains(last, "open queue") {
		t.Fatalf("the help line under the switcher: %q", last)
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

// Above the contexts, the switcher offers the fleet view: chosen, the
// dashboard ends for it, and no context is switched to.
func TestTheContextSwitcherLeadsBackToTheFleet(t *testing.T) {
	m := newRoot(Options{Context: "prod-us", Environment: "prod", Contexts: []ContextChoice{
		{Name: "prod-eu", Environment: "prod"}, {Name: "prod-us", Environment: "prod", Current: true}, {Name: "staging", Environment: "staging"},
	}})
	m, _ = pressAll(m, "C")
	v := m.View()
	if !strings.Contains(v, "every context · the fleet view (3 contexts on one screen)") || !strings.Contains(v, "> prod-us (prod) · current") {
		t.Fatalf("the switcher does not offer the fleet above the contexts, the current one chosen:\n%s", v)
	}
	// Up past the first context, then further up, stays on the fleet.
	m, cmd := pressAll(m, "k", "k", "k", "enter")
	if !m.ToFleet() || m.SwitchTo() != "" || cmd == nil {
		t.Fatalf("enter on the fleet: to fleet %v, switch to %q, cmd %v; want the program to end for the fleet", m.ToFleet(), m.SwitchTo(), cmd)
	}
	// Down stops at the last context.
	m = newRoot(Options{Context: "prod-us", Contexts: []ContextChoice{{Name: "a"}, {Name: "b", Current: true}}})
	m, _ = pressAll(m, "C", "down", "down", "down", "enter")
	if m.ToFleet() || m.SwitchTo() != "" {
		t.Fatalf("down past the last context: to fleet %v, switch to %q", m.ToFleet(), m.SwitchTo())
	}
}

func TestTheContextSwitcherSaysWhenThereIsNoOther(t *testing.T) {
	m := newRoot(Options{Context: "local", Contexts: []ContextChoice{{Name: "local", Current: true}}})
	m, _ = pressAll(m, "C")
	if m.picker.open || !strings.Contains(m.View(), "no other context to switch to") {
		t.Fatalf("one context: %s", m.View())
	}
	m = newRoot(Options{Context: "local broker", NoConfig: true})
	m, _ = pressAll(m, "C")
	if m.picker.open || !strings.Contains(m.View(), "no config file is read") {
		t.Fatalf("no config: %s", m.View())
	}
}

// The switcher, driven as a program: C, the list drawn, down and enter,
// and the program ends with the context chosen.
func TestTheContextSwitcherEndsTheProgramOnTheChosenContext(t *testing.T) {
	st := styles.New(true)
	m := New(wired(Options{Context: "prod-eu", Environment: "prod", Refresh: time.Hour, Styles: &st, Now: fixedNow,
		Contexts: []ContextChoice{{Name: "prod-eu", Environment: "prod", Current: true}, {Name: "staging", Environment: "staging"}}},
		&fakeBroker{}, nil, nil))
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("C")})
	waitFor(t, tm, "staging (staging)")
	tm.Send(tea.KeyMsg{Type: tea.KeyDown})
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(Model)
	if final.SwitchTo() != "staging" {
		t.Fatalf("the program ended switching to %q, want staging", final.SwitchTo())
	}
}

// The command line (:) reaches the switcher by name, as k9s's :ctx
// does, and moves to a context named there at once.
func TestTheCommandLineOpensTheSwitcherAndSwitchesByName(t *testing.T) {
	contexts := []ContextChoice{{Name: "prod-eu", Environment: "prod", Current: true}, {Name: "prod-us", Environment: "prod"}, {Name: "staging", Environment: "staging"}}
	m := newRoot(Options{Context: "prod-eu", Environment: "prod", Contexts: contexts})
	m, _ = pressAll(m, ":")
	if v := m.View(); !strings.Contains(v, ":█") || !strings.Contains(v, "ctx NAME") {
		t.Fatalf("the command line is not shown with what it knows:\n%s", v)
	}
	m, _ = pressAll(m, "ctx", "enter")
	if !m.picker.open || m.command.open || !strings.Contains(m.View(), "Switch context") {
		t.Fatalf(":ctx did not open the switcher:\n%s", m.View())
	}
	m, _ = pressAll(m, "esc")

	// A name it does not know is said, with those it does; nothing moves.
	m, _ = pressAll(m, ":", "ctx", " ", "prod-ap", "enter")
	if m.SwitchTo() != "" || !strings.Contains(m.View(), `no context "prod-ap": the config has prod-eu, prod-us, staging`) {
		t.Fatalf(":ctx prod-ap: switch to %q\n%s", m.SwitchTo(), m.View())
	}
	// The one it is on stays.
	m, cmd := pressAll(m, ":", "ctx prod-eu", "enter")
	if m.SwitchTo() != "" || cmd != nil || !strings.Contains(m.View(), "already on context prod-eu") {
		t.Fatalf(":ctx prod-eu: switch to %q\n%s", m.SwitchTo(), m.View())
	}
	// An unknown command names those it knows; esc and backspace close.
	m, _ = pressAll(m, ":", "ctz", "enter")
	if !strings.Contains(m.View(), `unknown command "ctz"`) || m.command.open {
		t.Fatalf(":ctz\n%s", m.View())
	}
	m, _ = pressAll(m, ":", "ctx", "esc")
	if m.command.open || m.picker.open {
		t.Fatal("esc did not close the command line")
	}
	// tab completes a context's name as far as the names that fit agree.
	tab := func(m Model, typed, want string) Model {
		t.Helper()
		m, _ = pressAll(m, typed)
		next, _ := m.Update(tea.KeyMsg{Type: tea.KeyTab})
		m = next.(Model)
		if got := string(m.command.text); got != want {
			t.Fatalf("tab after %q gave %q, want %q", typed, got, want)
		}
		return m
	}
	m, _ = pressAll(m, ":")
	m = tab(m, "ctx pr", "ctx prod-")
	m, _ = pressAll(m, "esc", ":")
	m = tab(m, "ctx x", "ctx x")
	m, _ = pressAll(m, "esc", ":")
	m = tab(m, "ctx st", "ctx staging")
	m, cmd = pressAll(m, "enter")
	if m.SwitchTo() != "staging" || cmd == nil {
		t.Fatalf(":ctx staging: switch to %q, cmd %v; want staging and the program to end for it", m.SwitchTo(), cmd)
	}
	// :fleet ends the dashboard for the fleet view.
	m = newRoot(Options{Context: "prod-eu", Contexts: contexts})
	m, cmd = pressAll(m, ":", "fleet", "enter")
	if !m.ToFleet() || cmd == nil {
		t.Fatalf(":fleet: to fleet %v, cmd %v", m.ToFleet(), cmd)
	}
}

package ui

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/text/sanitize"
)

// ContextChoice is a config context the switcher offers.
type ContextChoice struct {
	Name        string
	Environment string
	Current     bool
}

// picker is the context switcher (C): the configured contexts, one
// chosen with enter; the program then ends and starts again on it
// (SwitchTo), which moves every screen and client at once.
type picker struct {
	open   bool
	cursor int
}

// SwitchTo is the context the operator chose to move to; "" when the
// dashboard ended for another reason.
func (m Model) SwitchTo() string { return m.switchTo }

// openPicker shows the contexts, the current one under the cursor.
func (m Model) openPicker() (tea.Model, tea.Cmd) {
	switch len(m.o.Contexts) {
	case 0:
		m.footer = footer{text: "no contexts to switch to: no config file is read (warren config init writes one)", isErr: true}
		return m, nil
	case 1:
		m.footer = footer{text: "no other context to switch to: the config defines one (warren config init --context NAME adds one)", isErr: true}
		return m, nil
	}
	m.picker = picker{open: true}
	for i, c := range m.o.Contexts {
		if c.Current {
			m.picker.cursor = i
		}
	}
	return m, nil
}

// pickerKey moves the cursor, switches on enter, closes on esc.
func (m Model) pickerKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	switch msg.String() {
	case "up", "k":
		m.picker.cursor = max(m.picker.cursor-1, 0)
	case "down", "j":
		m.picker.cursor = min(m.picker.cursor+1, len(m.o.Contexts)-1)
	case "esc", "C":
		m.picker.open = false
	case "enter":
		c := m.o.Contexts[m.picker.cursor]
		m.picker.open = false
		if c.Current {
			return m, nil
		}
		m.switchTo = c.Name
		return m.quit()
	}
	return m, nil
}

// pickerView lists the contexts.
func (m Model) pickerView() string {
	lines := []string{m.st.Title.Render("Switch context") + "  " + m.st.Muted.Render("↑/↓ choose · enter switches every screen to it · esc stays")}
	for i, c := range m.o.Contexts {
		line := sanitize.Text(c.Name)
		if c.Environment != "" {
			line += fmt.Sprintf(" (%s)", sanitize.Text(c.Environment))
		}
		if c.Current {
			line += " · current"
		}
		prefix := "  "
		if i == m.picker.cursor {
			prefix = "> "
			line = m.st.TableSelected.Render(line)
		} else if c.Environment == "prod" {
			line = m.st.Trouble.Render(line)
		}
		lines = append(lines, prefix+line)
	}
	return strings.Join(lines, "\n")
}

package ui

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/text/sanitize"
	"github.com/warrenops/warren/ui/overview"
)

// ContextChoice is a config context the switcher offers.
type ContextChoice struct {
	Name        string
	Environment string
	Current     bool
}

// picker is the context switcher (C): the configured contexts, one
// chosen with enter; the program then ends and starts again on it
// (SwitchTo), which moves every screen and client at once. Above them,
// the fleet view (every context on one screen, ToFleet): where an
// operator who opened this dashboard from it goes back to.
type picker struct {
	open bool
	// cursor is the row chosen: 0 the fleet, i+1 the context i.
	cursor int
}

// SwitchTo is the context the operator chose to move to; "" when the
// dashboard ended for another reason.
func (m Model) SwitchTo() string { return m.switchTo }

// ToFleet reports that the operator chose the fleet view.
func (m Model) ToFleet() bool { return m.toFleet }

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
			m.picker.cursor = i + 1
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
		m.picker.cursor = min(m.picker.cursor+1, len(m.o.Contexts))
	case "esc", "C":
		m.picker.open = false
	case "enter":
		m.picker.open = false
		if m.picker.cursor == 0 {
			m.toFleet = true
			return m.quit()
		}
		c := m.o.Contexts[m.picker.cursor-1]
		if c.Current {
			return m, nil
		}
		m.switchTo = c.Name
		return m.quit()
	}
	return m, nil
}

// pickerView lists the fleet view and the contexts.
func (m Model) pickerView() string {
	lines := []string{m.st.Title.Render("Switch context") + "  " + m.st.Muted.Render("↑/↓ choose · enter switches every screen to it · esc stays")}
	row := func(i int, line string) string {
		if i == m.picker.cursor {
			return "> " + m.st.TableSelected.Render(line)
		}
		return "  " + line
	}
	lines = append(lines, row(0, fmt.Sprintf("every context · the fleet view (%d contexts on one screen)", len(m.o.Contexts))))
	for i, c := range m.o.Contexts {
		line := sanitize.Text(c.Name)
		if c.Environment != "" {
			line += fmt.Sprintf(" (%s)", sanitize.Text(c.Environment))
		}
		if c.Current {
			line += " · current"
		}
		if i+1 != m.picker.cursor && c.Environment == "prod" {
			line = m.st.Trouble.Render(line)
		}
		lines = append(lines, row(i+1, line))
	}
	return strings.Join(lines, "\n")
}

// OverviewSettings are how the operator left the overview, for the
// dashboard built again for this context.
func (m Model) OverviewSettings() overview.Settings { return m.overview.Settings() }

// RestoreOverview arranges the overview of a dashboard not yet started
// as the operator left this context's last one.
func (m Model) RestoreOverview(s overview.Settings) { m.overview.Restore(s) }

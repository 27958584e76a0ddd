package ui

import (
	"fmt"
	"sort"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/warrenops/warren/text/sanitize"
	"github.com/warrenops/warren/ui/common"
)

// commandLine is the command line (:), the way k9s reaches a view by
// its name: `ctx` opens the context switcher, `ctx NAME` moves the
// dashboard to that context at once, `fleet` opens the fleet view,
// `audit`, `channels` and `help` their screens, `q` quits. It is a line
// of its own in place of the keys' help while it is open.
type commandLine struct {
	open bool
	text []rune
}

// commands are what the command line knows, as its hint lists them.
const commands = "ctx · ctx NAME · fleet · audit · channels · help · q"

// openCommand opens an empty command line.
func (m Model) openCommand() (tea.Model, tea.Cmd) {
	m.command = commandLine{open: true}
	return m, nil
}

// commandKey edits the line; enter runs it, esc closes it, tab
// completes a context's name.
func (m Model) commandKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	switch msg.Type {
	case tea.KeyEsc:
		m.command = commandLine{}
	case tea.KeyEnter:
		line := strings.TrimSpace(string(m.command.text))
		m.command = commandLine{}
		return m.runCommand(line)
	case tea.KeyBackspace:
		if n := len(m.command.text); n > 0 {
			m.command.text = m.command.text[:n-1]
		} else {
			m.command = commandLine{}
		}
	case tea.KeyCtrlU:
		m.command.text = nil
	case tea.KeyTab:
		m.command.text = []rune(m.complete(string(m.command.text)))
	case tea.KeySpace:
		m.command.text = append(m.command.text, ' ')
	case tea.KeyRunes:
		m.command.text = append(m.command.text, msg.Runes...)
	}
	return m, nil
}

// complete finishes a context's name after `ctx ` as far as every
// context that starts with what is typed agrees: the whole name when
// one alone does.
func (m Model) complete(line string) string {
	verb, arg, ok := strings.Cut(line, " ")
	if !ok || !isCtx(verb) {
		return line
	}
	arg = strings.TrimSpace(arg)
	common, found := "", false
	for _, c := range m.o.Contexts {
		if !strings.HasPrefix(c.Name, arg) {
			continue
		}
		if !found {
			common, found = c.Name, true
			continue
		}
		for !strings.HasPrefix(c.Name, common) {
			common = common[:len(common)-1]
		}
	}
	if !found || len(common) <= len(arg) {
		return line
	}
	return verb + " " + common
}

func isCtx(verb string) bool {
	switch verb {
	case "ctx", "context", "contexts":
		return true
	}
	return false
}

// runCommand carries out a line of the command line.
func (m Model) runCommand(line string) (tea.Model, tea.Cmd) {
	verb, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	switch {
	case line == "":
		return m, nil
	case isCtx(verb) && arg == "":
		return m.openPicker()
	case isCtx(verb):
		return m.switchContext(arg)
	case verb == "fleet" && arg == "":
		if len(m.o.Contexts) == 0 {
			return m.fail(fmt.Errorf("no fleet to show: no config file is read (warren config init writes one)"))
		}
		m.toFleet = true
		return m.quit()
	case verb == "audit" && arg == "":
		return m, func() tea.Msg { return common.OpenAuditMsg{} }
	case verb == "channels" && arg == "":
		return m.openChannels()
	case verb == "help" && arg == "":
		m.showHelp = true
		return m, nil
	case (verb == "q" || verb == "quit") && arg == "":
		return m.quit()
	}
	return m.fail(fmt.Errorf("unknown command %q: the command line knows %s", sanitize.Text(line), commands))
}

// switchContext moves the dashboard to the context named, as the
// switcher's enter does.
func (m Model) switchContext(name string) (tea.Model, tea.Cmd) {
	names := make([]string, 0, len(m.o.Contexts))
	for _, c := range m.o.Contexts {
		if c.Name == name {
			if c.Current {
				m.footer = footer{text: "already on context " + sanitize.Text(name)}
				return m, nil
			}
			m.switchTo = c.Name
			return m.quit()
		}
		names = append(names, sanitize.Text(c.Name))
	}
	if len(names) == 0 {
		return m.fail(fmt.Errorf("no context %q: no config file is read (warren config init writes one)", sanitize.Text(name)))
	}
	sort.Strings(names)
	return m.fail(fmt.Errorf("no context %q: the config has %s", sanitize.Text(name), strings.Join(names, ", ")))
}

// commandView is the open command line and what it knows.
func (m Model) commandView() string {
	line := ":" + sanitize.Text(string(m.command.text)) + "█"
	hint := m.st.Muted.Render("  " + commands + " · enter runs · tab completes a context · esc closes")
	return ansi.Truncate(line+hint, m.width, "…")
}

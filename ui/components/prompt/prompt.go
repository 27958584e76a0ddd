// Package prompt is the one confirmation component every destructive
// action goes through. Its question states what will happen (counts and
// destinations); for risky cases it asks the operator to type a phrase,
// such as the queue name and the count, instead of pressing y.
package prompt

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/warrenops/warren/ui/styles"
)

// Question is what the prompt shows. Every string must already be
// sanitised by the caller: the prompt draws it as given.
type Question struct {
	Title string // e.g. "Replay"
	Text  string // the sentence with counts and destinations
	// Details are further lines: destinations grouped, bytes, rate.
	Details []string
	// Warning says what may go wrong, drawn in the trouble style.
	Warning string
	// TypeToConfirm, when set, must be typed exactly to confirm.
	TypeToConfirm string
	// Ask, when set, asks for a free-text answer (e.g. a reason) with this
	// label; an empty answer does not confirm. Default is the answer
	// offered, to edit or take with enter.
	Ask, Default string
	// Blocked, when set, is why the answer cannot go on as the question
	// stands (the run would be refused before anything moves): y and
	// enter show it instead of confirming, and the keys that change the
	// question, or esc, remain.
	Blocked string
}

// Decision is what the operator decided so far.
type Decision int

// Decisions.
const (
	Pending Decision = iota
	Confirmed
	Cancelled
)

// Model is one open prompt.
type Model struct {
	q     Question
	st    styles.Styles
	keys  KeyMap
	input textinput.Model
	width int
	hint  string
}

// New opens a prompt for q.
func New(q Question, st styles.Styles) Model {
	m := Model{q: q, st: st, keys: DefaultKeyMap()}
	if m.typing() {
		in := textinput.New()
		in.Prompt = "> "
		in.CharLimit = 256
		in.Cursor.SetMode(cursor.CursorStatic)
		in.Focus()
		if q.Default != "" {
			in.SetValue(q.Default)
			in.CursorEnd()
		}
		m.input = in
		m.keys.typing = true
	}
	return m
}

// typing reports whether the answer is typed: not while the question is
// blocked, which offers no answer but n (what was typed is kept for when
// it is no longer).
func (m Model) typing() bool {
	return m.q.Blocked == "" && (m.q.TypeToConfirm != "" || m.q.Ask != "")
}

// Capturing reports whether the prompt takes text, so keys such as q must
// not reach the root.
func (m Model) Capturing() bool { return m.q.TypeToConfirm != "" || m.q.Ask != "" }

// Value is the operator's typed answer.
func (m Model) Value() string { return strings.TrimSpace(m.input.Value()) }

// SetQuestion redraws the question, keeping what the operator typed:
// an answer that changes how the action goes (a canary, a pace) is
// shown at once.
func (m *Model) SetQuestion(q Question) {
	if m.hint != "" && m.hint == m.q.Blocked && q.Blocked != m.q.Blocked {
		m.hint = "" // what blocked the answer has changed
	}
	m.q = q
}

// Keys returns the bindings for the help view.
func (m Model) Keys() KeyMap { return m.keys }

// SetWidth sets the width the prompt box may use.
func (m *Model) SetWidth(w int) {
	m.width = w
	m.input.Width = max(w-8, 10)
}

// Update handles one message and reports the decision.
func (m Model) Update(msg tea.Msg) (Model, Decision, tea.Cmd) {
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return m, Pending, nil
	}
	switch {
	case key.Matches(k, m.keys.Cancel):
		return m, Cancelled, nil
	case !m.typing() && key.Matches(k, m.keys.No):
		return m, Cancelled, nil
	case !m.typing() && key.Matches(k, m.keys.Yes):
		if m.q.Blocked != "" {
			m.hint = m.q.Blocked
			return m, Pending, nil
		}
		return m, Confirmed, nil
	case !m.typing() && key.Matches(k, m.keys.Confirm):
		// enter is no answer to a question of y or n: it is the key
		// that opens and refreshes everywhere else, and a habit must
		// not replay a DLQ.
		m.hint = "enter does not confirm here: press y to go on, n or esc to cancel"
		return m, Pending, nil
	case m.typing() && key.Matches(k, m.keys.Confirm):
		return m.submit()
	}
	if !m.typing() {
		return m, Pending, nil
	}
	m.hint = ""
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return m, Pending, cmd
}

func (m Model) submit() (Model, Decision, tea.Cmd) {
	v := m.Value()
	switch {
	case m.q.Blocked != "":
		m.hint = m.q.Blocked
		return m, Pending, nil
	case m.q.TypeToConfirm != "" && v != m.q.TypeToConfirm:
		m.hint = "does not match: type exactly " + quote(m.q.TypeToConfirm)
		return m, Pending, nil
	case m.q.Ask != "" && m.q.TypeToConfirm == "" && v == "":
		m.hint = m.q.Ask + " cannot be empty"
		return m, Pending, nil
	}
	return m, Confirmed, nil
}

// View draws the prompt as a bordered box.
func (m Model) View() string { return m.render(m.q.Details, "") }

// ViewWithin draws the prompt in at most maxHeight lines (none when 0):
// the details go first, from the last, said as cut; the question's
// text, warning and the line where the answer is typed stay. A box
// taller still keeps its end, where the answer is typed.
func (m Model) ViewWithin(maxHeight int) string {
	out := m.View()
	if maxHeight <= 0 || lipgloss.Height(out) <= maxHeight {
		return out
	}
	d := m.q.Details
	for keep := len(d) - 1; keep >= 0; keep-- {
		out = m.render(d[:keep], fmt.Sprintf("  … %d more %s: a taller terminal shows them", len(d)-keep, plural(len(d)-keep, "line", "lines")))
		if lipgloss.Height(out) <= maxHeight {
			return out
		}
	}
	// Still too tall: the box's top (the title, the question's first
	// line) and its end, where the answer is typed, stay; a line says
	// what is between.
	lines := strings.Split(out, "\n")
	if maxHeight < 6 {
		return strings.Join(lines[len(lines)-maxHeight:], "\n")
	}
	head := lines[:3]
	tail := lines[len(lines)-(maxHeight-4):]
	// The line saying so is drawn inside the box's sides, as wide.
	side := m.st.Border.BorderTop(false).BorderBottom(false)
	if m.width > 4 {
		side = side.Width(m.width - 2)
	}
	cut := side.Render(m.st.Muted.Render("  ⋮ cut: a taller terminal shows the whole question"))
	return strings.Join(append(append(head, cut), tail...), "\n")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// render draws the box with details and, when not "", a line saying
// what was cut.
func (m Model) render(details []string, cut string) string {
	var lines []string
	if m.q.Title != "" {
		lines = append(lines, m.st.Title.Render(m.q.Title))
	}
	lines = append(lines, m.q.Text)
	for _, d := range details {
		lines = append(lines, "  "+d)
	}
	if cut != "" {
		lines = append(lines, m.st.Muted.Render(cut))
	}
	if m.q.Warning != "" {
		lines = append(lines, m.st.Trouble.Render(m.q.Warning))
	}
	lines = append(lines, "")
	switch {
	case m.q.Blocked != "":
		// No field to type in: a run it would refuse is not offered.
		lines = append(lines, "Cannot proceed as it stands: "+m.q.Blocked+" (n or esc cancels)")
	case m.q.TypeToConfirm != "":
		lines = append(lines, "To confirm, type "+m.st.Value.Bold(true).Render(quote(m.q.TypeToConfirm))+" and press enter (esc cancels):")
		lines = append(lines, m.input.View())
	case m.q.Ask != "":
		lines = append(lines, m.q.Ask+" (enter to continue, esc cancels):")
		lines = append(lines, m.input.View())
	default:
		lines = append(lines, "Proceed? (y goes on, n or esc cancels)")
	}
	if m.hint != "" && (m.hint != m.q.Blocked || m.typing()) {
		lines = append(lines, m.st.Warn.Render(m.hint))
	}
	box := m.st.Border
	if m.width > 4 {
		box = box.Width(m.width - 2)
	}
	return box.Render(lipgloss.JoinVertical(lipgloss.Left, lines...))
}

func quote(s string) string { return "\"" + s + "\"" }

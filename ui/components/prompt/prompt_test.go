package prompt

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/warrenops/warren/ui/styles"
)

func keys(s string) []tea.Msg {
	var out []tea.Msg
	for _, r := range s {
		out = append(out, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
	return out
}

var (
	enter = tea.KeyMsg{Type: tea.KeyEnter}
	esc   = tea.KeyMsg{Type: tea.KeyEsc}
)

func TestDecisions(t *testing.T) {
	plain := Question{Title: "Replay", Text: "Replay 3 messages?"}
	typed := Question{Title: "Replay", Text: "Replay 300 messages?", TypeToConfirm: "orders.dlq 300"}
	ask := Question{Title: "Quarantine", Text: "Why?", Ask: "Reason"}
	blocked, typedBlocked := plain, typed
	blocked.Blocked, typedBlocked.Blocked = "change the pace first (ctrl+p)", "change the canary first (tab)"
	tests := []struct {
		name  string
		q     Question
		input []tea.Msg
		want  Decision
		value string
		hint  string
	}{
		{name: "y confirms a plain question", q: plain, input: keys("y"), want: Confirmed},
		{name: "enter does not confirm a plain question and says so", q: plain, input: []tea.Msg{enter}, want: Pending, hint: "enter does not confirm here: press y"},
		{name: "y after a stray enter confirms", q: plain, input: append([]tea.Msg{enter}, keys("y")...), want: Confirmed},
		{name: "n cancels a plain question", q: plain, input: keys("n"), want: Cancelled},
		{name: "esc cancels a plain question", q: plain, input: []tea.Msg{esc}, want: Cancelled},
		{name: "other keys leave a plain question pending", q: plain, input: keys("x"), want: Pending},
		{name: "y is only text when typing is required", q: typed, input: keys("y"), want: Pending, value: "y"},
		{name: "the exact phrase confirms", q: typed, input: append(keys("orders.dlq 300"), enter), want: Confirmed, value: "orders.dlq 300"},
		{name: "a wrong count does not confirm and says why", q: typed, input: append(keys("orders.dlq 30"), enter), want: Pending, hint: "does not match"},
		{name: "esc cancels while typing", q: typed, input: append(keys("orders"), esc), want: Cancelled},
		{name: "an empty answer does not confirm", q: ask, input: []tea.Msg{enter}, want: Pending, hint: "Reason cannot be empty"},
		{name: "an answer confirms and is kept", q: ask, input: append(keys("poison"), enter), want: Confirmed, value: "poison"},
		{name: "y does not confirm a blocked question, which says what to change", q: blocked, input: keys("y"), want: Pending, hint: "Cannot proceed as it stands: change the pace first (ctrl+p)"},
		{name: "esc cancels a blocked question", q: blocked, input: keys("yn"), want: Cancelled},
		{name: "the exact phrase does not confirm a blocked question", q: typedBlocked, input: append(keys("orders.dlq 300"), enter), want: Pending, hint: "change the canary first (tab)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(tt.q, styles.New(true))
			d := Pending
			for _, msg := range tt.input {
				m, d, _ = m.Update(msg)
				if d != Pending {
					break
				}
			}
			if d != tt.want {
				t.Fatalf("decision = %v, want %v", d, tt.want)
			}
			if tt.value != "" && m.Value() != tt.value {
				t.Errorf("value = %q, want %q", m.Value(), tt.value)
			}
			if tt.hint != "" && !strings.Contains(m.View(), tt.hint) {
				t.Errorf("view lacks %q:\n%s", tt.hint, m.View())
			}
		})
	}
}

// A question no longer blocked confirms again, and the hint that said
// what blocked it goes.
func TestAQuestionUnblockedConfirms(t *testing.T) {
	q := Question{Title: "Replay", Text: "Replay 3 messages?", Blocked: "change the pace first (ctrl+p)"}
	m := New(q, styles.New(true))
	m, d, _ := m.Update(keys("y")[0])
	if d != Pending {
		t.Fatalf("a blocked question: decision %v", d)
	}
	q.Blocked = ""
	m.SetQuestion(q)
	if v := m.View(); strings.Contains(v, "change the pace first") || !strings.Contains(v, "Proceed? (y goes on") {
		t.Errorf("the question unblocked still says what blocked it:\n%s", v)
	}
	if _, d, _ = m.Update(keys("y")[0]); d != Confirmed {
		t.Errorf("y on the unblocked question: decision %v, want confirmed", d)
	}
}

func TestViewStatesTheQuestionAndWhatToType(t *testing.T) {
	lipgloss.SetColorProfile(termenv.Ascii)
	m := New(Question{
		Title:         "Replay",
		Text:          "Replay 300 messages from orders.dlq to queue orders?",
		Details:       []string{"orders: 300"},
		Warning:       "prod context",
		TypeToConfirm: "orders.dlq 300",
	}, styles.New(true))
	m.SetWidth(80)
	v := m.View()
	for _, want := range []string{"Replay 300 messages from orders.dlq to queue orders?", "orders: 300", "prod context", `type "orders.dlq 300"`} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	if !m.Capturing() {
		t.Error("a type-to-confirm prompt must capture keys")
	}
	if New(Question{Text: "?"}, styles.New(true)).Capturing() {
		t.Error("a y/n prompt must not capture keys")
	}
}

// Within a height the box cannot reach even without its details, the
// title, the question's first line and the line where the answer is
// typed stay, and a line says what was cut between them.
func TestViewWithinKeepsTheQuestionsTopAndWhereTheAnswerIsTyped(t *testing.T) {
	lipgloss.SetColorProfile(termenv.Ascii)
	m := New(Question{
		Title:         "Replay",
		Text:          "Replay 300 messages from orders.dlq to queue orders?",
		Details:       []string{"orders: 300", "rate: unlimited", "canary: none"},
		Warning:       strings.Repeat("a long warning about the destination ", 12),
		TypeToConfirm: "orders.dlq 300",
	}, styles.New(true))
	m.SetWidth(60)
	if full := m.ViewWithin(0); full != m.View() {
		t.Fatal("ViewWithin(0) is not the whole view")
	}
	v := m.ViewWithin(10)
	lines := strings.Split(v, "\n")
	if len(lines) > 10 {
		t.Fatalf("%d lines within 10:\n%s", len(lines), v)
	}
	for _, want := range []string{"Replay 300 messages", "cut: a taller terminal shows the whole question", `type "orders.dlq 300"`} {
		if !strings.Contains(v, want) {
			t.Errorf("ViewWithin(10) lacks %q:\n%s", want, v)
		}
	}
	// The box keeps its sides on every line between its top and bottom.
	for i, l := range lines[1 : len(lines)-1] {
		if !strings.HasPrefix(l, "│") || !strings.HasSuffix(l, "│") || lipgloss.Width(l) != lipgloss.Width(lines[0]) {
			t.Errorf("line %d breaks the box: %q", i+1, l)
		}
	}
}
